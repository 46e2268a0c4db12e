import { describe, expect, it } from 'vitest';
import { PairChunks } from '../../src/search/buffers.js';

describe('PairChunks', () => {
  it('scatters every pair of a term range to its postings in document order, across chunk boundaries, empty documents included', () => {
    const T = 30;
    const pairs = new PairChunks(8);
    const postings: [number, number][][] = Array.from({ length: T }, () => []);
    let seed = 5;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) | 0) >>> 8;
    const N = 200;
    for (let doc = 0; doc < N; doc++) {
      // 0..11 distinct terms: some documents have none, some more than a whole chunk.
      const n = next() % 12;
      const mine = [...new Set(Array.from({ length: n }, () => next() % T))];
      const { terms, tfs, at } = pairs.reserve(mine.length);
      mine.forEach((t, i) => {
        const tf = (next() % 7) + 1;
        terms[at + i] = t;
        tfs[at + i] = tf;
        postings[t]!.push([doc, tf]);
      });
      pairs.commit(mine.length);
    }
    expect(pairs.length).toBe(postings.reduce((s, p) => s + p.length, 0));
    const norms = Float64Array.from({ length: N }, (_, d) => 0.5 + (d % 13) / 10);
    const maxTf = new Float64Array(T);
    // Three passes over term ranges, as the index build makes them.
    for (const [lo, hi] of [[0, 7], [7, 20], [20, 30]] as const) {
      const offsets = [0];
      for (let t = lo; t < hi; t++) offsets.push(offsets[offsets.length - 1]! + postings[t]!.length);
      const size = offsets[offsets.length - 1]!;
      const docs = new Uint32Array(size);
      const tfs = new Uint16Array(size);
      pairs.scatter(lo, hi - lo, Uint32Array.from(offsets.slice(0, -1)), docs, tfs, norms, maxTf);
      for (let t = lo; t < hi; t++) {
        const from = offsets[t - lo]!;
        const got = Array.from({ length: postings[t]!.length }, (_, i): [number, number] => [docs[from + i]!, tfs[from + i]!]);
        expect(got, `term ${t}`).toEqual(postings[t]);
        const best = Math.max(0, ...postings[t]!.map(([d, tf]) => tf / (tf + norms[d]!)));
        expect(maxTf[t], `term ${t}`).toBe(best);
      }
    }
  });
});
