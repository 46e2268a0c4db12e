import { beforeAll, describe, expect, it } from 'vitest';
import { CachedBackend } from '../../bench/search-cache.js';
import { SearchEnvironment, type SearchBackend } from '../../src/suites/search/env.js';
import { InputError } from '../../src/errors.js';
import type { GrepOptions } from '../../src/search/types.js';
import type { SearchIndex } from '../../src/search/index.js';
import { hotpotFixture } from './fixture.js';

let searcher: SearchIndex;
beforeAll(async () => {
  searcher = (await hotpotFixture(1)).searcher;
}, 60_000);

/** The fixture searcher, counting the calls that reach it; grep can be made to report the time cap. */
function counted(timedOut = false) {
  const calls: string[] = [];
  const backend: SearchBackend = {
    search: (q, k) => (calls.push(`search ${q} ${k}`), searcher.search(q, k)),
    grep: (p, o?: GrepOptions) => (calls.push(`grep ${p}`), { ...searcher.grep(p, o), timedOut }),
    read: (id) => searcher.read(id),
    has: (id) => searcher.has(id),
  };
  return { backend, calls };
}

describe('CachedBackend', () => {
  it('runs an identical search once, and keys on k', async () => {
    const { backend, calls } = counted();
    const cache = new CachedBackend(backend);
    const [a, b] = await Promise.all([cache.search('Shirley Temple', 5), cache.search('Shirley Temple', 5)]);
    expect(a).toEqual(searcher.search('Shirley Temple', 5));
    expect(b).toBe(a);
    await cache.search('Shirley Temple', 3);
    expect(calls).toEqual(['search Shirley Temple 5', 'search Shirley Temple 3']);
    expect([cache.hits, cache.misses]).toEqual([1, 2]);
  });

  it('does not keep failures or timed-out greps', async () => {
    const { backend, calls } = counted(true);
    const cache = new CachedBackend(backend);
    await expect(cache.search('of the', 5)).rejects.toBeInstanceOf(InputError);
    await expect(cache.search('of the', 5)).rejects.toBeInstanceOf(InputError);
    await cache.grep('Temple', { k: 2 });
    await new Promise((r) => setImmediate(r));
    await cache.grep('Temple', { k: 2 });
    expect(calls).toEqual(['search of the 5', 'search of the 5', 'grep Temple', 'grep Temple']);
  });

  it('evicts the least recently used entry past its capacity', async () => {
    const { backend, calls } = counted();
    const cache = new CachedBackend(backend, 2);
    await cache.search('Shirley', 1);
    await cache.search('Temple', 1);
    await cache.search('Shirley', 1); // now Temple is the oldest
    await cache.search('Corliss', 1); // evicts Temple
    await cache.search('Shirley', 1);
    await cache.search('Temple', 1);
    expect(calls).toEqual(['search Shirley 1', 'search Temple 1', 'search Corliss 1', 'search Temple 1']);
  });

  it('serves the environment: results and bad-query errors are the same as without it', async () => {
    const task = { id: 't', query: 'q', facts: [{ text: 'f', chunkIds: ['x'] }] };
    const plain = new SearchEnvironment(searcher).start(task);
    const cached = new SearchEnvironment(new CachedBackend(searcher)).start(task);
    for (const args of [{ query: 'Shirley Temple' }, { query: 'Shirley Temple' }, { query: 'the' }]) {
      expect(await cached.call({ name: 'bm25_search', arguments: args })).toEqual(await plain.call({ name: 'bm25_search', arguments: args }));
    }
  });
});
