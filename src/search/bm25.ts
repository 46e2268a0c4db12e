import { BLOCK, decodeBlock } from './block-postings.js';
import { MAX_PRUNED_K, MAX_QUERY_TERMS, MAX_SEGMENT_DOCS, type KernelTerm, type ScoringMemory } from './scoring-memory.js';

/** BM25 postings as loaded from an index (block-compressed, ./block-postings.ts), and Lucene-variant scoring over them. */
export interface Postings {
  docs: number;
  avgdl: number;
  k1: number;
  b: number;
  doclen: Uint32Array;
  termBytes: Uint8Array;
  termOff: Uint32Array;
  /** Per term, its first posting (T + 1 entries): its document frequency is the difference. */
  postOff: Uint32Array;
  /** Per term, its first block (T + 1 entries; blockOffsets of postOff). */
  blockOff: Uint32Array;
  /** Per block, its first word in `words` (B + 1 entries). */
  blockAt: Uint32Array;
  /** Per block, its last document. */
  blockLast: Uint32Array;
  /** Per block, a bound on tf / (tf + norm(doc)) over its postings. */
  blockMax: Float32Array;
  /** post.data: the blocks. */
  words: Uint32Array;
  /** Per term, max over its postings of tf / (tf + norm(doc)): score bounds for pruning. */
  maxTf: Float64Array;
  /**
   * Factor on the maxTf and blockMax bounds (default 1): a segment scored with the collection's
   * avgdl A instead of its own A_s, with which the bounds were computed, has norms at least
   * min(1, A_s/A) times its own, so its weights are at most max(1, A/A_s) times the bounds.
   */
  boundScale?: number;
  /**
   * When the postings are filled on demand (a loaded index reads a term's postings from disk
   * the first time a query needs them): make these terms' blocks valid before they are read.
   */
  load?: (termIds: readonly number[]) => void;
  /** When the postings live in a ScoringMemory: scoring runs its WebAssembly loops. */
  memory?: ScoringMemory;
}

export interface ScoredDoc {
  doc: number;
  score: number;
}

/** What topK may be told of the collection when this index is one segment of it. */
export interface TopKContext {
  /** The idf of each term id given (distinct), from the whole collection's counts. */
  idfs?: readonly number[];
  /**
   * A score to beat: the k-th best of the segments before (whose documents come first, so a
   * document of this one that only ties it ranks below). Documents scoring at most this are left out.
   */
  floor?: number;
}

/** Lucene's idf: ln(1 + (N - df + 0.5) / (df + 0.5)); never negative. */
export function bm25Idf(docs: number, df: number): number {
  return Math.log(1 + (docs - df + 0.5) / (df + 0.5));
}

/**
 * How topK finds the top k: 'exhaustive' adds up every posting of every query term (term at a time
 * in segments of documents); 'pruned' runs block-max MaxScore in WebAssembly (assembly/bm25.ts),
 * document at a time, skipping what cannot enter; 'auto' chooses per query (see choosePruned).
 * Both give the same hits and scores, to the bit.
 */
export type Strategy = 'auto' | 'exhaustive' | 'pruned';

const encoder = new TextEncoder();

/** Top-k BM25 (Lucene's variant), exact; see topK. */
export class Bm25Scorer {
  /** Per document, k1 * (1 - b + b * dl / avgdl), computed once at load. */
  private readonly norm: Float64Array;
  /** The WebAssembly loops, when the postings live in their memory (else the TypeScript ones run). */
  private readonly scoring: ScoringMemory | undefined;

  /**
   * segmentDocs: documents per scoring segment of the exhaustive loop (a power of two; small only
   * in tests, to cross many). useKernel false: the TypeScript loop even where the WebAssembly ones
   * could run (the tests compare the two). strategy: see Strategy (the TypeScript loop is
   * exhaustive whatever it says).
   */
  constructor(readonly p: Postings, private readonly segmentDocs = SEGMENT_DOCS, useKernel = true, readonly strategy: Strategy = 'auto') {
    const m = p.memory;
    this.scoring = useKernel && m && segmentDocs <= MAX_SEGMENT_DOCS && m.words === p.words && m.blockAt === p.blockAt ? m : undefined;
    this.acc = this.scoring ? this.scoring.acc.subarray(0, segmentDocs) : new Float64Array(segmentDocs);
    this.norm = this.scoring ? this.scoring.norm : new Float64Array(p.docs);
    for (let d = 0; d < p.docs; d++) this.norm[d] = p.k1 * (1 - p.b + (p.b * p.doclen[d]!) / p.avgdl);
    if (this.scoring) {
      const one = this.scoring.one;
      for (let d = 0; d < p.docs; d++) one[d] = 1 / (1 + this.norm[d]!);
    }
  }

  /** Whether top-k runs the WebAssembly loops. */
  get usesKernel(): boolean {
    return this.scoring !== undefined;
  }

  get termCount(): number {
    return this.p.termOff.length - 1;
  }

  /** Term id of a term, by binary search over the byte-sorted vocabulary; -1 if absent. */
  termId(term: string): number {
    const key = encoder.encode(term);
    const { termBytes, termOff } = this.p;
    let lo = 0;
    let hi = termOff.length - 2;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const start = termOff[mid]!;
      const end = termOff[mid + 1]!;
      let cmp = 0;
      const n = Math.min(end - start, key.length);
      for (let i = 0; i < n && cmp === 0; i++) cmp = termBytes[start + i]! - key[i]!;
      if (cmp === 0) cmp = end - start - key.length;
      if (cmp === 0) return mid;
      if (cmp < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  df(termId: number): number {
    return this.p.postOff[termId + 1]! - this.p.postOff[termId]!;
  }

  idf(termId: number): number {
    return bm25Idf(this.p.docs, this.df(termId));
  }

  /** Postings in block b of term t (every block but a term's last holds BLOCK). */
  private blockSize(t: number, b: number): number {
    return b + 1 === this.p.blockOff[t + 1]! ? this.df(t) - BLOCK * (b - this.p.blockOff[t]!) : BLOCK;
  }

  /** Decode block b of term t into docs and tfs (BLOCK long each); returns its size. */
  private decode(t: number, b: number, docs: Uint32Array, tfs: Uint32Array): number {
    const n = this.blockSize(t, b);
    decodeBlock(this.p.words, this.p.blockAt[b]!, n, b === this.p.blockOff[t]! ? -1 : this.p.blockLast[b - 1]!, docs, tfs);
    return n;
  }

  /** The postings of term t, decoded (for tests and tools; queries decode a block at a time). */
  postings(t: number): { docs: Uint32Array; tfs: Uint32Array } {
    this.p.load?.([t]);
    const n = this.df(t);
    const docs = new Uint32Array(n + BLOCK);
    const tfs = new Uint32Array(n + BLOCK);
    for (let b = this.p.blockOff[t]!, at = 0; b < this.p.blockOff[t + 1]!; b++) at += this.decode(t, b, docs.subarray(at), tfs.subarray(at));
    return { docs: docs.subarray(0, n), tfs: tfs.subarray(0, n) };
  }

  /** The score of one document for the given term ids (0 if it matches none); for explanations. */
  scoreDoc(termIds: number[], doc: number): number {
    this.p.load?.(termIds);
    const docs = new Uint32Array(BLOCK);
    const tfs = new Uint32Array(BLOCK);
    let s = 0;
    for (const t of termIds) {
      // The first block whose last document is at least doc.
      let lo = this.p.blockOff[t]!;
      let hi = this.p.blockOff[t + 1]!;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.p.blockLast[mid]! < doc) lo = mid + 1;
        else hi = mid;
      }
      if (lo === this.p.blockOff[t + 1]!) continue;
      const n = this.decode(t, lo, docs, tfs);
      for (let i = 0; i < n; i++) {
        if (docs[i] !== doc) continue;
        const tf = tfs[i]!;
        s += this.idf(t) * (tf / (tf + this.norm[doc]!));
      }
    }
    return s;
  }

  /** Score accumulators for one segment of documents, all zero between segments. */
  private readonly acc: Float64Array;

  /**
   * Top k documents for a set of distinct term ids, exact: the same hits and scores as adding up
   * every posting of every query term. Ties rank the lower document number first.
   *
   * Two loops, chosen per query (strategy): block-max MaxScore in WebAssembly (assembly/bm25.ts's
   * pruned), or the exhaustive loop, term at a time within segments of SEGMENT_DOCS documents:
   * each segment's accumulators and length norms stay in the CPU cache while the query's
   * postings for that segment stream through, decoded a block at a time.
   */
  topK(termIds: readonly number[], k: number, context: TopKContext = {}): ScoredDoc[] {
    const { postOff, blockOff } = this.p;
    const distinct = [...new Set(termIds)];
    const q = distinct.length;
    if (q === 0 || k <= 0) return [];
    if (context.idfs && (context.idfs.length !== termIds.length || q !== termIds.length)) throw new Error(`topK: ${context.idfs.length} idfs for ${termIds.length} term ids (${q} distinct)`);
    this.p.load?.(distinct);
    const idfs = context.idfs ? Float64Array.from(context.idfs) : Float64Array.from(distinct, (t) => this.idf(t));
    const scale = this.p.boundScale ?? 1;
    const floor = context.floor ?? 0;
    const scoring = this.scoring;
    if (!scoring || q > MAX_QUERY_TERMS) return this.exhaustiveTs(distinct, idfs, k, floor);
    const terms: KernelTerm[] = distinct.map((t, i) => {
      const df = postOff[t + 1]! - postOff[t]!;
      return { start: blockOff[t]!, end: blockOff[t + 1]!, lastN: df - BLOCK * (blockOff[t + 1]! - blockOff[t]! - 1), order: i, idf: idfs[i]!, ub: idfs[i]! * this.p.maxTf[t]! * scale };
    });
    if (k <= MAX_PRUNED_K && (this.strategy === 'pruned' || (this.strategy === 'auto' && choosePruned(terms)))) {
      // Ascending bounds: the non-essential terms are a prefix.
      scoring.setQuery([...terms].sort((x, y) => x.ub - y.ub || x.order - y.order));
      const n = scoring.pruned(q, k, floor, scale);
      const hits: ScoredDoc[] = [];
      for (let j = 0; j < n; j++) hits.push({ doc: scoring.outDocs[j]!, score: scoring.outScores[j]! });
      return hits.sort(byRank);
    }
    scoring.setQuery(terms);
    const heap = new TopK(k);
    const N = this.p.docs;
    // Terms by bound, ascending, and the running sums of the bounds: once the k-th score passes
    // the first terms' sum, a document only they hold cannot enter, so only the other terms'
    // documents are candidates (recorded as they are added, and read instead of every accumulator).
    const byBound = terms.map((_, i) => i).sort((x, y) => terms[x]!.ub - terms[y]!.ub || x - y);
    const cum = new Float64Array(q);
    for (let j = 0, sum = 0; j < q; j++) cum[j] = sum += terms[byBound[j]!]!.ub;
    const record = new Array<boolean>(q);
    // The k-th best score so far (the floor until there are k). The documents of a segment all
    // come after those of earlier segments, so one tying it never displaces it.
    let min = floor;
    for (let base = 0; base < N; base += this.segmentDocs) {
      const limit = Math.min(N, base + this.segmentDocs);
      let firstEssential = 0;
      while (firstEssential < q && cum[firstEssential]! < min * SLACK) firstEssential++;
      for (let j = 0; j < q; j++) record[byBound[j]!] = j >= firstEssential;
      let added = 0;
      for (let i = 0; i < q; i++) added += scoring.accumulate(i, base, limit, record[i]);
      // A segment none of the terms reaches (most, for a query of rare terms) has nothing to collect.
      if (added === 0) continue;
      const n = scoring.collectTouched(limit - base, min);
      const { outDocs, outScores } = scoring;
      for (let j = 0; j < n; j++) heap.offer(base + outDocs[j]!, outScores[j]!);
      if (heap.full) min = Math.max(heap.minScore, floor);
    }
    return heap.sorted();
  }

  /** The exhaustive loop in TypeScript (assembly/bm25.ts's accumulate and collect), a block decoded at a time. */
  private exhaustiveTs(distinct: readonly number[], idfs: Float64Array, k: number, floor: number): ScoredDoc[] {
    const { blockOff, blockLast } = this.p;
    const q = distinct.length;
    const acc = this.acc;
    const norm = this.norm;
    const heap = new TopK(k);
    const N = this.p.docs;
    // Per term: its current block, how many postings of it are taken, and the block decoded.
    const block = Uint32Array.from(distinct, (t) => blockOff[t]!);
    const pos = new Uint32Array(q);
    const size = new Uint32Array(q);
    const docs = distinct.map(() => new Uint32Array(BLOCK));
    const tfs = distinct.map(() => new Uint32Array(BLOCK));
    const decoded = new Float64Array(q).fill(-1);
    let min = floor;
    for (let base = 0; base < N; base += this.segmentDocs) {
      const limit = Math.min(N, base + this.segmentDocs);
      for (let i = 0; i < q; i++) {
        const t = distinct[i]!;
        const idf = idfs[i]!;
        for (let b = block[i]!; b < blockOff[t + 1]!; b++) {
          if (b !== blockOff[t]! && blockLast[b - 1]! >= limit - 1) break;
          if (decoded[i] !== b) {
            size[i] = this.decode(t, b, docs[i]!, tfs[i]!);
            decoded[i] = b;
            pos[i] = 0;
          }
          const d = docs[i]!;
          const f = tfs[i]!;
          let at = pos[i]!;
          for (const n = size[i]!; at < n; at++) {
            const doc = d[at]!;
            if (doc >= limit) break;
            const tf = f[at]!;
            acc[doc - base] += idf * (tf / (tf + norm[doc]!));
          }
          pos[i] = at;
          if (at < size[i]!) break;
          block[i] = b + 1;
        }
      }
      for (let o = 0; o < limit - base; o++) {
        const score = acc[o]!;
        if (score > min) {
          heap.offer(base + o, score);
          if (heap.full) min = Math.max(heap.minScore, floor);
        }
      }
      acc.fill(0, 0, limit - base);
    }
    return heap.sorted();
  }
}

/** Relative slack on bound tests, so float rounding can only make them take more documents as candidates. */
const SLACK = 1 - 1e-9;

/** Ranking order: score descending, then document number ascending. */
function byRank(a: ScoredDoc, b: ScoredDoc): number {
  return b.score - a.score || a.doc - b.doc;
}

/**
 * Whether topK runs the pruned loop for a query (strategy 'auto'; topK checks that it can: k at
 * most MAX_PRUNED_K, at most MAX_QUERY_TERMS terms): when a cost model of per-query times
 * (bench/engine-profile.ts; docs/search-engine.md) says it is the faster one.
 *
 * The exhaustive loop costs about EXHAUSTIVE_NS_PER_POSTING per posting of the query's terms (its
 * collect pass reads only the essential terms' documents when they are few, and skips segments no
 * term reaches, so nothing is per document of the index). The pruned loop's candidates come from
 * the rare terms, so it costs PRUNED_NS_PER_RAREST per posting of the rarest term, and more per
 * posting of all the terms the more terms the query has (each candidate looks at every essential
 * term, and a lookup in a non-essential term may decode a block for one posting):
 * PRUNED_NS_PER_POSTING_PER_TERM * q.
 */
export function choosePruned(terms: readonly KernelTerm[]): boolean {
  let postings = 0;
  let rarest = Infinity;
  for (const t of terms) {
    const df = (t.end - t.start - 1) * BLOCK + t.lastN;
    postings += df;
    rarest = Math.min(rarest, df);
  }
  const pruned = postings * PRUNED_NS_PER_POSTING_PER_TERM * terms.length + rarest * PRUNED_NS_PER_RAREST;
  return pruned < postings * EXHAUSTIVE_NS_PER_POSTING;
}

// The cost model's constants, in nanoseconds (choosePruned): chosen on a grid to minimise the
// summed per-query time of the loop chosen, measured with bench/engine-profile.ts at 1M chunks of
// the topical, i.i.d. and fitted corpora, top 10 (every query's time in both loops; each corpus
// weighed by its exhaustive total). The fitted corpus at 2.1M was left out of the fit, to check it
// on. The grid held a per-document term for the exhaustive loop too; its best value was 0.
const EXHAUSTIVE_NS_PER_POSTING = 1.5;
const PRUNED_NS_PER_RAREST = 30;
const PRUNED_NS_PER_POSTING_PER_TERM = 0.25;

/** Documents per scoring segment: 16 Ki accumulators and norms (256 KiB) stay in L2 (the kernel's buffers are this long). */
const SEGMENT_DOCS = MAX_SEGMENT_DOCS;

/**
 * A bounded min-heap of (score, doc) whose root is the worst kept hit: the lowest score, and of
 * equal scores the highest document number. push replaces the root when full; callers push only
 * hits better than the root.
 */
class TopK {
  private readonly docs: number[] = [];
  private readonly scores: number[] = [];
  constructor(private readonly k: number) {}
  get full(): boolean {
    return this.docs.length >= this.k;
  }
  get minScore(): number {
    return this.scores[0]!;
  }
  get minDoc(): number {
    return this.docs[0]!;
  }
  private worse(i: number, j: number): boolean {
    const a = this.scores[i]!;
    const b = this.scores[j]!;
    return a < b || (a === b && this.docs[i]! > this.docs[j]!);
  }
  private swap(i: number, j: number): void {
    [this.docs[i], this.docs[j]] = [this.docs[j]!, this.docs[i]!];
    [this.scores[i], this.scores[j]] = [this.scores[j]!, this.scores[i]!];
  }
  /** Keep (doc, score) if it beats the worst kept hit (a lower document number wins a tie). */
  offer(doc: number, score: number): void {
    if (!this.full || score > this.minScore || (score === this.minScore && doc < this.minDoc)) this.push(doc, score);
  }

  push(doc: number, score: number): void {
    if (this.full) {
      this.docs[0] = doc;
      this.scores[0] = score;
      this.down(0);
      return;
    }
    this.docs.push(doc);
    this.scores.push(score);
    let i = this.docs.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }
  private down(i: number): void {
    const n = this.docs.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < n && this.worse(l, w)) w = l;
      if (r < n && this.worse(r, w)) w = r;
      if (w === i) return;
      this.swap(i, w);
      i = w;
    }
  }
  sorted(): ScoredDoc[] {
    return this.docs.map((doc, i) => ({ doc, score: this.scores[i]! })).sort(byRank);
  }
}
