import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildMusiqueTasks, hopsOf, splitByComponents } from '../../scripts/build-musique-tasks.js';
import { readChunks } from '../../src/corpus/read.js';
import { ensureCorpusIndex, openIndex } from '../../src/search/index.js';
import { coverageReport } from '../../src/tasks/check.js';
import { devTestHalves, splitSha256, withoutSplit } from '../../src/tasks/split.js';
import { readSplitTasks, shippedCorpusPaths, shippedTasksPath } from '../../src/tasks/store.js';
import type { Task } from '../../src/tasks/task.js';
import { unavailable } from '../unavailable.js';

/** The source data the set is built from: $SLEUTH_DATA_DIR, else ../shared/data beside this package. */
const SHARED = resolve(process.env['SLEUTH_DATA_DIR'] ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'data'));
const NO_SHARED = existsSync(join(SHARED, 'musique', 'dev200.jsonl')) ? undefined : unavailable(`the MuSiQue source data are not at ${SHARED}: set SLEUTH_DATA_DIR to the folder holding musique/`);
const tasks = readSplitTasks(shippedTasksPath('musique'));
const of = (split: string) => tasks.filter((t) => t.split === split);
const gold = (t: Task) => t.facts.flatMap((f) => f.chunkIds);
async function ids(path: string): Promise<string[]> {
  const out: string[] = [];
  for await (const c of readChunks(path, 'jsonl')) out.push(c.id);
  return out;
}

describe('the shipped MuSiQue task set', () => {
  it('holds multi-hop questions, one fact per hop in order, each with its gold decomposition', () => {
    expect(tasks.length).toBeGreaterThanOrEqual(300);
    for (const t of tasks) {
      const hops = hopsOf(t);
      expect(hops).toBeGreaterThanOrEqual(2);
      expect(t.facts).toHaveLength(hops);
      const d = t.meta?.['decomposition'] as { question: string; answer: string }[];
      expect(d).toHaveLength(hops);
      expect(t.facts.map((f) => f.isFinalAnswer === true)).toEqual(d.map((_, i) => i === hops - 1));
      // Each fact is its hop's question, the earlier answers filled in, and the hop's answer.
      d.forEach((h, i) => expect(t.facts[i]!.text).toBe(`${h.question} ${h.answer}`));
    }
  });

  it('has disjoint train, dev and test splits, test at least 100, and no gold paragraph of test is a gold paragraph of train from the dev questions', () => {
    expect(new Set(tasks.map((t) => t.split))).toEqual(new Set(['train', 'dev', 'test']));
    expect(of('test').length).toBeGreaterThanOrEqual(100);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
    // Every hop count is in every split.
    for (const split of ['train', 'dev', 'test']) expect(new Set(of(split).map(hopsOf))).toEqual(new Set([2, 3, 4]));
  });

  it("keeps the embedded default set's MuSiQue questions in the split they have there", () => {
    const defaults = readSplitTasks(shippedTasksPath('default')).filter((t) => t.meta?.['source'] === 'musique');
    const halves = devTestHalves(defaults.filter((t) => t.split === 'eval').map(withoutSplit));
    const expected = new Map(defaults.map((t) => [t.id, t.split]));
    for (const half of ['dev', 'test'] as const) for (const t of halves[half]) expected.set(t.id, half);
    const here = new Map(tasks.map((t) => [t.id, t.split]));
    expect(defaults.length).toBe(100);
    for (const [id, split] of expected) expect(here.get(id), id).toBe(split);
  });

  it('pools its paragraphs with the embedded corpus without repeating one, and every fact is in the pool', async () => {
    const [embedded, own] = await Promise.all(shippedCorpusPaths('musique').map(ids));
    const pool = new Set(embedded);
    expect(own!.length).toBeGreaterThan(1000);
    expect(own!.filter((id) => pool.has(id))).toEqual([]);
    expect(new Set(own).size).toBe(own!.length);
    for (const id of own!) pool.add(id);
    expect(coverageReport(tasks, (id) => pool.has(id)).uncoverableFacts).toBe(0);
    // The index over both files holds them all.
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-musique-index-'));
    const index = await openIndex(await ensureCorpusIndex(shippedCorpusPaths('musique'), join(dir, 'index')));
    expect(gold(tasks[0]!).every((id) => index.has(id))).toBe(true);
  });

  it('matches the split table of SPLITS.md, hash for hash', () => {
    const md = readFileSync(resolve('data/musique/SPLITS.md'), 'utf8');
    for (const split of ['train', 'dev', 'test']) {
      const row = md.split('\n').find((l) => l.startsWith(`| ${split} |`));
      expect(row, split).toContain(`| ${of(split).length} |`);
      expect(row).toContain(splitSha256(of(split).map(withoutSplit)));
    }
  });

  it('rebuilds from the source MuSiQue files to the same bytes', async (context) => {
    if (NO_SHARED) context.skip(NO_SHARED);
    const out = mkdtempSync(join(tmpdir(), 'sleuth-musique-build-'));
    await buildMusiqueTasks(SHARED, out);
    for (const f of ['tasks.jsonl.gz', 'corpus.jsonl.gz', 'SPLITS.md']) expect(readFileSync(join(out, f)).equals(readFileSync(resolve('data/musique', f))), f).toBe(true);
  });
});

describe('splitting by components', () => {
  const t = (id: string, chunks: string[]): Task => ({ id, query: id, facts: chunks.map((c) => ({ text: c, chunkIds: [c] })), meta: { hops: chunks.length } });

  it('keeps questions that share a gold paragraph in one split, stratified by hops, the same whatever the order', () => {
    const tasks = [t('a', ['p1', 'p2']), t('b', ['p2', 'p3']), t('c', ['p4', 'p5']), t('d', ['p6', 'p7']), t('e', ['p8', 'p9', 'p10']), t('f', ['p11', 'p12', 'p10'])];
    const options = { seed: 's', testFraction: 0.5, devFraction: 0 };
    const split = new Map(splitByComponents(tasks, options).map((x) => [x.id, x.split]));
    expect(split.get('a')).toBe(split.get('b'));
    expect(split.get('e')).toBe(split.get('f'));
    expect(new Map(splitByComponents([...tasks].reverse(), options).map((x) => [x.id, x.split]))).toEqual(split);
    // Two-hop: 4 questions in 3 components; the first components in seeded order fill half.
    expect(['a', 'c', 'd'].filter((id) => split.get(id) === 'test').length).toBeGreaterThanOrEqual(1);
    expect(new Set(['a', 'b', 'c', 'd'].map((id) => split.get(id)))).toEqual(new Set(['test', 'train']));
  });
});
