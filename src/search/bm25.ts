import { MAX_SEGMENT_DOCS, type ScoringMemory } from './scoring-memory.js';

/** BM25 postings as loaded from an index, and Lucene-variant scoring over them. */
export interface Postings {
  docs: number;
  avgdl: number;
  k1: number;
  b: number;
  doclen: Uint32Array;
  termBytes: Uint8Array;
  termOff: Uint32Array;
  postOff: Uint32Array;
  postDocs: Uint32Array;
  postTfs: Uint16Array;
  /** Per term, max over its postings of tf / (tf + norm(doc)): score bounds for pruning (topK needs none). */
  maxTf: Float64Array;
  /**
   * Factor on the maxTf bounds (default 1): a segment scored with the collection's avgdl A
   * instead of its own A_s, with which maxTf was computed, has norms at least min(1, A_s/A) times
   * its own, so its weights are at most max(1, A/A_s) times the bounds.
   */
  boundScale?: number;
  /**
   * When postDocs/postTfs are filled on demand (a loaded index reads a term's postings from disk
   * the first time a query needs them): make these terms' ranges valid before they are read.
   */
  load?: (termIds: readonly number[]) => void;
  /** When postDocs and postTfs live in a ScoringMemory: scoring runs its WebAssembly loops. */
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

const encoder = new TextEncoder();

/** Top-k BM25 (Lucene's variant), exhaustive and exact; see topK. */
export class Bm25Scorer {
  /** Per document, k1 * (1 - b + b * dl / avgdl), computed once at load. */
  private readonly norm: Float64Array;
  /** The WebAssembly loops, when the postings live in their memory (else the TypeScript ones run). */
  private readonly scoring: ScoringMemory | undefined;

  /**
   * segmentDocs: documents per scoring segment (a power of two; small only in tests, to cross many).
   * useKernel false: the TypeScript loops even where the WebAssembly ones could run (the tests
   * compare the two).
   */
  constructor(readonly p: Postings, private readonly segmentDocs = SEGMENT_DOCS, useKernel = true, private readonly maxScore = MAX_SCORE) {
    const m = p.memory;
    this.scoring = useKernel && m && segmentDocs <= MAX_SEGMENT_DOCS && m.postDocs === p.postDocs && m.postTfs === p.postTfs ? m : undefined;
    this.acc = this.scoring ? this.scoring.acc.subarray(0, segmentDocs) : new Float64Array(segmentDocs);
    this.norm = this.scoring ? this.scoring.norm : new Float64Array(p.docs);
    for (let d = 0; d < p.docs; d++) this.norm[d] = p.k1 * (1 - p.b + (p.b * p.doclen[d]!) / p.avgdl);
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

  /** The score of one document for the given term ids (0 if it matches none); for explanations. */
  scoreDoc(termIds: number[], doc: number): number {
    this.p.load?.(termIds);
    let s = 0;
    for (const t of termIds) {
      const start = this.p.postOff[t]!;
      const end = this.p.postOff[t + 1]!;
      const at = seek(this.p.postDocs, start, end, doc);
      if (at < end && this.p.postDocs[at] === doc) {
        const tf = this.p.postTfs[at]!;
        s += this.idf(t) * (tf / (tf + this.norm[doc]!));
      }
    }
    return s;
  }

  /** The TypeScript accumulate loop (assembly/bm25.ts's accumulate): one term's postings of a segment. */
  private add(at: number, end: number, base: number, limit: number, idf: number): number {
    const { postDocs, postTfs } = this.p;
    const acc = this.acc;
    const norm = this.norm;
    for (; at < end; at++) {
      const d = postDocs[at]!;
      if (d >= limit) break;
      const tf = postTfs[at]!;
      acc[d - base] += idf * (tf / (tf + norm[d]!));
    }
    return at;
  }

  /** Score accumulators for one segment of documents, all zero between segments. */
  private readonly acc: Float64Array;

  /**
   * Top k documents for a set of distinct term ids, scored exhaustively: every posting of every
   * query term is added into an accumulator, so the result is exact by construction.
   *
   * Term at a time within segments of SEGMENT_DOCS documents: each segment's accumulators and
   * length norms stay in the CPU cache while the query's postings for that segment stream
   * through, and the inner loop has no branch but its end test. (Measured on 1M synthetic chunks
   * and the embedded questions, this beat MaxScore-style pruning, whose per-posting tests cost
   * more than the additions they saved when the queries mix rare and very common terms.)
   * Picking a segment's best documents uses the terms' score bounds (term.maxtf): once the k-th
   * best score so far exceeds the summed bounds of the common terms, only documents of the other
   * terms can enter, and only those are looked at. Ties rank the lower document number first.
   */
  topK(termIds: readonly number[], k: number, context: TopKContext = {}): ScoredDoc[] {
    const { postOff, postDocs, postTfs } = this.p;
    const norm = this.norm;
    const scoring = this.scoring;
    const distinct = [...new Set(termIds)];
    const q = distinct.length;
    if (q === 0 || k <= 0) return [];
    if (context.idfs && (context.idfs.length !== termIds.length || q !== termIds.length)) throw new Error(`topK: ${context.idfs.length} idfs for ${termIds.length} term ids (${q} distinct)`);
    this.p.load?.(distinct);
    const idfs = context.idfs ? Float64Array.from(context.idfs) : Float64Array.from(distinct, (t) => this.idf(t));
    const pos = Uint32Array.from(distinct, (t) => postOff[t]!);
    const ends = Uint32Array.from(distinct, (t) => postOff[t + 1]!);
    const scale = this.p.boundScale ?? 1;
    const ubOf = (i: number) => idfs[i]! * this.p.maxTf[distinct[i]!]! * scale;
    const floor = context.floor ?? 0;

    const segStart = new Uint32Array(q);
    // Terms by upper bound (idf · largest tf weight), ascending, and the running sums of bounds.
    const byBound = Uint32Array.from(distinct.keys()).sort((x, y) => ubOf(x) - ubOf(y));
    const cum = new Float64Array(q);
    for (let j = 0, sum = 0; j < q; j++) cum[j] = sum += ubOf(byBound[j]!);

    const heap = new TopK(k);
    const acc = this.acc;
    const N = this.p.docs;
    const SEGMENT_DOCS = this.segmentDocs;
    // The k-th best score so far (the floor until there are k). Scanning a segment in order, a
    // document tying it never displaces it (a lower document number holds the place).
    let min = floor;
    const bufDocs = new Uint32Array(BUFFER);
    const bufScores = new Float64Array(BUFFER);
    let nBuf = 0;
    const drain = (): number => {
      for (let j = 0; j < nBuf; j++) {
        const score = bufScores[j]!;
        const doc = bufDocs[j]!;
        heap.offer(doc, score);
      }
      nBuf = 0;
      return heap.full ? Math.max(heap.minScore, floor) : floor;
    };
    for (let base = 0; base < N; base += SEGMENT_DOCS) {
      const limit = Math.min(N, base + SEGMENT_DOCS);
      if (this.maxScore) {
        // MaxScore over this segment: the terms whose bounds sum below the k-th score so far (the
        // non-essential ones) are not added up; only the other terms' documents can enter, and
        // those whose partial score plus that sum can beat the k-th are scored exactly.
        let essential = 0;
        while (essential < q && cum[essential]! < min * SLACK) essential++;
        if (essential > 0) {
          const rest = cum[essential - 1]!;
          for (let j = 0; j < q; j++) {
            const i = byBound[j]!;
            const from = pos[i]!;
            segStart[i] = from;
            if (j < essential) pos[i] = seek(postDocs, from, ends[i]!, limit);
            else pos[i] = scoring ? scoring.accumulate(from, ends[i]!, base, limit, idfs[i]!) : this.add(from, ends[i]!, base, limit, idfs[i]!);
          }
          for (let j = essential; j < q; j++) {
            const i = byBound[j]!;
            for (let at = segStart[i]!, end = pos[i]!; at < end; at++) {
              const doc = postDocs[at]!;
              const partial = acc[doc - base]!;
              // Zeroed once seen (every weight is above zero), so a document is looked at once.
              if (partial === 0) continue;
              acc[doc - base] = 0;
              if (partial + rest < min * SLACK) continue;
              // Scored afresh in query term order, the additions the exhaustive loop makes, so the
              // score is the same to the bit.
              let score = 0;
              for (let t = 0; t < q; t++) {
                const e = pos[t]!;
                const hit = seek(postDocs, segStart[t]!, e, doc);
                if (hit < e && postDocs[hit] === doc) {
                  const tf = postTfs[hit]!;
                  score += idfs[t]! * (tf / (tf + norm[doc]!));
                }
              }
              if (score >= min && score > 0) {
                bufDocs[nBuf] = doc;
                bufScores[nBuf++] = score;
                if (nBuf === BUFFER) min = drain();
              }
            }
          }
          min = drain();
          continue;
        }
      }
      let any = false;
      for (let i = 0; i < q; i++) {
        const idf = idfs[i]!;
        const end = ends[i]!;
        let at = pos[i]!;
        segStart[i] = at;
        if (scoring) at = scoring.accumulate(at, end, base, limit, idf);
        else {
          for (; at < end; at++) {
            const d = postDocs[at]!;
            if (d >= limit) break;
            const tf = postTfs[at]!;
            acc[d - base] += idf * (tf / (tf + norm[d]!));
          }
        }
        if (at !== pos[i]) any = true;
        pos[i] = at;
      }
      if (!any) continue;
      // Scores above the running k-th go to a small buffer (a tight loop without calls), merged
      // into the heap when it fills and after the segment.
      const len = limit - base;
      // A document matching only terms whose bounds sum below the k-th score so far cannot
      // enter: when the other terms' postings here are few, look only at their documents.
      let firstEssential = 0;
      while (firstEssential < q && cum[firstEssential]! < min * SLACK) firstEssential++;
      let sparse = 0;
      for (let j = firstEssential; j < q; j++) sparse += pos[byBound[j]!]! - segStart[byBound[j]!]!;
      if (firstEssential > 0 && sparse * SPARSE_RATIO < len) {
        for (let j = firstEssential; j < q; j++) {
          const i = byBound[j]!;
          for (let at = segStart[i]!, end = pos[i]!; at < end; at++) {
            const o = postDocs[at]! - base;
            const score = acc[o]!;
            // Zeroed once seen, so a document in several of these lists is taken once. Documents
            // come out of order here, so one tying the k-th score may still displace it.
            acc[o] = 0;
            if (score >= min && score > 0) {
              bufDocs[nBuf] = base + o;
              bufScores[nBuf++] = score;
              if (nBuf === BUFFER) min = drain();
            }
          }
        }
      } else if (scoring) {
        // The same scan in WebAssembly, which also zeroes the accumulators.
        const n = scoring.collect(len, min);
        const { outDocs, outScores } = scoring;
        for (let j = 0; j < n; j++) {
          const score = outScores[j]!;
          const doc = base + outDocs[j]!;
          heap.offer(doc, score);
        }
        min = drain();
        continue;
      } else {
        for (let o = 0; o < len; o++) {
          const score = acc[o]!;
          if (score > min) {
            bufDocs[nBuf] = base + o;
            bufScores[nBuf++] = score;
            if (nBuf === BUFFER) min = drain();
          }
        }
      }
      min = drain();
      acc.fill(0, 0, len);
    }
    return heap.sorted();
  }
}

/**
 * Whether topK prunes with MaxScore over its segments by default. Measured side by side
 * (bench/pruning.ts; bench/results/search.json, "pruning") on 1M chunks of both synthetic corpora
 * with their queries, top 10: MaxScore costs about twice the CPU time per query of the exhaustive
 * loop (its per-candidate lookups cost more than the additions it skips), so it is off.
 */
export const MAX_SCORE = false;

/** Relative slack on bound tests, so float rounding can only make them look at more documents. */
const SLACK = 1 - 1e-9;
/** Look only at the essential terms' documents when they are under 1/SPARSE_RATIO of a segment. */
const SPARSE_RATIO = 4;
/** Candidate scores buffered before they are merged into the top-k heap. */
const BUFFER = 256;
/** Documents per scoring segment: 16 Ki accumulators and norms (256 KiB) stay in L2 (the kernel's buffers are this long). */
const SEGMENT_DOCS = MAX_SEGMENT_DOCS;

/** First index in [from, end) whose doc is >= target (galloping, then binary search). */
function seek(docs: Uint32Array, from: number, end: number, target: number): number {
  if (from >= end || docs[from]! >= target) return from;
  let step = 1;
  let lo = from;
  let hi = from + 1;
  while (hi < end && docs[hi]! < target) {
    lo = hi;
    step *= 2;
    hi = Math.min(end, hi + step);
  }
  if (hi > end) hi = end;
  // docs[lo] < target; answer in (lo, hi]
  while (lo + 1 < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid]! < target) lo = mid;
    else hi = mid;
  }
  return hi;
}

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
    return this.docs.map((doc, i) => ({ doc, score: this.scores[i]! })).sort((a, b) => b.score - a.score || a.doc - b.doc);
  }
}
