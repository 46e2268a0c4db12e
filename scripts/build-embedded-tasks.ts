/**
 * Build the embedded default task set: the HotpotQA dev-500 (IRCoT layout) and MuSiQue-100
 * questions, split deterministically into train and eval, written to data/embedded/tasks.jsonl.gz
 * with the sha256 of each split in data/embedded/SPLITS.md.
 *
 *   node dist/scripts/build-embedded-tasks.js [--data DIR] [--out DIR]
 *
 * --data is the shared data folder (default ../shared/data from the package root). Every fact's
 * chunk id is checked against the embedded corpus (the union of the same files' paragraphs and the
 * HotpotQA train-100 corpus, and data/embedded/corpus.jsonl.gz when it has been built).
 */
import { existsSync, writeFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { coverageReport, finishTasks, requireCoverage } from '../src/tasks/check.js';
import { loadHotpotQA, readHotpotQACorpusByTitle } from '../src/tasks/loaders/hotpotqa.js';
import { loadMusique } from '../src/tasks/loaders/musique.js';
import { paragraphChunk } from '../src/tasks/loaders/paragraph.js';
import { readRecords } from '../src/tasks/records.js';
import { DEV_TEST_SEED, devTestHalves, splitSha256, splitTasks, taskSource, type SplitTask } from '../src/tasks/split.js';
import type { Task } from '../src/tasks/task.js';
import { packageRoot, writeSplitTasks } from '../src/tasks/store.js';

/** Changing this (or the fraction) moves tasks between splits: the hashes in SPLITS.md will show it. */
export const DEFAULT_SPLIT = { seed: 'sleuth-default-v1', evalFraction: 0.2 } as const;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { data: { type: 'string' }, out: { type: 'string' } } });
  const data = resolve(values.data ?? join(packageRoot(), '..', 'shared', 'data'));
  const out = resolve(values.out ?? join(packageRoot(), 'data', 'embedded'));
  process.stdout.write(await buildEmbeddedTasks(data, out));
}

/** Write tasks.jsonl.gz and SPLITS.md into `out` from the shared data folder; returns SPLITS.md. */
export async function buildEmbeddedTasks(data: string, out: string): Promise<string> {

  const hotpot = await loadHotpotQA(join(data, 'hotpotqa', 'dev500.ircot.jsonl'));
  const musique = await loadMusique(join(data, 'musique', 'train100.json'));
  for (const s of musique.skipped) console.error(`skipped ${s.where}: ${s.reason}`);

  // The embedded corpus: the paragraphs of both question files plus the HotpotQA train-100 corpus.
  const corpus = new Set<string>([...hotpot.chunks, ...musique.chunks].map((c) => c.id));
  for (const [title, sentences] of readHotpotQACorpusByTitle(join(data, 'hotpotqa', 'train100_corpus.json'))) corpus.add(paragraphChunk(title, sentences).id);
  // The two sources' ids never collide today; finishTasks makes sure they never silently do.
  const tasks = finishTasks([...hotpot.tasks, ...musique.tasks].map((task) => ({ task, where: `${taskSource(task)} task ${task.id}` })));
  requireCoverage(coverageReport(tasks, (id) => corpus.has(id)), 'embedded tasks vs the union of their paragraphs', false);
  const shipped = join(out, 'corpus.jsonl.gz');
  if (existsSync(shipped)) {
    const ids = new Set(readRecords(shipped).map((r) => (r.value as { id: string }).id));
    requireCoverage(coverageReport(tasks, (id) => ids.has(id)), `embedded tasks vs ${shipped}`, false);
    console.error(`checked every fact against ${shipped} (${ids.size} chunks)`);
  }

  const split = splitTasks(tasks, DEFAULT_SPLIT);
  writeSplitTasks(join(out, 'tasks.jsonl.gz'), split);
  const md = splitsMarkdown(split);
  const mdPath = join(out, 'SPLITS.md');
  writeFileSync(`${mdPath}.tmp`, md);
  renameSync(`${mdPath}.tmp`, mdPath);
  return md;
}

/** The README-ready table of splits: counts per source and the sha256 of each split's canonical JSONL. */
export function splitsMarkdown(tasks: SplitTask[]): string {
  const sources = [...new Set(tasks.map(taskSource))].sort();
  const stored = (name: string) => tasks.filter((t) => t.split === name).map(({ split: _s, ...t }) => t);
  const halves = devTestHalves(stored('eval'));
  const splits: [string, Task[]][] = [['train', stored('train')], ['eval', stored('eval')], ['dev', halves.dev], ['test', halves.test]];
  const rows = splits.map(([name, inSplit]) => {
    const perSource = sources.map((s) => inSplit.filter((t) => taskSource(t) === s).length);
    return `| ${name} | ${inSplit.length} | ${perSource.join(' | ')} | \`${splitSha256(inSplit)}\` |`;
  });
  return [
    '# The embedded default task set: splits',
    '',
    `data/embedded/tasks.jsonl.gz holds ${tasks.length} tasks: the HotpotQA dev-500 questions (distractor setting,`,
    'IRCoT layout; CC BY-SA 4.0) and the MuSiQue-Ans train-100 questions (CC BY 4.0). Within each source,',
    `tasks are ordered by sha256("${DEFAULT_SPLIT.seed}" NUL task id) and the first ${DEFAULT_SPLIT.evalFraction * 100}% are held out for eval.`,
    `Eval is halved the same way, by sha256("${DEV_TEST_SEED}" NUL task id) within each source: \`dev\``,
    '(tuning, curves during training) and `test` (reported numbers only; nothing is tuned on it).',
    '',
    `| split | tasks | ${sources.join(' | ')} | sha256 of the split's canonical JSONL |`,
    `|---|---|${sources.map(() => '---|').join('')}---|`,
    ...rows,
    '',
    'The sha256 is taken over the tasks of the split in file order, one JSON object per line in the',
    'canonical key order (id, query, facts[text, chunkIds, isFinalAnswer], answers, meta with sorted',
    'keys), without the split field; `splitSha256` in src/tasks/split.ts computes it and',
    'test/tasks/embedded.test.ts checks this table against the shipped file. Rebuild both with',
    '`npx tsc -p tsconfig.json && node dist/scripts/build-embedded-tasks.js`.',
    '',
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]).endsWith(join('scripts', 'build-embedded-tasks.js'))) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 2;
  });
}
