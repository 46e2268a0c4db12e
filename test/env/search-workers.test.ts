import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotpotData } from './fixture.js';

/**
 * The worker pool runs from the build (its worker is a compiled script), so this test imports the
 * compiled modules of dist/ (`npm test` builds first) and a real index built into a temp dir.
 */
const dist = (p: string) => import(join(process.cwd(), 'dist', p));

type Pool = Awaited<ReturnType<typeof import('../../src/suites/search/search-workers.js').SearchWorkers.open>>;
let pool: Pool;
let index: import('../../src/search/open.js').SearchIndex;
let SearchEnvironmentDist: typeof import('../../src/suites/search/env.js').SearchEnvironment;
const dir = mkdtempSync(join(tmpdir(), 'sleuth-pool-'));

beforeAll(async () => {
  const { buildIndex, openIndex } = await dist('src/search/index.js');
  const { SearchWorkers } = await dist('src/suites/search/search-workers.js');
  SearchEnvironmentDist = (await dist('src/suites/search/env.js')).SearchEnvironment;
  const { chunks } = hotpotData(1);
  await buildIndex((async function* () { yield* chunks.slice(0, 1500); })(), join(dir, 'index'));
  index = await openIndex(join(dir, 'index'));
  pool = await SearchWorkers.open(join(dir, 'index'), index, { workers: 2 });
}, 60_000);

afterAll(async () => {
  await pool?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SearchWorkers', () => {
  it('answers searches in worker threads exactly as the index does, many at once', async () => {
    expect(pool.workers).toBe(2);
    const queries = Array.from({ length: 40 }, (_, i) => `${index.store.title(i * 30)} ${index.store.text(i * 30 + 1).split(' ').slice(0, 3).join(' ')}`);
    const pooled = await Promise.all(queries.map((q) => pool.search(q, 5)));
    expect(pooled).toEqual(queries.map((q) => index.search(q, 5)));
  });

  it('queues what the workers cannot hold yet, and answers every request, searches and greps mixed', async () => {
    const queries = Array.from({ length: 30 }, (_, i) => index.store.text(i * 40).split(' ').slice(2, 5).join(' '));
    const patterns = Array.from({ length: 10 }, (_, i) => `(?i)${index.store.text(i * 97).split(' ').filter((w) => /^[A-Za-z]{5,}$/.test(w))[0] ?? 'the'}`);
    const searches = queries.map((q) => pool.search(q, 5));
    const greps = patterns.map((p) => pool.grep(p, { k: 3 }));
    // Two workers hold two requests each; the other 36 wait in the pool's queue.
    expect(pool.queued).toBe(36);
    expect(await Promise.all(searches)).toEqual(queries.map((q) => index.search(q, 5)));
    expect(await Promise.all(greps)).toEqual(patterns.map((p) => index.grep(p, { k: 3 })));
    expect(pool.queued).toBe(0);
  });

  it('reads and checks ids on the calling thread', () => {
    const id = index.store.id(3);
    expect(pool.has(id)).toBe(true);
    expect(pool.read(id)).toEqual(index.read(id));
    expect(pool.has('nope')).toBe(false);
  });

  it('brings a bad query back as an InputError, which the environment shows as bad_query', async () => {
    const { InputError } = await dist('src/errors.js');
    await expect(pool.search('the of and', 5)).rejects.toBeInstanceOf(InputError);
    const ep = new SearchEnvironmentDist(pool).start({ id: 't', query: 'q', facts: [{ text: 'f', chunkIds: ['x'] }] });
    const r = await ep.call({ name: 'bm25_search', arguments: { query: 'the of and' } });
    expect(r).toMatchObject({ outcome: 'error', errorKind: 'bad_query' });
    const ok = await ep.call({ name: 'bm25_search', arguments: { query: index.store.title(0) } });
    expect(ok.chunkIds).toContain(index.store.id(0));
  });
});

describe('a run\'s environment over search workers (searchWorkers)', () => {
  it('searches through the pool when the config asks for workers, and stops them on close', async () => {
    const { loadTrainInputs } = await dist('src/train/start.js');
    const { parseTrainConfig } = await dist('src/train/config.js');
    const { SearchWorkers } = await dist('src/suites/search/search-workers.js');
    const inThread = await loadTrainInputs(parseTrainConfig({ tasks: 'default', trainLimit: 2, evalLimit: 2, steps: 1 }, 'test'));
    const pooled = await loadTrainInputs(parseTrainConfig({ tasks: 'default', trainLimit: 2, evalLimit: 2, steps: 1, searchWorkers: 2 }, 'test'));
    try {
      expect(inThread.env.backend).not.toBeInstanceOf(SearchWorkers);
      expect(pooled.env.backend).toBeInstanceOf(SearchWorkers);
      expect(pooled.env.backend.workers).toBe(2);
      const task = pooled.trainTasks[0];
      const call = { name: 'bm25_search', arguments: { query: task.query } };
      expect(await pooled.env.start(task).call(call)).toEqual(await inThread.env.start(task).call(call));
    } finally {
      await pooled.close();
      await inThread.close();
    }
    // A closed pool refuses at once (its stopped workers would never answer).
    await expect(pooled.env.backend.search('anything', 3)).rejects.toThrow(/search workers closed/);
  }, 60_000);
});
