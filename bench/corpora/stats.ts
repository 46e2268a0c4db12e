/**
 * The statistics that decide how a search engine scales on a corpus, measured the same way on real
 * text and on generated text (fit.ts fits the generator to them; the corpus-stats table shows both):
 *
 * - Heaps: vocabulary V(n) after n terms; beta is the least-squares slope of log V against log n
 *   over the last six doublings (n from T/64 to T, T the corpus's terms), K = V(T) / T^beta.
 * - Zipf: the slope (negated) of log frequency against log rank, least squares over ranks spaced
 *   1.25x apart: the head, ranks 10-1,000, and the tail, rank 1,000 to the last rank whose term
 *   occurs 10 times or more.
 * - Burstiness (topic co-occurrence within a chunk): for terms occurring 20 times or more, the
 *   median of df / (the df its occurrences would reach if scattered at random, N(1 - (1 - 1/N)^cf)).
 *   Text about things repeats its words: real text is well under 1, i.i.d. words are 1.
 * - Query-term selectivity: the median (and 90th percentile) over the queries' distinct terms of
 *   df / N, and the median over queries of the postings they touch (the sum of their terms' df) / N.
 * - Query co-occurrence: the median over pairs of terms of one query of the lift
 *   N * df(both) / (df(a) * df(b)): how much more often a query's terms meet than by chance.
 *
 * Terms are what sleuth indexes: a chunk's title and text through the Analyzer (stopwords dropped,
 * Porter2 stems). Generated corpora are measured on their term numbers (the same thing, as each
 * generated word is one term) when fitting, and on their text when compared in the table.
 */
import type { Chunk } from '../../src/corpus/chunk.js';
import { Analyzer } from '../../src/search/index.js';

export interface CorpusStats {
  chunks: number;
  terms: number;
  vocabulary: number;
  /** Mean terms per chunk (title and text). */
  chunk_terms: number;
  heaps_beta: number;
  heaps_k: number;
  zipf_head: number;
  zipf_tail: number;
  burstiness: number;
  query_terms: number;
  query_df_median: number;
  query_df_p90: number;
  query_postings_median: number;
  query_pair_lift: number;
}

const median = (xs: number[]) => quantile(xs, 0.5);
function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/** Least-squares slope of ys against xs. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  return sxy / sxx;
}

/**
 * Statistics of a stream of chunks given as term numbers (any non-negative integers: a term's
 * number only has to be the same wherever it occurs), with queries as term numbers too.
 */
export class StatsAccumulator {
  private readonly dense = new Map<number, number>();
  private cf = new Int32Array(1 << 16);
  private df = new Int32Array(1 << 16);
  private lastDoc = new Int32Array(1 << 16).fill(-1);
  private chunks = 0;
  private terms = 0;
  /** (terms so far, vocabulary) at terms = 1,000 * 1.05^k: the Heaps curve. */
  private readonly curve: [number, number][] = [];
  private nextCheckpoint = 1000;
  /** Query terms (by term number) whose chunk lists are kept, for co-occurrence. */
  private readonly postings = new Map<number, number[]>();

  constructor(private readonly queries: readonly (readonly number[])[]) {
    for (const q of queries) for (const t of q) this.postings.set(t, []);
  }

  private denseId(term: number): number {
    let d = this.dense.get(term);
    if (d === undefined) {
      d = this.dense.size;
      this.dense.set(term, d);
      if (d >= this.cf.length) {
        const grow = (a: Int32Array, fill: number) => {
          const b = new Int32Array(a.length * 2).fill(fill);
          b.set(a);
          return b;
        };
        this.cf = grow(this.cf, 0);
        this.df = grow(this.df, 0);
        this.lastDoc = grow(this.lastDoc, -1);
      }
    }
    return d;
  }

  addChunk(terms: ArrayLike<number>): void {
    const doc = this.chunks++;
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i]!;
      const d = this.denseId(t);
      this.cf[d]!++;
      if (this.lastDoc[d] !== doc) {
        this.lastDoc[d] = doc;
        this.df[d]!++;
        const list = this.postings.get(t);
        if (list) list.push(doc);
      }
      if (++this.terms >= this.nextCheckpoint) {
        this.curve.push([this.terms, this.dense.size]);
        this.nextCheckpoint = Math.ceil(this.nextCheckpoint * 1.05);
      }
    }
  }

  result(): CorpusStats {
    const N = this.chunks;
    const T = this.terms;
    const V = this.dense.size;
    const cf = this.cf.subarray(0, V);
    const df = this.df.subarray(0, V);
    // Heaps: the curve's points from T/64 to T, and the end.
    const points = [...this.curve.filter(([n]) => n >= T / 64 && n < T), [T, V] as [number, number]];
    const beta = points.length >= 2 ? slope(points.map(([n]) => Math.log(n)), points.map(([, v]) => Math.log(v))) : Number.NaN;
    // Zipf: frequencies by rank.
    const freq = Float64Array.from(cf).sort().reverse();
    const zipf = (from: number, to: number) => {
      const xs: number[] = [];
      const ys: number[] = [];
      for (let r = from; r <= to && r <= freq.length; r = Math.max(r + 1, Math.round(r * 1.25))) {
        xs.push(Math.log(r));
        ys.push(Math.log(freq[r - 1]!));
      }
      return xs.length >= 3 ? -slope(xs, ys) : Number.NaN;
    };
    let last10 = 0;
    while (last10 < freq.length && freq[last10]! >= 10) last10++;
    // Burstiness.
    const ratios: number[] = [];
    for (let d = 0; d < V; d++) if (cf[d]! >= 20) ratios.push(df[d]! / (N * (1 - Math.pow(1 - 1 / N, cf[d]!))));
    // Queries.
    const dfOf = (t: number) => {
      const d = this.dense.get(t);
      return d === undefined ? 0 : df[d]!;
    };
    const termDf: number[] = [];
    const postingsPerQuery: number[] = [];
    const lifts: number[] = [];
    let queryTerms = 0;
    for (const q of this.queries) {
      const distinct = [...new Set(q)];
      queryTerms += distinct.length;
      let sum = 0;
      for (const t of distinct) {
        termDf.push(dfOf(t) / N);
        sum += dfOf(t);
      }
      postingsPerQuery.push(sum / N);
      for (let i = 0; i < distinct.length; i++) for (let j = i + 1; j < distinct.length; j++) {
        const a = this.postings.get(distinct[i]!)!;
        const b = this.postings.get(distinct[j]!)!;
        if (a.length === 0 || b.length === 0) continue;
        lifts.push((N * intersectionSize(a, b)) / (a.length * b.length));
      }
    }
    return {
      chunks: N,
      terms: T,
      vocabulary: V,
      chunk_terms: T / N,
      heaps_beta: beta,
      heaps_k: V / Math.pow(T, beta),
      zipf_head: zipf(10, 1000),
      zipf_tail: zipf(1000, last10),
      burstiness: median(ratios),
      query_terms: this.queries.length ? queryTerms / this.queries.length : Number.NaN,
      query_df_median: median(termDf),
      query_df_p90: quantile(termDf, 0.9),
      query_postings_median: median(postingsPerQuery),
      query_pair_lift: median(lifts),
    };
  }
}

/** Chunks in two ascending lists (chunk numbers) both hold. */
function intersectionSize(a: number[], b: number[]): number {
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    if (a[i]! < b[j]!) i++;
    else if (a[i]! > b[j]!) j++;
    else {
      n++;
      i++;
      j++;
    }
  }
  return n;
}

/** Gives each distinct term string a number, in order of first sight. */
export class TermNumbers {
  private readonly ids = new Map<string, number>();
  id(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) this.ids.set(term, (id = this.ids.size));
    return id;
  }
}

/** The statistics of chunks of text and queries of text, through sleuth's default Analyzer. */
export async function textStats(chunks: Iterable<Chunk> | AsyncIterable<Chunk>, queries: readonly string[]): Promise<CorpusStats> {
  const analyzer = new Analyzer();
  const numbers = new TermNumbers();
  const acc = new StatsAccumulator(queries.map((q) => analyzer.terms(q).map((t) => numbers.id(t))));
  for await (const c of chunks) acc.addChunk(analyzer.terms(`${c.title} ${c.text}`).map((t) => numbers.id(t)));
  return acc.result();
}
