import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Chunk } from '../corpus/chunk.js';
import { InputError } from '../errors.js';
import { Analyzer, type AnalyzerConfig } from './analyzer.js';
import { bm25Idf, type ScoredDoc } from './bm25.js';
import { sealJson } from './checksums.js';
import type { IndexStats, SegmentStats } from './build.js';
import { indexKind, readSegmentsManifest, SEGMENTS_FORMAT, SEGMENTS_VERSION, type SegmentsManifest } from './format.js';
import { openIndex, queryTerms, type OpenOptions, type SearchIndex, type SearchOptions } from './open.js';
import type { ChunkStore, GrepOptions, GrepResult, SearchHit, Searcher } from './types.js';
import { DEFAULT_K, DEFAULT_TIME_LIMIT_MS } from './grep/index.js';

/**
 * An index of several segments, built one after another from one stream (build.ts) so that the
 * build's memory is one segment's, and queried as one index: document numbers run on from segment
 * to segment, and every segment is scored with the collection's statistics (document count, each
 * term's document frequency summed over the segments, average length), so the top k are exactly
 * those of one index over the same chunks, scores to the bit. Segments are searched in order, each
 * told the k-th best score of those before (its documents rank after theirs on a tie), and their
 * lists merged. The segments' files are read lazily, as one index's are.
 */

/** The subdirectory of segment k. */
export function segmentName(k: number): string {
  return `seg-${String(k).padStart(3, '0')}`;
}

function treeBytes(path: string): number {
  const st = statSync(path);
  return st.isDirectory() ? readdirSync(path).reduce((s, f) => s + treeBytes(join(path, f)), 0) : st.size;
}

/** Write the manifest.json of a directory of built segments; returns the collection's counts. */
export function writeSegmentsManifest(dir: string, built: readonly SegmentStats[], analyzer: AnalyzerConfig, bm25: { k1: number; b: number }, source?: string): Omit<IndexStats, 'dir'> {
  let firstDoc = 0;
  const segments = built.map((s, k) => {
    const entry = { dir: segmentName(k), firstDoc, docs: s.docs, tokens: s.tokens };
    firstDoc += s.docs;
    return entry;
  });
  const docs = firstDoc;
  const tokens = built.reduce((n, s) => n + s.tokens, 0);
  const postings = built.reduce((n, s) => n + s.postings, 0);
  const manifest: SegmentsManifest = {
    format: SEGMENTS_FORMAT,
    version: SEGMENTS_VERSION,
    analyzer,
    bm25,
    counts: { docs, postings, tokens },
    avgdl: tokens / docs,
    segments,
    ...(source !== undefined ? { source } : {}),
  };
  writeFileSync(join(dir, 'manifest.json'), sealJson(manifest));
  // Terms: the largest segment's vocabulary (the segments' vocabularies overlap; their union is not counted).
  return { docs, terms: Math.max(...built.map((s) => s.terms)), postings, tokens, bytes: treeBytes(dir) };
}

/**
 * Refuse a corpus whose chunk ids repeat across segments (each segment has checked its own): the
 * segments' ids merged in id order, where a repeat would come twice in a row.
 */
export async function checkDistinctIds(dir: string, count: number): Promise<void> {
  const indexes = await Promise.all(Array.from({ length: count }, (_, k) => openIndex(join(dir, segmentName(k)))));
  try {
    const rank = new Array<number>(count).fill(0);
    const head = indexes.map((ix) => (ix.size > 0 ? ix.store.idAtRank(0) : undefined));
    let previous: string | undefined;
    for (;;) {
      let best = -1;
      for (let s = 0; s < count; s++) if (head[s] !== undefined && (best < 0 || head[s]! < head[best]!)) best = s;
      if (best < 0) return;
      const id = head[best]!;
      if (id === previous) throw new InputError(`duplicate chunk id "${id}" in the corpus`);
      previous = id;
      const next = ++rank[best]!;
      head[best] = next < indexes[best]!.size ? indexes[best]!.store.idAtRank(next) : undefined;
    }
  } finally {
    for (const ix of indexes) ix.close();
  }
}

/** The chunks of all segments, by document number of the collection. */
export class SegmentedChunkStore implements ChunkStore {
  readonly size: number;
  private readonly firsts: number[];

  constructor(private readonly segments: readonly SearchIndex[], firstDocs: readonly number[]) {
    this.firsts = [...firstDocs];
    this.size = segments.reduce((n, s) => n + s.size, 0);
  }

  /** The segment of a document and its number there. */
  locate(doc: number): [SearchIndex, number] {
    if (!Number.isInteger(doc) || doc < 0 || doc >= this.size) throw new RangeError(`document number ${doc} is outside 0..${this.size - 1}`);
    let lo = 0;
    let hi = this.firsts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.firsts[mid]! <= doc) lo = mid;
      else hi = mid - 1;
    }
    return [this.segments[lo]!, doc - this.firsts[lo]!];
  }

  /** Read document `doc` from its segment's store. */
  private fromSegment<T>(doc: number, read: (store: SearchIndex['store'], d: number) => T): T {
    const [s, d] = this.locate(doc);
    return read(s.store, d);
  }
  id(doc: number): string {
    return this.fromSegment(doc, (store, d) => store.id(d));
  }
  title(doc: number): string {
    return this.fromSegment(doc, (store, d) => store.title(d));
  }
  text(doc: number): string {
    return this.fromSegment(doc, (store, d) => store.text(d));
  }
  textBytes(doc: number): Uint8Array {
    return this.fromSegment(doc, (store, d) => store.textBytes(d));
  }
  meta(doc: number): Record<string, unknown> | undefined {
    return this.fromSegment(doc, (store, d) => store.meta(d));
  }
  docOf(id: string): number {
    for (let k = 0; k < this.segments.length; k++) {
      const d = this.segments[k]!.store.docOf(id);
      if (d >= 0) return this.firsts[k]! + d;
    }
    return -1;
  }
  loadAll(): void {
    for (const s of this.segments) s.store.loadAll();
  }
}

/** The top k of two lists ranked best first (score descending, lower document number first on a tie). */
function mergeTop(a: ScoredDoc[], b: ScoredDoc[], k: number): ScoredDoc[] {
  const out: ScoredDoc[] = [];
  let i = 0;
  let j = 0;
  while (out.length < k && (i < a.length || j < b.length)) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && (x.score > y.score || (x.score === y.score && x.doc < y.doc)))) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

/** A query against the segments: its terms with the collection's idf, and each segment's term ids. */
interface SegmentedQuery {
  idfs: number[];
  /** Per segment, per term (in query order), its term id there or -1. */
  local: Int32Array[];
}

export class SegmentedIndex implements Searcher {
  readonly analyzer: Analyzer;
  readonly store: SegmentedChunkStore;

  constructor(readonly dir: string, readonly manifest: SegmentsManifest, readonly segments: readonly SearchIndex[]) {
    this.analyzer = new Analyzer(manifest.analyzer);
    this.store = new SegmentedChunkStore(segments, manifest.segments.map((s) => s.firstDoc));
  }

  get size(): number {
    return this.store.size;
  }

  private analyze(query: string): SegmentedQuery {
    const terms = queryTerms(this.analyzer, query);
    const local = this.segments.map((s) => Int32Array.from(terms, (t) => s.scorer.termId(t)));
    const idfs = terms.map((_, j) => {
      let df = 0;
      this.segments.forEach((s, k) => {
        const id = local[k]![j]!;
        if (id >= 0) df += s.scorer.df(id);
      });
      return bm25Idf(this.manifest.counts.docs, df);
    });
    return { idfs, local };
  }

  /** One segment's term ids for the query and their idfs (the terms it holds, in query order). */
  private termsOf(query: SegmentedQuery, segment: number): { ids: number[]; idfs: number[] } {
    const ids: number[] = [];
    const idfs: number[] = [];
    query.local[segment]!.forEach((id, j) => {
      if (id >= 0) ids.push(id), idfs.push(query.idfs[j]!);
    });
    return { ids, idfs };
  }

  private topK(query: SegmentedQuery, k: number): ScoredDoc[] {
    let top: ScoredDoc[] = [];
    this.segments.forEach((segment, s) => {
      const { ids, idfs } = this.termsOf(query, s);
      if (ids.length === 0) return;
      const floor = top.length >= k ? top[k - 1]!.score : 0;
      const first = this.manifest.segments[s]!.firstDoc;
      const found = segment.scorer.topK(ids, k, { idfs, floor }).map(({ doc, score }) => ({ doc: first + doc, score }));
      top = mergeTop(top, found, k);
    });
    return top;
  }

  /** Top-k document numbers (of the collection) and scores, without snippets. */
  searchDocs(query: string, k = 10): ScoredDoc[] {
    return this.topK(this.analyze(query), k);
  }

  search(query: string, k = 10, options: Omit<SearchOptions, 'k'> = {}): SearchHit[] {
    if (!Number.isInteger(k) || k < 1) throw new InputError(`k must be a whole number >= 1, got ${k}`);
    const q = this.analyze(query);
    return this.topK(q, k).map(({ doc, score }) => {
      const [segment, local] = this.store.locate(doc);
      const s = this.segments.indexOf(segment);
      const { ids, idfs } = this.termsOf(q, s);
      return segment.hit(local, score, new Map(ids.map((id, j) => [id, idfs[j]!])), options.snippetChars);
    });
  }

  /** The first k matches in document order: segment after segment, under one time cap for the call. */
  grep(pattern: string, options: GrepOptions = {}): GrepResult {
    const k = options.k ?? DEFAULT_K;
    const deadline = performance.now() + (options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS);
    const result: GrepResult = { hits: [], timedOut: false, scanned: 0 };
    for (const segment of this.segments) {
      if (result.hits.length >= k) break;
      const left = deadline - performance.now();
      if (left <= 0) {
        result.timedOut = true;
        break;
      }
      const r = segment.grep(pattern, { ...options, k: k - result.hits.length, timeLimitMs: left });
      result.hits.push(...r.hits);
      result.scanned += r.scanned;
      if (r.timedOut) {
        result.timedOut = true;
        break;
      }
    }
    return result;
  }

  read(id: string): Chunk | undefined {
    for (const s of this.segments) {
      const chunk = s.read(id);
      if (chunk) return chunk;
    }
    return undefined;
  }

  has(id: string): boolean {
    return this.segments.some((s) => s.has(id));
  }

  loadAllPostings(): void {
    for (const s of this.segments) s.loadAllPostings();
  }

  close(): void {
    for (const s of this.segments) s.close();
  }
}

/** Open a segmented index: its manifest, then every segment (lazily, as openIndex does), checked against it. */
export async function openSegmentedIndex(dir: string, options: Omit<OpenOptions, 'collection' | 'shared'> = {}): Promise<SegmentedIndex> {
  const m = readSegmentsManifest(dir);
  const segments: SearchIndex[] = [];
  try {
    for (const s of m.segments) {
      const segment = await openIndex(join(dir, s.dir), { ...options, collection: { avgdl: m.avgdl } });
      segments.push(segment);
      const sm = segment.manifest;
      if (sm.counts.docs !== s.docs || sm.counts.tokens !== s.tokens || JSON.stringify(sm.analyzer) !== JSON.stringify(m.analyzer) || sm.bm25.k1 !== m.bm25.k1 || sm.bm25.b !== m.bm25.b) {
        throw new InputError(`index ${dir}: segment ${s.dir} does not match the manifest (documents, tokens, analyzer or BM25 parameters); rebuild with \`sleuth index\``);
      }
    }
  } catch (err) {
    for (const s of segments) s.close();
    throw err;
  }
  return new SegmentedIndex(dir, m, segments);
}

/** Open an index directory of one segment (openIndex) or several (openSegmentedIndex). */
export async function openSearcher(dir: string, options: OpenOptions = {}): Promise<SearchIndex | SegmentedIndex> {
  if (indexKind(dir) === 'index') return openIndex(dir, options);
  if (options.shared) throw new InputError(`index ${dir} has several segments; shared bytes are for an index of one`);
  return openSegmentedIndex(dir, options);
}
