import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { endianness } from 'node:os';
import { InputError } from '../errors.js';
import type { Chunk } from '../corpus/chunk.js';
import { Analyzer } from './analyzer.js';
import { Bm25Scorer, type ScoredDoc } from './bm25.js';
import { readManifest, readWhole, type Manifest } from './format.js';
import { IndexSums, SUMS_FILE } from './checksums.js';
import { checksumOf } from '../files/checksum.js';
import { DamagedIndexError } from '../errors.js';
import { GREP_FILE } from './grep/format.js';
import { grep, GrepIndex, loadGrepIndex } from './grep/index.js';
import { makeSnippet, type TermHit } from './snippet.js';
import { WordTable } from './tokenize.js';
import { IndexChunkStore, type ByteSource } from './store.js';
import { PagedFile } from './lazy.js';
import { blocksFileOf, Lz4TextShard } from './compressed-texts.js';
import { ScoringMemory } from './scoring-memory.js';
import { blockOffsets } from './block-postings.js';
import type { GrepOptions, GrepResult, SearchHit, Searcher } from './types.js';

export interface OpenOptions {
  /** Snippet length in characters for search hits (default 240). */
  snippetChars?: number;
  /** false: score in TypeScript even where the WebAssembly loops are built (for comparisons). */
  scoringKernel?: boolean;
  /** The texts and grep prefilter already in memory (readSharedBytes), used instead of the files. */
  shared?: SharedIndexBytes;
  /**
   * When this index is one segment of a collection (segments.ts): the collection's average
   * document length, which BM25's length norms use instead of this index's own.
   */
  collection?: { avgdl: number };
}

/**
 * An index's largest files, the chunk texts and the grep prefilter (about two thirds of a loaded
 * index), read once into SharedArrayBuffers: the search pool's worker threads all view this one
 * copy instead of reading their own.
 */
export interface SharedIndexBytes {
  /** Each text shard's bytes (compressed, where the index stores them so), in the manifest's order. */
  texts: Uint8Array[];
  /** grep.bin's bytes; null when the index has no grep prefilter. */
  grep: Uint8Array | null;
}

/** Read an index's texts and grep prefilter into shared memory (see SharedIndexBytes). */
export function readSharedBytes(dir: string): SharedIndexBytes {
  const m = readManifest(dir);
  const sums = readSums(dir, m);
  // Checked whole as they are read: the workers that view them check nothing themselves.
  const read = (file: string, expected?: number) => {
    let bytes: Uint8Array;
    try {
      bytes = readWhole(join(dir, file), expected, true);
    } catch (err) {
      return unreadableFile(dir, file, err);
    }
    sums?.of(file).checkWhole(bytes);
    return bytes;
  };
  const texts = m.textShards.map((s) => read(s.file, m.files[s.file]));
  return { texts, grep: existsSync(join(dir, GREP_FILE)) ? read(GREP_FILE) : null };
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

/**
 * A query's distinct terms, in the order they come. Empty and stopword-only queries are
 * InputErrors (the caller asked nothing); terms absent from the index simply match nothing.
 */
export function queryTerms(analyzer: Analyzer, query: string): string[] {
  if (query.trim() === '') throw new InputError('empty query: give some words to search for');
  const terms = [...new Set(analyzer.terms(query))];
  if (terms.length === 0) throw new InputError(`query ${JSON.stringify(query)} has no searchable words (only stopwords or punctuation)`);
  return terms;
}

/** A built index, loaded: BM25 search, grep, read by id. */
export class SearchIndex implements Searcher {
  readonly analyzer: Analyzer;

  constructor(
    readonly dir: string,
    readonly manifest: Manifest,
    readonly store: IndexChunkStore,
    readonly scorer: Bm25Scorer,
    /** Reads the grep prefilter (undefined when the index has none); called on the first grep. */
    private readonly loadGrep: () => GrepIndex | undefined,
    private readonly snippetChars: number,
    /** The files read on demand, closed by close(). */
    private readonly files: readonly PagedFile[] = [],
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
    const terms = queryTerms(this.analyzer, query);
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
    return this.scorer.topK(q.termIds, k).map(({ doc, score }) => this.hit(doc, score, q.weights, options.snippetChars));
  }

  /** Document `doc` as a hit: its snippet is around the words of the terms in `weights` (term id -> weight). */
  hit(doc: number, score: number, weights: Map<number, number>, snippetChars = this.snippetChars): SearchHit {
    return { id: this.store.id(doc), title: this.store.title(doc), score, snippet: this.snippet(this.store.text(doc), weights, snippetChars) };
  }

  /** Surface word (as in the text) -> term id in this index, or -1: snippets look words up in place. */
  private readonly surfaceTerms = new WordTable();
  private readonly termOfWord = (word: string): number => {
    const term = this.analyzer.term(word);
    return term === null ? -1 : this.scorer.termId(term);
  };
  /** A text's words' term ids and spans (reused: snippets are made for every hit). */
  private wordTerms = new Int32Array(1024);
  private wordSpans = new Uint32Array(2048);

  private snippet(text: string, weights: Map<number, number>, length: number): string {
    if (text.length <= length) return text;
    // A text of L code units has at most L/2 + 1 words.
    const room = (text.length >>> 1) + 1;
    if (room > this.wordTerms.length) {
      this.wordTerms = new Int32Array(2 * room);
      this.wordSpans = new Uint32Array(4 * room);
    }
    const terms = this.wordTerms;
    const spans = this.wordSpans;
    const count = this.surfaceTerms.lookupAll(text, this.termOfWord, terms, 0, spans);
    const hits: TermHit[] = [];
    for (let i = 0; i < count; i++) {
      const t = terms[i]!;
      const weight = t < 0 ? undefined : weights.get(t);
      if (weight !== undefined) hits.push({ start: spans[2 * i]!, end: spans[2 * i + 1]!, term: t, weight });
    }
    return makeSnippet(text, hits, length);
  }

  private grepIndex: GrepIndex | undefined | null = null;

  /** The grep prefilter, read on first use; undefined when the index has none. */
  grepPrefilter(): GrepIndex | undefined {
    if (this.grepIndex === null) this.grepIndex = this.loadGrep();
    return this.grepIndex;
  }

  grep(pattern: string, options?: GrepOptions): GrepResult {
    return grep(this.store, this.grepPrefilter(), pattern, options);
  }

  /** Read every term's postings now (for a long-lived process that will need most of them anyway). */
  loadAllPostings(): void {
    this.scorer.p.load?.(Array.from({ length: this.scorer.termCount }, (_, t) => t));
  }

  /** Close the index files (a closed index cannot read what it has not read yet). */
  close(): void {
    for (const f of this.files) f.close();
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
 * Load an index directory: check the manifest (format, version, file sizes), read the small
 * arrays (offsets, lengths, vocabulary) into memory and view each as its typed array, and open the
 * large ones (texts, postings, ids, titles) as PagedFiles, read page by page when first needed.
 * Nothing is parsed or rebuilt; the grep prefilter is read on the first grep.
 */
export async function openIndex(dir: string, options: OpenOptions = {}): Promise<SearchIndex> {
  const m = readManifest(dir);
  if (endianness() !== 'LE') throw new Error('sleuth indexes are little-endian; this machine is big-endian');
  // Files read whole here are checked whole; files read a page at a time, each page as it is read.
  const sums = readSums(dir, m);
  const sizeOf = (name: string): number => {
    const expected = m.files[name];
    if (expected === undefined) throw new InputError(`index ${dir}: manifest lists no ${name}; rebuild with \`sleuth index\``);
    return expected;
  };
  const unreadable = (name: string, err: unknown): never => unreadableFile(dir, name, err);
  const load = (name: string): Uint8Array => {
    let bytes: Uint8Array;
    try {
      bytes = readWhole(join(dir, name), sizeOf(name));
    } catch (err) {
      return unreadable(name, err);
    }
    sums?.of(name).checkWhole(bytes);
    return bytes;
  };
  const files: PagedFile[] = [];
  const paged = (name: string, pageBytes: number, target?: Uint8Array): PagedFile => {
    try {
      const f = new PagedFile(join(dir, name), sizeOf(name), pageBytes, target, sums?.of(name));
      files.push(f);
      return f;
    } catch (err) {
      for (const f of files) f.close();
      return unreadable(name, err);
    }
  };
  const wrongSize = (name: string, entries: number, expected: number) =>
    new InputError(`index ${dir}: ${name} holds ${entries} entries, expected ${expected}; rebuild with \`sleuth index\``);
  const u32 = (name: string, length: number) => {
    const b = load(name);
    if (b.byteLength !== length * 4) throw wrongSize(name, b.byteLength / 4, length);
    return new Uint32Array(b.buffer, b.byteOffset, length);
  };
  const { docs: N, terms: T, postings: P } = m.counts;
  /**
   * A text shard's bytes. Plain texts are read one at a time at random (reads, snippets, grep
   * hits): pages of 4 KiB, each a few chunks, so a read copies and faults in little more than the
   * chunk it wants. Compressed ones a block (16 KiB before compression) at a time.
   */
  const textShard = (s: Manifest['textShards'][number], i: number): ByteSource => {
    const raw = options.shared ? inMemory(options.shared.texts[i], s.file, sizeOf(s.file)) : paged(s.file, m.textCodec ? 1 << 14 : 1 << 12);
    if (m.textCodec === undefined) return raw;
    const name = blocksFileOf(s.file);
    const index = load(name);
    if (index.byteLength % 8 !== 0 || index.byteLength < 8) throw wrongSize(name, index.byteLength / 4, 2);
    const shard = new Lz4TextShard(raw, new Uint32Array(index.buffer, index.byteOffset, index.byteLength / 4), join(dir, s.file));
    if (shard.size !== s.bytes) throw new InputError(`index ${dir}: ${name} covers ${shard.size} bytes of text, the manifest says ${s.bytes}; rebuild with \`sleuth index\``);
    return shard;
  };
  const texts = load('text.off');
  if (texts.byteLength !== (N + 1) * 8) throw wrongSize('text.off', texts.byteLength / 8, N + 1);
  const maxTfBytes = load('term.maxtf');
  if (maxTfBytes.byteLength !== T * 8) throw wrongSize('term.maxtf', maxTfBytes.byteLength / 8, T);
  const idOff = u32('ids.off', N + 1);
  const idOrder = u32('ids.order', N);
  const titleOff = u32('titles.off', N + 1);
  const metaOff = u32('meta.off', N + 1);
  const doclen = u32('doclen', N);
  const termBytes = load('terms.bin');
  const termOff = u32('terms.off', T + 1);
  const postOff = u32('post.off', T + 1);
  if (postOff[T] !== P) throw new InputError(`index ${dir}: post.off ends at ${postOff[T]} postings, the manifest says ${P}; rebuild with \`sleuth index\``);
  const blockOff = blockOffsets(postOff);
  const B = blockOff[T]!;
  if (sizeOf('block.at') !== (B + 1) * 4) throw wrongSize('block.at', sizeOf('block.at') / 4, B + 1);
  if (sizeOf('block.last') !== B * 4) throw wrongSize('block.last', sizeOf('block.last') / 4, B);
  if (sizeOf('block.max') !== B * 4) throw wrongSize('block.max', sizeOf('block.max') / 4, B);
  if (sizeOf('post.data') % 4 !== 0) throw new InputError(`index ${dir}: post.data is ${sizeOf('post.data')} bytes, not whole 4-byte words; rebuild with \`sleuth index\``);
  const W = sizeOf('post.data') / 4;

  // Postings are read a term (a long run) at a time; ids, titles and texts one chunk at a time.
  // They are read into the memory of the WebAssembly scoring loops where those are built.
  const memory = options.scoringKernel === false ? undefined : ScoringMemory.create(N, W, B);
  const dataFile = paged('post.data', 1 << 16, memory && ScoringMemory.bytesOf(memory.words));
  const atFile = paged('block.at', 1 << 12, memory && ScoringMemory.bytesOf(memory.blockAt));
  const lastFile = paged('block.last', 1 << 12, memory && ScoringMemory.bytesOf(memory.blockLast));
  const maxFile = paged('block.max', 1 << 12, memory && ScoringMemory.bytesOf(memory.blockMax));
  const blockAt = memory?.blockAt ?? new Uint32Array(atFile.bytes.buffer, atFile.bytes.byteOffset, B + 1);
  const store = new IndexChunkStore(
    paged('ids.bin', 1 << 12), idOff, idOrder,
    paged('titles.bin', 1 << 12), titleOff,
    m.textShards.map((s, i) => ({ firstDoc: s.firstDoc, start: s.start, bytes: textShard(s, i) })),
    new Float64Array(texts.buffer, texts.byteOffset, N + 1),
    paged('meta.bin', 1 << 12), metaOff,
  );
  // A term's blocks are read from disk the first time a query needs them.
  const termLoaded = new Uint8Array(T);
  const loadTerms = (termIds: readonly number[]) => {
    for (const t of termIds) {
      if (termLoaded[t] === 1) continue;
      const first = blockOff[t]!;
      const end = blockOff[t + 1]!;
      atFile.ensure(first * 4, (end + 1) * 4);
      lastFile.ensure(first * 4, end * 4);
      maxFile.ensure(first * 4, end * 4);
      const from = blockAt[first]!;
      const to = blockAt[end]!;
      if (!(from <= to && to <= W)) throw new InputError(`index ${dir}: block.at puts term ${t}'s blocks at words ${from}..${to} of post.data's ${W}; rebuild with \`sleuth index\``);
      dataFile.ensure(from * 4, to * 4);
      termLoaded[t] = 1;
    }
  };
  const avgdl = options.collection?.avgdl ?? m.avgdl;
  const scorer = new Bm25Scorer({
    docs: N, avgdl, k1: m.bm25.k1, b: m.bm25.b,
    ...(avgdl !== m.avgdl ? { boundScale: Math.max(1, avgdl / m.avgdl) } : {}),
    doclen, termBytes, termOff, postOff, blockOff, blockAt,
    blockLast: memory?.blockLast ?? new Uint32Array(lastFile.bytes.buffer, lastFile.bytes.byteOffset, B),
    blockMax: memory?.blockMax ?? new Float32Array(maxFile.bytes.buffer, maxFile.bytes.byteOffset, B),
    words: memory?.words ?? new Uint32Array(dataFile.bytes.buffer, dataFile.bytes.byteOffset, W),
    maxTf: new Float64Array(maxTfBytes.buffer, maxTfBytes.byteOffset, T),
    load: loadTerms,
    ...(memory ? { memory } : {}),
  });
  const shared = options.shared;
  const loadGrep = shared ? () => (shared.grep ? new GrepIndex(Buffer.from(shared.grep.buffer, shared.grep.byteOffset, shared.grep.byteLength), join(dir, GREP_FILE)) : undefined) : () => loadGrepIndex(dir, sums && m.files[GREP_FILE] !== undefined ? sums.of(GREP_FILE) : undefined);
  return new SearchIndex(dir, m, store, scorer, loadGrep, options.snippetChars ?? 240, files);
}

/**
 * The index's block checksums (checksums.ts), its sums file checked whole against the manifest;
 * undefined for an index built before them (readManifest has warned).
 */
export function readSums(dir: string, m: Manifest): IndexSums | undefined {
  if (!m.checksums) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = readWhole(join(dir, SUMS_FILE), m.files[SUMS_FILE]);
  } catch (err) {
    return unreadableFile(dir, SUMS_FILE, err);
  }
  const sum = checksumOf(bytes);
  if (sum !== m.checksums.sum) throw new DamagedIndexError(dir, SUMS_FILE, `it has checksum ${sum}, the manifest records ${m.checksums.sum}`);
  return new IndexSums(dir, m.files, new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
}

/** An index file that could not be read, as an InputError naming it (an InputError passes as it is). */
function unreadableFile(dir: string, name: string, err: unknown): never {
  if (err instanceof InputError) throw err;
  throw new InputError(`index ${dir}: cannot read ${name} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); rebuild with \`sleuth index\``);
}

/** Bytes already in memory as a text shard's source, checked against the manifest's size. */
function inMemory(bytes: Uint8Array | undefined, file: string, size: number): ByteSource {
  if (bytes === undefined || bytes.length !== size) throw new InputError(`shared bytes of ${file} are ${bytes?.length ?? 'missing'}, the manifest says ${size} bytes`);
  return { range: (from, to) => bytes.subarray(from, to) };
}
