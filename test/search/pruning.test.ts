import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Chunk } from '../../src/corpus/chunk.js';
import { Analyzer, Bm25Scorer, bm25Idf, buildIndex, openIndex } from '../../src/search/index.js';
import { iterate, rng } from './bm25-reference.js';

const root = mkdtempSync(join(tmpdir(), 'sleuth-pruning-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * A random corpus over a Zipf vocabulary of `vocab` made-up words: the commonest are in most
 * documents (many blocks of postings), the rarest in a few. Every fifth document repeats an earlier
 * one under another id, so scores tie exactly and the tie rule decides.
 */
function corpus(n: number, vocab: number, seed: number): Chunk[] {
  const r = rng(seed);
  const word = () => `w${Math.floor(vocab * r() ** 3)}`;
  const chunks: Chunk[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 10 && i % 5 === 0) {
      const copy = chunks[Math.floor(r() * i)]!;
      chunks.push({ id: `d${i}`, title: copy.title, text: copy.text });
      continue;
    }
    const length = 2 + Math.floor(r() ** 2 * 120);
    chunks.push({ id: `d${i}`, title: word(), text: Array.from({ length }, word).join(' ') });
  }
  return chunks;
}

/**
 * Brute force with the engine's arithmetic: every document scored, each query term's weight
 * idf * (tf / (tf + norm)) added in query order from 0, ranked by score then document number.
 */
function bruteForce(chunks: Chunk[], analyzer: Analyzer, k1: number, b: number) {
  const docs = chunks.map((c) => {
    const tf = new Map<string, number>();
    const words = [...analyzer.terms(c.title), ...analyzer.terms(c.text)];
    for (const t of words) tf.set(t, (tf.get(t) ?? 0) + 1);
    return { length: words.length, tf };
  });
  const N = docs.length;
  const avgdl = docs.reduce((s, d) => s + d.length, 0) / N;
  const norms = docs.map((d) => k1 * (1 - b + (b * d.length) / avgdl));
  return (query: string, k: number) => {
    const terms = [...new Set(analyzer.terms(query))];
    const idfs = terms.map((t) => bm25Idf(N, docs.filter((d) => d.tf.has(t)).length));
    const scored = docs.map((d, doc) => {
      let score = 0;
      terms.forEach((t, i) => {
        const tf = d.tf.get(t);
        if (tf !== undefined) score += idfs[i]! * (tf / (tf + norms[doc]!));
      });
      return { doc, score };
    });
    return scored.filter((s) => s.score > 0).sort((x, y) => y.score - x.score || x.doc - y.doc).slice(0, k);
  };
}

describe('block-max MaxScore', () => {
  for (const [seed, n, vocab, k1, b] of [[1, 3000, 400, 1.5, 0.75], [2, 6000, 150, 1.2, 0.75], [3, 2500, 2000, 0.9, 0.4], [4, 4000, 60, 1.5, 1], [5, 5000, 800, 2, 0.2]] as const) {
    it(`gives the top k of brute force, scores and ties to the bit (seed ${seed}: ${n} documents, ${vocab} words)`, async () => {
      const chunks = corpus(n, vocab, seed);
      const dir = join(root, `ix${seed}`);
      await buildIndex(iterate(chunks), dir, { k1, b });
      const index = await openIndex(dir);
      expect(index.scorer.usesKernel, 'bm25.wasm is built (npm run build)').toBe(true);
      const want = bruteForce(chunks, index.analyzer, k1, b);
      const pruned = new Bm25Scorer(index.scorer.p, undefined, true, 'pruned');
      const exhaustive = new Bm25Scorer(index.scorer.p, undefined, true, 'exhaustive');
      // Scoring segments of 700 documents: blocks that straddle a segment's end are resumed there.
      const windowed = new Bm25Scorer(index.scorer.p, 700, true, 'exhaustive');
      const typescript = new Bm25Scorer(index.scorer.p, 512, false);
      const r = rng(seed * 31);
      let ties = 0;
      for (let q = 0; q < 60; q++) {
        const words = Array.from({ length: 1 + Math.floor(r() * 7) }, () => `w${Math.floor(vocab * r() ** 1.5)}`);
        const query = words.join(' ');
        const ids = index.analyze(query).termIds;
        for (const k of [1, 10, 100]) {
          const expected = want(query, k);
          const got = pruned.topK(ids, k);
          expect(got, `query "${query}" k=${k}`).toEqual(expected);
          expect(exhaustive.topK(ids, k), `query "${query}" k=${k}, exhaustive`).toEqual(expected);
          expect(windowed.topK(ids, k), `query "${query}" k=${k}, exhaustive in segments of 700`).toEqual(expected);
          expect(typescript.topK(ids, k), `query "${query}" k=${k}, TypeScript`).toEqual(expected);
          expect(index.searchDocs(query, k), `query "${query}" k=${k}, auto`).toEqual(expected);
          for (let i = 1; i < got.length; i++) if (got[i]!.score === got[i - 1]!.score) ties++;
        }
      }
      // The repeated documents made exact ties, which the tie rule ordered.
      expect(ties).toBeGreaterThan(20);
      index.close();
    });
  }

  it('keeps to a floor (a segment after others): only documents above it, exactly', async () => {
    const chunks = corpus(3000, 300, 9);
    const dir = join(root, 'floor');
    await buildIndex(iterate(chunks), dir);
    const index = await openIndex(dir);
    const pruned = new Bm25Scorer(index.scorer.p, undefined, true, 'pruned');
    const exhaustive = new Bm25Scorer(index.scorer.p, undefined, true, 'exhaustive');
    const r = rng(4);
    for (let q = 0; q < 60; q++) {
      const ids = index.analyze(Array.from({ length: 1 + Math.floor(r() * 5) }, () => `w${Math.floor(300 * r() ** 1.5)}`).join(' ')).termIds;
      const all = exhaustive.topK(ids, 200);
      if (all.length < 20) continue;
      const floor = all[Math.floor(r() * all.length)]!.score;
      for (const k of [1, 10, 100]) {
        const want = all.filter((h) => h.score > floor).slice(0, k);
        expect(pruned.topK(ids, k, { floor }), `k=${k} floor ${floor}`).toEqual(want);
        expect(exhaustive.topK(ids, k, { floor }), `k=${k} floor ${floor}`).toEqual(want);
      }
    }
    index.close();
  });
});
