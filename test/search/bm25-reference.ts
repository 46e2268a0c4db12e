/** Shared by the search tests: random corpora and an exhaustive BM25 reference to check rankings against. */
import { expect } from 'vitest';
import type { Chunk } from '../../src/corpus/chunk.js';
import type { Analyzer } from '../../src/search/index.js';

/** Deterministic PRNG (mulberry32), so a failing case can be replayed. */
export function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const VOCAB = ['river', 'mountain', 'film', 'actress', 'comedy', 'archer', 'kiss', 'tell', 'temple', 'shirley', 'protocol', 'chief',
  'ambassador', 'ghana', 'radio', 'program', 'golden', 'age', 'series', 'novel', 'author', 'prize', 'city', 'river', 'bridge', 'tower',
  'station', 'railway', 'album', 'band', 'singer', 'guitar', 'league', 'football', 'club', 'season', 'ruled', 'empire', 'dynasty', 'kings',
  'running', 'runs', 'ran', 'the', 'of', 'and', 'in', 'a', 'was', 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8', 'x9'];

/** Random chunks whose words follow a Zipf-like law, so some terms are common and some rare. */
export function randomChunks(n: number, seed: number): Chunk[] {
  const r = rng(seed);
  const word = () => VOCAB[Math.min(VOCAB.length - 1, Math.floor(VOCAB.length * r() ** 2.2))]!;
  return Array.from({ length: n }, (_, i) => ({
    id: `doc-${i}`,
    title: Array.from({ length: 1 + Math.floor(r() * 3) }, word).join(' '),
    text: Array.from({ length: 3 + Math.floor(r() * 40) }, word).join(' '),
    ...(i % 7 === 0 ? { meta: { n: i, tag: 'seventh' } } : {}),
  }));
}

export async function* iterate<T>(items: T[]): AsyncGenerator<T> {
  for (const x of items) yield x;
}

/**
 * The reference: BM25 computed from scratch in float64 from the chunks themselves (not from the
 * index), exhaustively over every document, Lucene idf, exact lengths, distinct query terms.
 */
export function reference(chunks: Chunk[], analyzer: Analyzer, k1: number, b: number) {
  const docs = chunks.map((c) => {
    const terms = analyzer.terms(c.title + ' ' + c.text);
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    return { length: terms.length, tf };
  });
  const N = docs.length;
  const avgdl = docs.reduce((s, d) => s + d.length, 0) / N;
  return (query: string, k: number) => {
    const qterms = [...new Set(analyzer.terms(query))];
    const df = new Map(qterms.map((t) => [t, docs.filter((d) => d.tf.has(t)).length]));
    const scored = docs.map((d, doc) => {
      let score = 0;
      for (const t of qterms) {
        const tf = d.tf.get(t) ?? 0;
        if (tf === 0) continue;
        const n = df.get(t)!;
        const idf = Math.log(1 + (N - n + 0.5) / (n + 0.5));
        score += (idf * tf) / (tf + k1 * (1 - b + (b * d.length) / avgdl));
      }
      return { doc, score };
    });
    return scored.filter((s) => s.score > 0).sort((x, y) => y.score - x.score || x.doc - y.doc).slice(0, k);
  };
}

export function expectSameRanking(got: { doc: number; score: number }[], want: { doc: number; score: number }[], label: string) {
  expect(got.length, label).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    const tol = 1e-9 * Math.max(1, Math.abs(want[i]!.score));
    expect(Math.abs(got[i]!.score - want[i]!.score), `${label} rank ${i} score`).toBeLessThanOrEqual(tol);
    // Ids must agree except between documents whose scores tie (to rounding).
    if (got[i]!.doc !== want[i]!.doc) {
      const other = want.find((w) => w.doc === got[i]!.doc);
      const tied = other !== undefined ? Math.abs(other.score - want[i]!.score) <= tol : Math.abs(got[i]!.score - want[want.length - 1]!.score) <= tol;
      expect(tied, `${label} rank ${i}: got doc ${got[i]!.doc}, want ${want[i]!.doc}`).toBe(true);
    }
  }
}

