import { join } from 'node:path';
import { endianness } from 'node:os';
import { InputError } from '../errors.js';
import type { Chunk } from '../corpus/chunk.js';
import { Analyzer } from './analyzer.js';
import { Bm25Scorer, type ScoredDoc } from './bm25.js';
import { readManifest, readWhole, type Manifest } from './format.js';
import { grep, loadGrepIndex, type GrepIndex } from './grep/index.js';
import { makeSnippet, type TermHit } from './snippet.js';
import { scanWords, WordTable } from './tokenize.js';
import { IndexChunkStore } from './store.js';
import type { GrepOptions, GrepResult, SearchHit, Searcher } from './types.js';

export interface OpenOptions {
  /** Snippet length in characters for search hits (default 240). */
  snippetChars?: number;
  /** Tuning: queries with at least this many postings sample a score floor first (see Bm25Scorer). */
  seedMinPostings?: number;
}

export interface SearchOptions {
  k?: number;
  snippetChars?: number;
}

/** The query's distinct terms that exist in the index, with their idf (the snippet weights). */
interface AnalyzedQuery {
  termIds: number[];
  weights: Map<number, number>;
}

/** A built index, loaded: BM25 search, grep, read by id. */
export class SearchIndex implements Searcher {
  readonly analyzer: Analyzer;

  constructor(
    readonly dir: string,
    readonly manifest: Manifest,
    readonly store: IndexChunkStore,
    readonly scorer: Bm25Scorer,
    private readonly grepIndex: GrepIndex | undefined,
    private readonly snippetChars: number,
  ) {
    this.analyzer = new Analyzer(manifest.analyzer);
  }

  get size(): number {
    return this.store.size;
  }

  /**
   * Analyze a query. Empty and stopword-only queries are InputErrors (the caller asked nothing);
   * terms absent from the index simply match nothing.
   */
  analyze(query: string): AnalyzedQuery {
    if (query.trim() === '') throw new InputError('empty query: give some words to search for');
    const terms = [...new Set(this.analyzer.terms(query))];
    if (terms.length === 0) throw new InputError(`query ${JSON.stringify(query)} has no searchable words (only stopwords or punctuation)`);
    const termIds: number[] = [];
    const weights = new Map<number, number>();
    for (const t of terms) {
      const id = this.scorer.termId(t);
      if (id < 0) continue;
      termIds.push(id);
      weights.set(id, this.scorer.idf(id));
    }
    return { termIds, weights };
  }

  /** Top-k document numbers and scores, without snippets. */
  searchDocs(query: string, k = 10): ScoredDoc[] {
    return this.scorer.topK(this.analyze(query).termIds, k);
  }

  search(query: string, k = 10, options: Omit<SearchOptions, 'k'> = {}): SearchHit[] {
    if (!Number.isInteger(k) || k < 1) throw new InputError(`k must be a whole number >= 1, got ${k}`);
    const q = this.analyze(query);
    const length = options.snippetChars ?? this.snippetChars;
    return this.scorer.topK(q.termIds, k).map(({ doc, score }) => ({
      id: this.store.id(doc),
      title: this.store.title(doc),
      score,
      snippet: this.snippet(this.store.text(doc), q.weights, length),
    }));
  }

  /** Surface word (as in the text) -> term id in this index, or -1: snippets look words up in place. */
  private readonly surfaceTerms = new WordTable();

  private snippet(text: string, weights: Map<number, number>, length: number): string {
    if (text.length <= length) return text;
    const hits: TermHit[] = [];
    scanWords(text, (start, end, hash) => {
      let t = this.surfaceTerms.get(text, start, end, hash);
      if (t === undefined) {
        const word = text.slice(start, end);
        const term = this.analyzer.term(word);
        t = term === null ? -1 : this.scorer.termId(term);
        this.surfaceTerms.add(word, hash, t);
      }
      const weight = weights.get(t);
      if (weight !== undefined) hits.push({ start, end, term: t, weight });
    });
    return makeSnippet(text, hits, length);
  }

  grep(pattern: string, options?: GrepOptions): GrepResult {
    return grep(this.store, this.grepIndex, pattern, options);
  }

  read(id: string): Chunk | undefined {
    const doc = this.store.docOf(id);
    if (doc < 0) return undefined;
    const chunk: Chunk = { id, title: this.store.title(doc), text: this.store.text(doc) };
    const meta = this.store.meta(doc);
    if (meta) chunk.meta = meta;
    return chunk;
  }

  has(id: string): boolean {
    return this.store.docOf(id) >= 0;
  }
}

/**
 * Load an index directory: check the manifest (format, version, file sizes), then read each file
 * into memory and view it as its typed array. Nothing is parsed or rebuilt.
 */
export async function openIndex(dir: string, options: OpenOptions = {}): Promise<SearchIndex> {
  const m = readManifest(dir);
  if (endianness() !== 'LE') throw new Error('sleuth indexes are little-endian; this machine is big-endian');
  const load = (name: string): Uint8Array => {
    const expected = m.files[name];
    if (expected === undefined) throw new InputError(`index ${dir}: manifest lists no ${name}; rebuild with \`sleuth index\``);
    try {
      return readWhole(join(dir, name), expected);
    } catch (err) {
      if (err instanceof InputError) throw err;
      throw new InputError(`index ${dir}: cannot read ${name} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); rebuild with \`sleuth index\``);
    }
  };
  const u32 = (name: string, length: number) => {
    const b = load(name);
    if (b.byteLength !== length * 4) throw new InputError(`index ${dir}: ${name} holds ${b.byteLength / 4} entries, expected ${length}; rebuild with \`sleuth index\``);
    return new Uint32Array(b.buffer, b.byteOffset, length);
  };
  const { docs: N, terms: T, postings: P } = m.counts;
  const texts = load('text.off');
  if (texts.byteLength !== (N + 1) * 8) throw new InputError(`index ${dir}: text.off has the wrong size; rebuild with \`sleuth index\``);
  const tfBytes = load('post.tfs');
  if (tfBytes.byteLength !== P * 2) throw new InputError(`index ${dir}: post.tfs has the wrong size; rebuild with \`sleuth index\``);
  const maxTfBytes = load('term.maxtf');
  if (maxTfBytes.byteLength !== T * 8) throw new InputError(`index ${dir}: term.maxtf has the wrong size; rebuild with \`sleuth index\``);

  const store = new IndexChunkStore(
    load('ids.bin'), u32('ids.off', N + 1), u32('ids.order', N),
    load('titles.bin'), u32('titles.off', N + 1),
    m.textShards.map((s) => ({ firstDoc: s.firstDoc, start: s.start, bytes: load(s.file) })),
    new Float64Array(texts.buffer, texts.byteOffset, N + 1),
    load('meta.bin'), u32('meta.off', N + 1),
  );
  const scorer = new Bm25Scorer({
    docs: N, avgdl: m.avgdl, k1: m.bm25.k1, b: m.bm25.b,
    doclen: u32('doclen', N),
    termBytes: load('terms.bin'), termOff: u32('terms.off', T + 1),
    postOff: u32('post.off', T + 1), postDocs: u32('post.docs', P),
    postTfs: new Uint16Array(tfBytes.buffer, tfBytes.byteOffset, P),
    maxTf: new Float64Array(maxTfBytes.buffer, maxTfBytes.byteOffset, T),
  }, options.seedMinPostings);
  return new SearchIndex(dir, m, store, scorer, loadGrepIndex(dir), options.snippetChars ?? 240);
}
