import { describe, expect, it } from 'vitest';
import { PairChunks } from '../../src/search/buffers.js';

describe('PairChunks', () => {
  it('gives back every document\'s pairs in order across chunk boundaries, empty documents included', () => {
    const pairs = new PairChunks(8);
    const docs: [number, number][][] = [];
    let seed = 5;
    for (let doc = 0; doc < 200; doc++) {
      seed = (Math.imul(seed, 1103515245) + 12345) | 0;
      // 0..11 pairs: some documents have none, some more than a whole chunk.
      const n = (seed >>> 8) % 12;
      const mine = Array.from({ length: n }, (_, i): [number, number] => [doc * 100 + i, (i % 7) + 1]);
      const { terms, tfs, at } = pairs.reserve(n);
      mine.forEach(([t, f], i) => {
        terms[at + i] = t;
        tfs[at + i] = f;
      });
      pairs.commit(n);
      docs.push(mine);
    }
    expect(pairs.length).toBe(docs.reduce((s, d) => s + d.length, 0));
    const back: [number, number][][] = [];
    pairs.forEachDoc((doc, terms, tfs, from, to) => {
      expect(doc).toBe(back.length);
      back.push(Array.from({ length: to - from }, (_, i): [number, number] => [terms[from + i]!, tfs[from + i]!]));
    });
    expect(back).toEqual(docs);
  });
});
