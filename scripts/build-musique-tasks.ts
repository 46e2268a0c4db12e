/**
 * Build the shipped MuSiQue task set, data/musique/: the multi-hop environment where searching
 * well pays (a single search over the question reaches the first hop; the bridge entity of the next
 * hop is in that hop's paragraph, not in the question).
 *
 *   node dist/scripts/build-musique-tasks.js [--data DIR] [--extra FILE ...] [--out DIR]
 *
 * --data is the shared data folder (default ../shared/data next to the package). It reads MuSiQue-Ans
 * dev-200 (musique/dev200.jsonl) and train-100 (musique/train100.json), official layout, and any
 * --extra files of more MuSiQue-Ans *dev* records in the same layout. Questions whose record keeps
 * only some of its paragraphs (data/musique/sources/: 2-hop dev questions with their supporting
 * paragraphs only, and 11 train questions) join the training split only, and only when none of
 * their gold paragraphs is gold for a dev or test question. Every question keeps its
 * decomposition in meta (for the hop oracle and per-hop recall). Paragraphs are pooled with the
 * embedded default corpus (7,720 HotpotQA and MuSiQue paragraphs, which then act as distractors);
 * corpus.jsonl.gz holds only the paragraphs the default corpus lacks.
 *
 * Splits: the train-100 questions keep the split they have in the embedded default set (train, or
 * the dev/test half of its eval), so that no question crosses splits between the two sets. The dev
 * questions are grouped into components that share a gold paragraph (so that no test question's
 * gold paragraph is gold for a training question), stratified by hop count, ordered by
 * sha256(SEED NUL first id), and dealt TEST_FRACTION to test, DEV_FRACTION to dev, the rest to train.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { decodeHtmlEntities } from '../src/corpus/entities.js';
import { readChunks } from '../src/corpus/read.js';
import type { Chunk } from '../src/corpus/chunk.js';
import { coverageReport, requireCoverage } from '../src/tasks/check.js';
import { loadMusique } from '../src/tasks/loaders/musique.js';
import { devTestHalves, hopsOf, splitByComponents as splitComponents, splitSha256, withoutSplit, type ComponentSplitOptions, type SplitTask } from '../src/tasks/split.js';
import { packageRoot, readSplitTasks, shippedTasksPath, writeSplitTasks } from '../src/tasks/store.js';
import type { Task } from '../src/tasks/task.js';

export const MUSIQUE_SPLIT = { seed: 'sleuth-musique-v1', testFraction: 0.5, devFraction: 0.2 } as const;

export { hopsOf };

/** src/tasks/split.ts's splitByComponents with the shipped set's seed and fractions by default. */
export function splitByComponents(tasks: Task[], options: ComponentSplitOptions = MUSIQUE_SPLIT): SplitTask[] {
  return splitComponents(tasks, options);
}

/** Records in data/musique/sources/ that keep only some of their paragraphs: training questions only. */
export const TRAIN_ONLY_SOURCES = ['dev-supporting-only.jsonl.gz', 'train-11.jsonl.gz'] as const;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { data: { type: 'string' }, out: { type: 'string' }, extra: { type: 'string', multiple: true } } });
  const data = resolve(values.data ?? join(packageRoot(), '..', 'shared', 'data'));
  const out = resolve(values.out ?? join(packageRoot(), 'data', 'musique'));
  process.stdout.write(await buildMusiqueTasks(data, out, values.extra ?? []));
}

/** Write tasks.jsonl.gz, corpus.jsonl.gz, SPLITS.md and ATTRIBUTION.md into `out`; returns SPLITS.md. */
export async function buildMusiqueTasks(data: string, out: string, extra: string[] = []): Promise<string> {
  const embeddedIds = new Set<string>();
  for await (const c of readChunks(join(packageRoot(), 'data', 'embedded', 'corpus.jsonl.gz'), 'jsonl')) embeddedIds.add(c.id);

  // The train-100 questions: the split the embedded default set gives them.
  const defaults = readSplitTasks(shippedTasksPath('default')).filter((t) => t.meta?.['source'] === 'musique');
  const halves = devTestHalves(defaults.filter((t) => t.split === 'eval').map(withoutSplit));
  const defaultSplit = new Map<string, string>(defaults.map((t) => [t.id, t.split]));
  for (const half of ['dev', 'test'] as const) for (const t of halves[half]) defaultSplit.set(t.id, half);
  const train100 = await loadMusique(join(data, 'musique', 'train100.json'), { decomposition: true });
  const fromTrain: SplitTask[] = train100.tasks.map((t) => {
    const s = defaultSplit.get(t.id);
    if (s === undefined) throw new Error(`train-100 question ${t.id} is not in the embedded default set`);
    return { ...t, split: s };
  });

  // The dev questions (dev-200 and any extra dev files), their paragraphs pooled.
  const sources = [join(data, 'musique', 'dev200.jsonl'), ...extra.map((e) => resolve(e))];
  const devTasks: Task[] = [];
  const newChunks = new Map<string, Chunk>();
  const seen = new Set(fromTrain.map((t) => t.id));
  const perSource: string[] = [];
  for (const path of sources) {
    const loaded = await loadMusique(path, { decomposition: true });
    let added = 0;
    for (const t of loaded.tasks) {
      if (seen.has(t.id)) continue;
      seen.add(t.id);
      devTasks.push(t);
      added++;
    }
    for (const c of loaded.chunks) if (!embeddedIds.has(c.id) && !newChunks.has(c.id)) newChunks.set(c.id, c);
    perSource.push(`${path.startsWith(data) ? path.slice(data.length + 1) : path}: ${added} questions (${loaded.skipped.length} skipped)`);
  }
  const fromDev = splitByComponents(devTasks);

  // Training-only questions: their records lack the distractor paragraphs, so they are not scored on.
  const heldGold = new Set([...fromTrain, ...fromDev].filter((t) => t.split !== 'train').flatMap((t) => t.facts.flatMap((f) => f.chunkIds)));
  const trainOnly: SplitTask[] = [];
  let overlapping = 0;
  for (const path of TRAIN_ONLY_SOURCES.map((f) => join(packageRoot(), 'data', 'musique', 'sources', f))) {
    const loaded = await loadMusique(path, { decomposition: true });
    let added = 0;
    for (const t of loaded.tasks) {
      if (seen.has(t.id)) continue;
      seen.add(t.id);
      if (t.facts.some((f) => f.chunkIds.some((id) => heldGold.has(id)))) {
        overlapping++;
        continue;
      }
      trainOnly.push({ ...t, split: 'train' });
      added++;
    }
    for (const c of loaded.chunks) if (!embeddedIds.has(c.id) && !newChunks.has(c.id)) newChunks.set(c.id, c);
    perSource.push(`data/musique/sources/${path.split('/').pop()}: ${added} questions, training only (${loaded.skipped.length} skipped)`);
  }
  const tasks = [...fromTrain, ...fromDev, ...trainOnly];

  const pool = new Set([...embeddedIds, ...newChunks.keys()]);
  requireCoverage(coverageReport(tasks, (id) => pool.has(id)), 'MuSiQue tasks vs the pooled corpus', false);
  // No test or dev question may have a gold paragraph that is gold for a training question.
  const trainGold = new Set(tasks.filter((t) => t.split === 'train').flatMap((t) => t.facts.flatMap((f) => f.chunkIds)));
  const shared = tasks.filter((t) => t.split !== 'train' && t.facts.some((f) => f.chunkIds.some((id) => trainGold.has(id))));

  mkdirSync(out, { recursive: true });
  writeSplitTasks(join(out, 'tasks.jsonl.gz'), tasks);
  const sorted = [...newChunks.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const jsonl = sorted.map((c) => JSON.stringify({ id: c.id, title: decodeHtmlEntities(c.title), text: decodeHtmlEntities(c.text) })).join('\n') + '\n';
  writeAtomic(join(out, 'corpus.jsonl.gz'), gzipSync(Buffer.from(jsonl), { level: 9 }));
  const md = splitsMarkdown(tasks, { pooled: embeddedIds.size + sorted.length, added: sorted.length, sources: perSource, sharedGold: shared.length, overlapping });
  writeAtomic(join(out, 'SPLITS.md'), md);
  writeAtomic(join(out, 'ATTRIBUTION.md'), attribution(data, perSource, sorted.length));
  return md;
}

function writeAtomic(path: string, bytes: string | Buffer): void {
  writeFileSync(`${path}.tmp`, bytes);
  renameSync(`${path}.tmp`, path);
}

function splitsMarkdown(tasks: SplitTask[], o: { pooled: number; added: number; sources: string[]; sharedGold: number; overlapping: number }): string {
  const splits = ['train', 'dev', 'test'];
  const hopCounts = [...new Set(tasks.map(hopsOf))].sort();
  const rows = splits.map((s) => {
    const inSplit = tasks.filter((t) => t.split === s);
    return `| ${s} | ${inSplit.length} | ${hopCounts.map((h) => inSplit.filter((t) => hopsOf(t) === h).length).join(' | ')} | \`${splitSha256(inSplit.map(withoutSplit))}\` |`;
  });
  return [
    '# The shipped MuSiQue task set: splits',
    '',
    `data/musique/tasks.jsonl.gz holds ${tasks.length} MuSiQue-Ans questions (CC BY 4.0), each with its decomposition`,
    `(meta.decomposition) and one fact per hop, in hop order. Their paragraphs are pooled with the embedded`,
    `default corpus into one index of ${o.pooled} chunks (data/embedded/corpus.jsonl.gz plus the ${o.added} paragraphs in`,
    'data/musique/corpus.jsonl.gz): the HotpotQA paragraphs and the other questions\' paragraphs are distractors.',
    '',
    `Sources: ${o.sources.join('; ')}; musique/train100.json: 100 questions.`,
    '',
    'The train-100 questions keep their split in the embedded default set (train, or its eval\'s dev/test half),',
    'so no question crosses splits between the two sets. The dev questions are grouped into components that',
    `share a gold paragraph, stratified by hop count, ordered by sha256("${MUSIQUE_SPLIT.seed}" NUL first id), and dealt`,
    `${MUSIQUE_SPLIT.testFraction * 100}% to test, ${MUSIQUE_SPLIT.devFraction * 100}% to dev and the rest to train. Dev and test questions whose gold paragraph is also`,
    `gold for a training question: ${o.sharedGold}. Training-only questions left out because a gold paragraph of theirs is gold for`,
    `a dev or test question: ${o.overlapping}.`,
    '',
    `| split | tasks | ${hopCounts.map((h) => `${h}-hop`).join(' | ')} | sha256 of the split's canonical JSONL |`,
    `|---|---|${hopCounts.map(() => '---|').join('')}---|`,
    ...rows,
    '',
    'The sha256 is splitSha256 (src/tasks/split.ts) of the split\'s tasks in file order; test/tasks/musique.test.ts',
    'checks this table against the shipped file. Rebuild with',
    '`npx tsc -p tsconfig.json && node dist/scripts/build-musique-tasks.js`.',
    '',
  ].join('\n');
}

function attribution(data: string, sources: string[], added: number): string {
  const readme = existsSync(join(data, 'README.md')) ? readFileSync(join(data, 'README.md'), 'utf8') : '';
  const rows = readme.split('\n').filter((l) => l.startsWith('| musique/'));
  return [
    '# Attribution of the shipped MuSiQue task set',
    '',
    'data/musique/tasks.jsonl.gz and corpus.jsonl.gz are derived from MuSiQue-Ans, licensed CC BY 4.0:',
    '',
    '- MuSiQue: Harsh Trivedi, Niranjan Balasubramanian, Tushar Khot, Ashish Sabharwal. "MuSiQue: Multihop',
    '  Questions via Single-hop Question Composition", TACL 2022. https://github.com/StonyBrookNLP/musique — CC BY 4.0.',
    '',
    `corpus.jsonl.gz holds the ${added} paragraphs of these questions that data/embedded/corpus.jsonl.gz lacks (ids`,
    'contentChunkId(title, text) of each paragraph as published, HTML character references decoded). The index',
    'pools them with the embedded corpus, which holds HotpotQA paragraphs (CC BY-SA 4.0; see',
    'data/embedded/ATTRIBUTION.md), so the pooled corpus is distributed under CC BY-SA 4.0.',
    '',
    `Sources: ${sources.join('; ')}.`,
    '',
    ...(rows.length ? ['As listed in the source data README:', '', '| path | what | records | source | licence |', '|---|---|---|---|---|', ...rows, ''] : []),
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]).endsWith(join('scripts', 'build-musique-tasks.js'))) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 2;
  });
}
