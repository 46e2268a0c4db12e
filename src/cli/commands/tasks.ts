import { intFlag, numberFlag, parseFlags, printJson, type Command } from '../command.js';
import { CORPUS_FORMATS, type CorpusFormat } from '../../corpus/read.js';
import { InputError } from '../../errors.js';
import { importTaskSet, TASK_FORMATS, type TaskFormat } from '../../tasks/import.js';
import { isShippedTaskSet, SHIPPED_TASK_SETS, type ShippedTaskSetName } from '../../tasks/store.js';
import {
  checkNewTaskSetName,
  ensureShippedIndex,
  listTaskSetNames,
  loadTaskSet,
  readTaskSet,
  splitCounts,
  splitNames,
  taskSetCoverage,
  taskSetDir,
} from '../../tasks/registry.js';
import { splitHashes, withoutSplit } from '../../tasks/split.js';
import { buildSubset, type DistractorMode } from '../../tasks/subset.js';
import { terminalSafe } from '../safe-text.js';
import { SYNTHESIZE_USAGE, synthesizeCommand } from './tasks-synthesize.js';
import { describeDrops, type SynthesisCounts } from '../../tasks/synthesize/synthesize.js';

const USAGE = `usage:
  sleuth tasks list [--json]
      every task set (the embedded 'default' and those under .sleuth/tasks/) with its split counts
  sleuth tasks show NAME [--split S] [--json]
      counts of tasks, facts and chunks, facts per task, fact chunk ids missing from the index;
      --json prints the tasks (of the split) as a JSON array in the task format
  sleuth tasks subset --from NAME --train N --eval M [--distractors D] [--distractor-mode bm25|random]
                      [--seed S] [--allow-missing] --name NEW [--force]
      N train and M eval queries (seeded), over a reduced corpus: their gold chunks plus D
      distractors per query (default 20; BM25 neighbours of the query, or random), with its own index
  sleuth tasks import --format harness1|hotpotqa|musique|jsonl --tasks PATH [--corpus PATH]...
                      [--corpus-format F] [--stage rl] [--eval-fraction 0.2] [--seed S]
                      [--allow-missing] --name NEW [--force]
      a dataset in its published layout as a task set; the corpus defaults to the paragraphs in the
      task file (HotpotQA, MuSiQue) or the download's corpora/ (Harness-1); a fact none of whose
      chunk ids is in the corpus stops the import (exit 2) unless --allow-missing
  sleuth tasks import --format beir DIR --name NEW [--force]
      a BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/test.tsv ...): one task per judged
      query in the split its qrels file names, its relevant documents as facts, the graded
      judgements kept for \`sleuth ir-eval --tasks NEW --split test\`
${SYNTHESIZE_USAGE}

NAME is 'default', a name under .sleuth/tasks/ ($SLEUTH_HOME/tasks/), or a task-set directory.`;

export const command: Command = {
  usage: USAGE,
  async run(argv: string[]): Promise<number> {
    const [sub, ...rest] = argv;
    if (sub === undefined) throw new InputError(`missing subcommand\n\n${USAGE}`);
    if (!Object.hasOwn(SUBCOMMANDS, sub)) throw new InputError(`unknown subcommand '${sub}' (${Object.keys(SUBCOMMANDS).join(', ')})\n\n${USAGE}`);
    return SUBCOMMANDS[sub]!(rest);
  },
};

const SUBCOMMANDS: Record<string, (argv: string[]) => Promise<number>> = { list, show, subset, import: importCmd, synthesize: synthesizeCommand };

function noPositionals(positionals: string[], what: string): void {
  if (positionals.length > 0) throw new InputError(`tasks ${what}: unexpected argument '${positionals[0]}'`);
}

async function list(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } }, 'tasks list');
  noPositionals(positionals, 'list');
  const rows = [...Object.keys(SHIPPED_TASK_SETS), ...listTaskSetNames()].map((name) => {
    const set = readTaskSet(name);
    const origin = set.manifest?.origin ?? (isShippedTaskSet(name) ? SHIPPED_TASK_SETS[name].origin : set.location);
    const synthesis = set.manifest?.options['synthesis'] as SynthesisCounts | undefined;
    return { name, tasks: set.tasks.length, splits: splitCounts(set.tasks), origin, location: set.location, sha256: splitHashes(set.tasks), ...(synthesis ? { synthesis } : {}) };
  });
  if (values.json) {
    printJson(rows);
    return 0;
  }
  // Each set: its splits with sizes and the first 12 hex digits of each split's sha256, then its origin.
  for (const r of rows) {
    console.log(`${r.name}  ${r.tasks} tasks: ${Object.entries(r.splits).map(([split, n]) => `${split} ${n} (${r.sha256[split]!.slice(0, 12)})`).join(', ')}`);
    console.log(`  ${r.origin}`);
    // A synthesized set's provenance: what its chains became, and what each check dropped.
    if (r.synthesis) console.log(`  ${r.synthesis.kept} kept of ${r.synthesis.chains} chains; dropped: ${describeDrops(r.synthesis)}`);
  }
  return 0;
}

async function show(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { split: { type: 'string' }, json: { type: 'boolean' } }, 'tasks show');
  const [name, extra] = positionals;
  if (name === undefined) throw new InputError('tasks show: missing task set NAME');
  if (extra !== undefined) throw new InputError(`tasks show: unexpected argument '${extra}'`);
  const stored = readTaskSet(name);
  const splits = splitNames(stored.tasks);
  if (values.split !== undefined && !splits.includes(values.split)) {
    throw new InputError(`--split '${values.split}': task set '${stored.name}' has splits ${splits.join(', ')}`);
  }
  const tasks = stored.tasks.filter((t) => values.split === undefined || t.split === values.split);
  if (values.json) {
    printJson(tasks.map(withoutSplit));
    return 0;
  }
  const indexDir = stored.indexDir ?? (await ensureShippedIndex(stored.name as ShippedTaskSetName));
  const coverage = await taskSetCoverage(tasks, indexDir);
  const facts = tasks.map((t) => t.facts.length);
  const histogram = new Map<number, number>();
  for (const n of facts) histogram.set(n, (histogram.get(n) ?? 0) + 1);
  console.log(`task set ${stored.name}${values.split ? ` (split ${values.split})` : ''}: ${stored.location}`);
  console.log(`  splits:     ${Object.entries(splitCounts(stored.tasks)).map(([s, n]) => `${s} ${n}`).join(', ')}`);
  console.log(`  tasks:      ${tasks.length}`);
  console.log(`  facts:      ${coverage.facts} (${(coverage.facts / Math.max(1, tasks.length)).toFixed(2)} per task${facts.length ? `; min ${Math.min(...facts)}, max ${Math.max(...facts)}` : ''})`);
  console.log(`  per task:   ${[...histogram].sort((a, b) => a[0] - b[0]).map(([n, c]) => `${n} facts: ${c}`).join(', ')}`);
  console.log(`  chunks:     ${coverage.chunkIds} distinct fact chunk ids; index ${indexDir}`);
  console.log(`  missing:    ${coverage.missingChunkIds} chunk ids not in the index; ${coverage.uncoverableFacts} facts with none of their chunks`);
  for (const e of coverage.examples) console.log(`              e.g. ${e}`);
  if (stored.manifest) console.log(`  origin:     ${stored.manifest.origin} ${JSON.stringify(stored.manifest.options)}`);
  else if (isShippedTaskSet(stored.name)) console.log(`  origin:     ${SHIPPED_TASK_SETS[stored.name].origin}`);
  return 0;
}

async function subset(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    {
      from: { type: 'string' },
      train: { type: 'string' },
      eval: { type: 'string' },
      distractors: { type: 'string' },
      'distractor-mode': { type: 'string' },
      seed: { type: 'string' },
      name: { type: 'string' },
      'allow-missing': { type: 'boolean' },
      force: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    'tasks subset',
  );
  noPositionals(positionals, 'subset');
  if (values.from === undefined) throw new InputError('tasks subset: --from NAME is required');
  if (values.name === undefined) throw new InputError('tasks subset: --name NEW is required');
  if (values.train === undefined && values.eval === undefined) throw new InputError('tasks subset: give --train N and/or --eval M');
  checkNewTaskSetName(values.name);
  const mode = values['distractor-mode'] ?? 'bm25';
  if (mode !== 'bm25' && mode !== 'random') throw new InputError(`--distractor-mode must be bm25 or random, got '${mode}'`);
  const from = await loadTaskSet(values.from, { allowMissing: values['allow-missing'] ?? false });
  const dir = taskSetDir(values.name);
  progress(`building task set '${values.name}' from '${from.name}' ...`);
  const summary = await buildSubset(from, values.name, dir, {
    train: intFlag(values.train, 'train', 0),
    eval: intFlag(values.eval, 'eval', 0),
    distractors: intFlag(values.distractors, 'distractors', 20, 0, 100_000),
    mode: mode as DistractorMode,
    seed: values.seed ?? '0',
    force: values.force ?? false,
  });
  if (values.json) printJson(summary);
  else {
    console.log(`task set ${summary.name}: ${Object.entries(summary.counts).map(([s, n]) => `${s} ${n}`).join(', ')}`);
    console.log(`  corpus: ${summary.chunks} chunks (${summary.goldChunks} gold, ${summary.distractorChunks} distractors), in ${summary.dir}`);
  }
  return 0;
}

async function importCmd(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    {
      format: { type: 'string' },
      tasks: { type: 'string' },
      corpus: { type: 'string', multiple: true },
      'corpus-format': { type: 'string' },
      stage: { type: 'string' },
      'eval-fraction': { type: 'string' },
      seed: { type: 'string' },
      'allow-missing': { type: 'boolean' },
      name: { type: 'string' },
      force: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    'tasks import',
  );
  const format = values.format;
  // A BEIR dataset is one folder: `--format beir DIR` reads as the user thinks of it.
  if (format === 'beir' && values.tasks === undefined && positionals.length === 1) values.tasks = positionals.shift();
  noPositionals(positionals, 'import');
  if (format === undefined || !(TASK_FORMATS as readonly string[]).includes(format)) {
    throw new InputError(`--format must be one of ${TASK_FORMATS.join(', ')}${format === undefined ? '' : `, got '${format}'`}`);
  }
  if (values.tasks === undefined) throw new InputError(format === 'beir' ? 'tasks import: give the BEIR dataset folder (--format beir DIR)' : 'tasks import: --tasks PATH is required');
  if (values.name === undefined) throw new InputError('tasks import: --name NEW is required');
  checkNewTaskSetName(values.name);
  const corpusFormat = values['corpus-format'];
  if (corpusFormat !== undefined && !(CORPUS_FORMATS as readonly string[]).includes(corpusFormat)) {
    throw new InputError(`--corpus-format must be one of ${CORPUS_FORMATS.join(', ')}, got '${corpusFormat}'`);
  }
  const evalFraction = numberFlag(values['eval-fraction'], 'eval-fraction', 0.2, 0, 1);
  progress(`importing ${format} tasks from ${values.tasks} as '${values.name}' ...`);
  const summary = await importTaskSet(values.name, taskSetDir(values.name), {
    format: format as TaskFormat,
    tasks: values.tasks,
    ...(values.corpus ? { corpus: values.corpus } : {}),
    ...(corpusFormat ? { corpusFormat: corpusFormat as CorpusFormat } : {}),
    ...(values.stage ? { stage: values.stage } : {}),
    evalFraction,
    seed: values.seed ?? 'sleuth-split-v1',
    allowMissing: values['allow-missing'] ?? false,
    force: values.force ?? false,
  });
  if (values.json) printJson(summary);
  else {
    console.log(`task set ${summary.name}: ${Object.entries(summary.counts).map(([s, n]) => `${s} ${n}`).join(', ')}; corpus ${summary.chunks} chunks, in ${summary.dir}`);
    if (summary.skipped.length > 0) console.log(`  skipped ${summary.skipped.length} records, e.g. ${summary.skipped[0]!.where}: ${summary.skipped[0]!.reason}`);
    if (summary.coverage.uncoverableFacts > 0) {
      console.log(`  warning: ${summary.coverage.uncoverableFacts} of ${summary.coverage.facts} facts have none of their chunks in the corpus, e.g. ${summary.coverage.examples.join('; ')}`);
    }
  }
  return 0;
}

function progress(message: string): void {
  process.stderr.write(`${terminalSafe(message)}\n`);
}
