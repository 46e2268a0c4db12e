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
  /** Per term, max over its postings of tf / (tf + norm(doc)). */
  maxTf: Float64Array;
  /**
   * When postDocs/postTfs are filled on demand (a loaded index reads a term's postings from disk
   * the first time a query needs them): make these terms' ranges valid before they are read.
   */
  load?: (termIds: readonly number[]) => void;
}

export interface ScoredDoc {
  doc: number;
  score: number;
}

/** Lucene's idf: ln(1 + (N - df + 0.5) / (df + 0.5)); never negative. */
export function bm25Idf(docs: number, df: number): number {
  return Math.log(1 + (docs - df + 0.5) / (df + 0.5));
}

const encoder = new TextEncoder();
/** Relative slack on pruning decisions, so float rounding can only make the scorer prune less. */
const SLACK = 1 - 1e-9;

/**
 * Top-k BM25 with MaxScore dynamic pruning. Results equal exhaustive scoring: a document is only
 * skipped when the sum of the upper bounds of the terms it could still match cannot beat the
 * current k-th score. Ties rank the lower document number first.
 */
export class Bm25Scorer {
  /** Per document, k1 * (1 - b + b * dl / avgdl), computed once at load. */
  private readonly norm: Float64Array;

  /**
   * seedMinPostings: sample a floor (seedThreshold) only for queries with at least this many
   * postings; below that, plain term-at-a-time is cheaper. 0 samples always (tests use it).
   */
  constructor(readonly p: Postings, private readonly seedMinPostings = SEED_MIN_POSTINGS) {
    this.norm = new Float64Array(p.docs);
    for (let d = 0; d < p.docs; d++) this.norm[d] = p.k1 * (1 - p.b + (p.b * p.doclen[d]!) / p.avgdl);
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

  /**
   * A true lower bound on the final k-th score: the k-th best full score among a sample of
   * documents, the first SEED_DOCS postings of each of the SEED_TERMS highest-bound (rarest) terms,
   * where documents matching several rare terms are likely. 0 when fewer than k were scored.
   */
  private seedThreshold(terms: QueryTerm[], k: number): number {
    const { postOff, postDocs, postTfs } = this.p;
    if (terms.length < 2) return 0;
    // Sampling pays for itself only when there are many postings to skip.
    let postings = 0;
    for (const { t } of terms) postings += postOff[t + 1]! - postOff[t]!;
    if (postings < this.seedMinPostings) return 0;
    const picked: number[] = [];
    for (const { t } of terms.slice(-SEED_TERMS)) {
      const start = postOff[t]!;
      const end = Math.min(postOff[t + 1]!, start + SEED_DOCS);
      for (let i = start; i < end; i++) picked.push(postDocs[i]!);
    }
    const sorted = Uint32Array.from(picked).sort();
    const docs: number[] = [];
    for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) docs.push(sorted[i]!);
    if (docs.length < k) return 0;
    // Score the sample in document order, so every list is walked forward once.
    const scores = new Float64Array(docs.length);
    for (const { t, idf } of terms) {
      let at = postOff[t]!;
      const end = postOff[t + 1]!;
      for (let j = 0; j < docs.length && at < end; j++) {
        const d = docs[j]!;
        at = seek(postDocs, at, end, d);
        if (at < end && postDocs[at] === d) {
          const tf = postTfs[at]!;
          scores[j] += idf * (tf / (tf + this.norm[d]!));
        }
      }
    }
    scores.sort();
    return scores[scores.length - k]!;
  }

  /** Score accumulators, one per document, all zero between queries; touched lists which to reset. */
  private acc?: Float64Array;
  private touched?: Uint32Array;

  /**
   * Top k documents for a set of distinct term ids: MaxScore, term at a time, with a floor that
   * rises as terms are added.
   *  1. Terms sorted by upper bound (ub = idf · max tf weight); cum[i] = ub[0] + … + ub[i]. A floor
   *     on the final k-th score starts from a sample (seedThreshold) and is raised after every
   *     term to the k-th largest accumulator (each accumulator is a sum of exact contributions,
   *     so a lower bound of its document's score).
   *  2. Terms are added into per-document accumulators from the highest bound down. Before term i,
   *     a document not yet seen can score at most cum[i]: once that is below the floor, terms
   *     0..i are "non-essential" and are not walked. While walking term i, a document seen for the
   *     first time whose weight plus cum[i-1] is below the floor is left out (it cannot reach it).
   *  3. The non-essential terms are added only to documents already in play (a cheap pass: no
   *     weight is computed for the others), and the top k are taken from the accumulators.
   * Every document whose true score could reach the final k-th score is scored in full, so the
   * result equals exhaustive scoring. Ties rank the lower document number first.
   */
  topK(termIds: readonly number[], k: number): ScoredDoc[] {
    const { postOff, postDocs, postTfs } = this.p;
    const norm = this.norm;
    const terms: QueryTerm[] = [...new Set(termIds)]
      .map((t) => ({ t, idf: this.idf(t), ub: this.idf(t) * this.p.maxTf[t]! }))
      .sort((x, y) => x.ub - y.ub || x.t - y.t);
    const q = terms.length;
    if (q === 0 || k <= 0) return [];
    this.p.load?.(terms.map((x) => x.t));
    const cum: number[] = [];
    terms.reduce((s, x, i) => (cum[i] = s + x.ub), 0);

    let floor = this.seedThreshold(terms, k);
    const acc = (this.acc ??= new Float64Array(this.p.docs));
    const touched = (this.touched ??= new Uint32Array(this.p.docs));
    let nTouched = 0;
    // Terms 0..last are not walked (non-essential); -1 when every term was walked.
    let last = q - 1;
    for (; last >= 0 && cum[last]! >= floor * SLACK; last--) {
      const { t, idf } = terms[last]!;
      // A first contribution below this cannot lift a new document to the floor.
      const newCut = floor * SLACK - (last > 0 ? cum[last - 1]! : 0);
      for (let at = postOff[t]!, end = postOff[t + 1]!; at < end; at++) {
        const d = postDocs[at]!;
        const tf = postTfs[at]!;
        const w = idf * (tf / (tf + norm[d]!));
        const before = acc[d]!;
        if (before === 0) {
          if (w < newCut) continue;
          touched[nTouched++] = d;
        }
        acc[d] = before + w;
      }
      // A higher floor only matters if the next term would otherwise be walked.
      if (nTouched >= k && last > 0 && cum[last - 1]! >= floor * SLACK) floor = Math.max(floor, kthLargest(acc, touched, nTouched, k));
    }

    // Terms 0..last cannot bring in a new document: add them only to documents already in play
    // (a document left out or never seen scores below the floor, so cannot be in the top k).
    for (let i = last; i >= 0; i--) {
      const { t, idf } = terms[i]!;
      for (let at = postOff[t]!, end = postOff[t + 1]!; at < end; at++) {
        const d = postDocs[at]!;
        const before = acc[d]!;
        if (before === 0) continue;
        const tf = postTfs[at]!;
        acc[d] = before + idf * (tf / (tf + norm[d]!));
      }
    }

    const heap = new TopK(k);
    for (let i = 0; i < nTouched; i++) {
      const d = touched[i]!;
      const score = acc[d]!;
      if (!heap.full || score > heap.minScore || (score === heap.minScore && d < heap.minDoc)) heap.push(d, score);
    }
    for (let i = 0; i < nTouched; i++) acc[touched[i]!] = 0;
    return heap.sorted();
  }
}

/** The k-th largest of acc over the touched documents (k <= n): a min-heap of the k best values. */
function kthLargest(acc: Float64Array, touched: Uint32Array, n: number, k: number): number {
  const heap = new Float64Array(k);
  for (let i = 0; i < k; i++) heap[i] = acc[touched[i]!]!;
  heap.sort();
  // heap is sorted ascending, hence a valid min-heap; sift replacements down.
  for (let i = k; i < n; i++) {
    const a = acc[touched[i]!]!;
    if (a <= heap[0]!) continue;
    let j = 0;
    for (;;) {
      const l = 2 * j + 1;
      if (l >= k) break;
      const r = l + 1;
      const c = r < k && heap[r]! < heap[l]! ? r : l;
      if (heap[c]! >= a) break;
      heap[j] = heap[c]!;
      j = c;
    }
    heap[j] = a;
  }
  return heap[0]!;
}

const SEED_DOCS = 64;
const SEED_TERMS = 3;
const SEED_MIN_POSTINGS = 50_000;

export interface QueryTerm {
  t: number;
  idf: number;
  ub: number;
}

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
