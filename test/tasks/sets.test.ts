import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { openIndex } from '../../src/search/index.js';
import { importTaskSet } from '../../src/tasks/import.js';
import { listTaskSetNames, loadTaskSet, readTaskSet, taskSetDir, type TaskSet } from '../../src/tasks/registry.js';
import { sampleTasks, splitSha256, splitTasks } from '../../src/tasks/split.js';
import { buildSubset } from '../../src/tasks/subset.js';
import type { Task } from '../../src/tasks/task.js';
import { writeHarness1Download } from './harness1-fixture.js';

const FIX = 'test/fixtures/tasks';
const tmp = () => mkdtempSync(join(tmpdir(), 'sleuth-sets-'));

async function rejects(promise: Promise<unknown>, ...parts: string[]): Promise<void> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(InputError);
  for (const part of parts) expect((err as Error).message).toContain(part);
}

describe('splits', () => {
  const task = (id: string, source: string): Task => ({ id, query: `q ${id}`, facts: [{ text: 'f', chunkIds: [`c-${id}`] }], meta: { source } });
  const tasks = [...Array.from({ length: 50 }, (_, i) => task(`a${i}`, 'a')), ...Array.from({ length: 10 }, (_, i) => task(`b${i}`, 'b'))];

  it('holds out the same share of every source, by id alone, whatever the input order', () => {
    const split = splitTasks(tasks, { evalFraction: 0.2, seed: 's' });
    expect(split.filter((t) => t.split === 'eval' && t.meta!['source'] === 'a')).toHaveLength(10);
    expect(split.filter((t) => t.split === 'eval' && t.meta!['source'] === 'b')).toHaveLength(2);
    const shuffled = splitTasks([...tasks].reverse(), { evalFraction: 0.2, seed: 's' });
    const evalOf = (s: typeof split) => s.filter((t) => t.split === 'eval').map((t) => t.id).sort();
    expect(evalOf(shuffled)).toEqual(evalOf(split));
    expect(evalOf(splitTasks(tasks, { evalFraction: 0.2, seed: 'other' }))).not.toEqual(evalOf(split));
  });

  it('samples n tasks reproducibly and in proportion to the sources', () => {
    const a = sampleTasks(tasks, 12, 7);
    expect(a).toHaveLength(12);
    expect(a.filter((t) => t.meta!['source'] === 'b')).toHaveLength(2);
    expect(sampleTasks(tasks, 12, 7)).toEqual(a);
    expect(sampleTasks(tasks, 12, 8)).not.toEqual(a);
  });

  it('hashes a split so that any change to a task changes the hash', () => {
    const h = splitSha256(tasks);
    expect(splitSha256(structuredClone(tasks))).toBe(h);
    const changed = structuredClone(tasks);
    changed[3]!.facts[0]!.chunkIds = ['c-other'];
    expect(splitSha256(changed)).not.toBe(h);
    // key order does not matter: the canonical form fixes it
    const reordered = tasks.map((t) => ({ meta: t.meta, facts: t.facts, query: t.query, id: t.id }) as Task);
    expect(splitSha256(reordered)).toBe(h);
  });
});

describe('task sets on disk', () => {
  let home: string;
  let hotpot: TaskSet;

  beforeAll(async () => {
    home = tmp();
    await importTaskSet('hp', taskSetDir('hp', { home }), { format: 'hotpotqa', tasks: join(FIX, 'hotpotqa-ircot.jsonl'), evalFraction: 0.34 });
    hotpot = await loadTaskSet('hp', { home });
  });

  it('imports HotpotQA with its own paragraphs as the corpus, split, and loads back', async () => {
    expect(hotpot.splits).toEqual(['train', 'eval', 'dev', 'test']);
    expect(hotpot.tasks('train')).toHaveLength(2);
    expect(hotpot.tasks('eval')).toHaveLength(1);
    const ids = readFileSync(join(FIX, 'hotpotqa-ircot.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).question_id as string);
    expect(hotpot.tasks().map((t) => t.id)).toEqual(ids);
    const index = await openIndex(hotpot.indexDir);
    expect(index.size).toBe(30);
    for (const t of hotpot.tasks()) for (const f of t.facts) expect(index.has(f.chunkIds[0]!)).toBe(true);
    expect(listTaskSetNames({ home })).toContain('hp');
    const manifest = JSON.parse(readFileSync(join(home, 'tasks', 'hp', 'taskset.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: 'hp', counts: { train: 2, eval: 1 }, chunks: 30 });
    expect(manifest.sha256.eval).toBe(splitSha256(hotpot.tasks('eval')));
    expect(() => hotpot.tasks('holdout')).toThrow("has no split 'holdout'");
  });

  it('names the known sets when asked for an unknown one, and refuses to overwrite without force', async () => {
    await rejects(loadTaskSet('nope', { home }), "unknown task set 'nope'", 'default', 'hp');
    await rejects(importTaskSet('hp', taskSetDir('hp', { home }), { format: 'hotpotqa', tasks: join(FIX, 'hotpotqa-ircot.jsonl') }), 'already exists', '--force');
  });

  it('imports plain JSONL with its own splits; a fact missing from the corpus stops it and writes nothing', async () => {
    const corpus = join(tmp(), 'corpus.jsonl');
    writeFileSync(corpus, ['c-vienna', 'c-danube'].map((id) => JSON.stringify({ id, title: id, text: `text of ${id}` })).join('\n') + '\n');
    const dir = taskSetDir('own', { home });
    await rejects(importTaskSet('own', dir, { format: 'jsonl', tasks: join(FIX, 'tasks.jsonl'), corpus: [corpus] }), '1 of 3 facts', 'own-2', 'c-moby', '--allow-missing');
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(join(home, 'tasks')).filter((n) => n.includes('own'))).toEqual([]);
    const summary = await importTaskSet('own', dir, { format: 'jsonl', tasks: join(FIX, 'tasks.jsonl'), corpus: [corpus], allowMissing: true });
    expect(summary.counts).toEqual({ train: 1, eval: 1 });
    expect(summary.coverage.uncoverableFacts).toBe(1);
    // Loading it checks again: refused unless the caller allows the missing chunks too.
    await rejects(loadTaskSet('own', { home }), "task set 'own'", '1 of 3 facts');
    const own = await loadTaskSet('own', { home, allowMissing: true });
    expect(own.tasks('eval').map((t) => t.id)).toEqual(['own-2']);
    await rejects(importTaskSet('own2', taskSetDir('own2', { home }), { format: 'jsonl', tasks: join(FIX, 'tasks.jsonl') }), '--corpus');
  });

  it('imports a Harness-1 download: the RL rows over the SEC corpora', async () => {
    const download = writeHarness1Download(tmp());
    const summary = await importTaskSet('sec', taskSetDir('sec', { home }), { format: 'harness1', tasks: download });
    expect(summary.chunks).toBe(4);
    const sec = await loadTaskSet('sec', { home });
    expect(sec.tasks().map((t) => t.id).sort()).toEqual(['sec_train_0001', 'sec_train_0002']);
    const index = await openIndex(sec.indexDir);
    expect(index.read('0000320193-23-000106_1')?.text).toContain('iPhone net sales decreased');
  });

  it('imports HotpotQA fullwiki-style questions against a {title: [sentences]} corpus', async () => {
    const raw = JSON.parse(readFileSync(join(FIX, 'hotpotqa-original.json'), 'utf8')) as { context: [string, string[]][] }[];
    const corpus = Object.fromEntries(raw.flatMap((r) => r.context));
    raw[0]!.context = raw[0]!.context.filter(([title]) => title !== 'Alû');
    const dir = tmp();
    writeFileSync(join(dir, 'questions.json'), JSON.stringify(raw));
    writeFileSync(join(dir, 'corpus.json'), JSON.stringify(corpus));
    const summary = await importTaskSet('wiki', join(dir, 'set'), { format: 'hotpotqa', tasks: join(dir, 'questions.json'), corpus: [join(dir, 'corpus.json')] });
    expect(summary.chunks).toBe(Object.keys(corpus).length);
    expect(summary.coverage.uncoverableFacts).toBe(0);
    await rejects(importTaskSet('wiki2', join(dir, 'set2'), { format: 'hotpotqa', tasks: join(dir, 'questions.json') }), "'Alû'");
  });

  it('imports MuSiQue and loads it from a path as well as by name', async () => {
    const dir = join(tmp(), 'musique-set');
    await importTaskSet('mq', dir, { format: 'musique', tasks: join(FIX, 'musique.jsonl') });
    const set = await loadTaskSet(dir);
    expect(set.name).toBe('mq');
    expect(set.tasks().map((t) => t.facts.length).sort()).toEqual([2, 3, 4]);
    expect(readTaskSet(dir).manifest?.origin).toContain('import of musique');
  });

  it('builds a subset: seeded queries, all gold chunks plus D BM25 neighbours per query, its own index', async () => {
    const dir = taskSetDir('hp-small', { home });
    const summary = await buildSubset(hotpot, 'hp-small', dir, { train: 1, eval: 1, distractors: 3, mode: 'bm25', seed: 5 });
    expect(summary.counts).toEqual({ train: 1, eval: 1 });
    const small = await loadTaskSet('hp-small', { home });
    const chosen = small.tasks();
    const gold = new Set(chosen.flatMap((t) => t.facts.flatMap((f) => f.chunkIds)));
    expect(summary.goldChunks).toBe(gold.size);
    const index = await openIndex(small.indexDir);
    expect(index.size).toBe(gold.size + 6);
    // The distractors are the first BM25 hits in the source index that are not gold and not taken yet.
    const source = await openIndex(hotpot.indexDir);
    const keep = new Set(gold);
    for (const t of chosen) {
      let added = 0;
      for (const hit of source.search(t.query, 30)) {
        if (added === 3) break;
        if (keep.has(hit.id)) continue;
        keep.add(hit.id);
        added += 1;
      }
    }
    for (const id of keep) expect(index.has(id)).toBe(true);
    // Same seed, same subset; another seed may choose other tasks but never mixes the splits.
    const again = await buildSubset(hotpot, 'hp-small', join(tmp(), 'again'), { train: 1, eval: 1, distractors: 3, seed: 5 });
    expect(again.counts).toEqual(summary.counts);
    expect(readTaskSet(again.dir).tasks).toEqual(readTaskSet(dir).tasks);
    const evalIds = new Set(hotpot.tasks('eval').map((t) => t.id));
    expect(small.tasks('eval').every((t) => evalIds.has(t.id))).toBe(true);
    expect(small.tasks('train').some((t) => evalIds.has(t.id))).toBe(false);
  });

  it('builds a subset with random distractors, reproducibly', async () => {
    const a = await buildSubset(hotpot, 'r', join(tmp(), 'r1'), { train: 2, eval: 1, distractors: 4, mode: 'random', seed: 1 });
    const b = await buildSubset(hotpot, 'r', join(tmp(), 'r2'), { train: 2, eval: 1, distractors: 4, mode: 'random', seed: 1 });
    expect(a.distractorChunks).toBe(12);
    const ids = async (dir: string) => {
      const index = await openIndex(join(dir, 'index'));
      return Array.from({ length: index.size }, (_, i) => index.store.id(i)).sort();
    };
    expect(await ids(a.dir)).toEqual(await ids(b.dir));
    const c = await buildSubset(hotpot, 'r', join(tmp(), 'r3'), { train: 2, eval: 1, distractors: 4, mode: 'random', seed: 2 });
    expect(await ids(c.dir)).not.toEqual(await ids(a.dir));
  });

  it('refuses more queries than a split has, and an existing destination without force', async () => {
    await rejects(buildSubset(hotpot, 'x', join(tmp(), 'x'), { train: 5, eval: 1 }), '--train 5', 'only 2 train tasks');
    const dir = taskSetDir('hp-small', { home });
    await rejects(buildSubset(hotpot, 'hp-small', dir, { train: 1, eval: 0 }), 'already exists');
    const replaced = await buildSubset(hotpot, 'hp-small', dir, { train: 2, eval: 0, force: true });
    expect(replaced.counts).toEqual({ train: 2 });
    expect(readTaskSet('hp-small', { home }).tasks).toHaveLength(2);
  });
});
