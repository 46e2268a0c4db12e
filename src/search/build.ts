import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InputError } from '../errors.js';
import { acquireLock } from '../files/lock.js';
import { checkReplaceable, makeTempSibling, replaceDir, type OwnedDirKind } from '../files/owned-dir.js';
import { chunkText, isUtf8Chunk, type SourceChunk } from '../corpus/chunk.js';
import { Analyzer, type AnalyzerOptions } from './analyzer.js';
import { Grow, PairChunks, Utf8Sink, type PostingPairs } from './buffers.js';
import { WordTable } from './tokenize.js';
import { WordKernel } from './word-loops.js';
import { checksumOf } from '../files/checksum.js';
import { BLOCK_BYTES, CHECKSUM_ALGORITHM, fileChecksums, sealJson, sumFiles, SUMS_FILE } from './checksums.js';
import { COMPRESSED_INDEX_VERSION, INDEX_FORMAT, INDEX_VERSION, SEGMENTS_FORMAT, TEXT_SHARD_BYTES, writeWhole, type Manifest } from './format.js';
import { TEXT_CODEC } from './compressed-texts.js';
import { BlockPostingsWriter, MAX_POSTING_TF } from './block-postings.js';
import { checkDistinctIds, segmentName, writeSegmentsManifest } from './segments.js';
import type { FromTextWorker, TextWorkerData, ToTextWorker } from './grep-worker.js';
import { TextSide, type ShardInfo } from './text-side.js';

export interface BuildOptions {
  analyzer?: AnalyzerOptions;
  /** BM25 term-frequency saturation (default 1.5). */
  k1?: number;
  /** BM25 length normalisation (default 0.75). */
  b?: number;
  /** Called every few thousand chunks and once at the end with the number indexed so far. */
  onProgress?: (docs: number) => void;
  /** Recorded in the manifest as `source` (what the index was built from). */
  source?: string;
  /** Largest text shard file (default 1 GiB; smaller only to exercise sharding in tests). */
  textShardBytes?: number;
  /**
   * Write the texts and build the grep prefilter in a worker thread, beside the postings (default
   * true). Running from TypeScript sources (tests), where no compiled worker exists, both are
   * done in this thread.
   */
  parallel?: boolean;
  /**
   * Split words with the WebAssembly loops (./assembly/words.ts) when they are built (default
   * true); false uses the TypeScript ones, which give the same index (the tests compare the two).
   */
  wasm?: boolean;
  /** Replace whatever is at the output path, even if sleuth did not write it (the CLI's --force). */
  force?: boolean;
  /** Store the chunk texts compressed with LZ4, in blocks read one at a time (compressed-texts.ts). */
  compressTexts?: boolean;
  /**
   * Postings a segment holds at most (default SEGMENT_POSTINGS): the build's memory is one
   * segment's postings, and a corpus with more is written as several segments, queried together
   * as one index (segments.ts). Small only in tests, to cross many.
   */
  segmentPostings?: number;
}

/**
 * Postings per segment by default: about 2.5 million chunks of 150 words, 1.6 GB of (term, tf)
 * pairs while it is built; every array of a segment stays within what one WebAssembly memory
 * (the scoring loops') and one Node array can hold.
 */
export const SEGMENT_POSTINGS = 1 << 28;
/**
 * The word loops' memory (pairs, the surface-word table, inputs) at which a segment ends whatever
 * its postings: 3 GiB of the 4 GiB one WebAssembly memory holds, so a corpus of many distinct words
 * per posting (identifiers, hashes) starts a segment rather than running out.
 */
export const SEGMENT_KERNEL_BYTES = 3 * 2 ** 30;

/**
 * The chunks to index, in order, one at a time or in batches (readCorporaBatches): a corpus of
 * millions of chunks read a batch at a time saves an asynchronous step per chunk.
 */
export type ChunkSource = AsyncIterable<SourceChunk | readonly SourceChunk[]>;

export interface IndexStats {
  dir: string;
  docs: number;
  terms: number;
  postings: number;
  tokens: number;
  bytes: number;
}

const MAX_TF = MAX_POSTING_TF;

/** Where the texts are stored and the grep prefilter built (TextSide): in this thread, or in a worker. */
interface TextSink {
  /** Whether addUtf8 can be used (the WebAssembly word loop runs there). */
  readonly takesUtf8: boolean;
  addText(doc: number, text: string): Promise<void> | void;
  /** The text as UTF-8 (a view the caller may reuse once this returns), `units` UTF-16 code units long. */
  addUtf8(doc: number, bytes: Uint8Array, units: number): Promise<void> | void;
  /** Write the rest of the texts, text.off and grep.bin; resolves to the text shards. */
  finish(): Promise<ShardInfo[]>;
  /** Stop after a failure; idempotent. */
  abort(): Promise<void>;
}

function inThread(dir: string, shardBytes: number, wasm: boolean, compress: boolean): TextSink {
  const side = new TextSide(dir, shardBytes, wasm, compress);
  return {
    takesUtf8: side.takesUtf8,
    addText: (doc, text) => side.addText(doc, text),
    addUtf8: (doc, bytes, units) => side.addUtf8(doc, bytes, units),
    finish: async () => side.finish(),
    abort: async () => side.close(),
  };
}

const WORKER_URL = new URL('./grep-worker.js', import.meta.url);
/** Texts per message at most, and messages in flight before the builder waits for the worker. */
const BATCH = 512;
const IN_FLIGHT = 8;
/**
 * Bytes of UTF-8 per message at most: a message is a slot of a ring of IN_FLIGHT shared buffers,
 * reused batch after batch (a fresh buffer per batch would be a gigabyte of first-touched memory
 * at a million chunks). A longer text travels in a buffer of its own.
 */
const SLOT_BYTES = 4 << 20;

function inWorker(dir: string, shardBytes: number, wasm: boolean, compress: boolean): TextSink {
  const ring = { buffer: new SharedArrayBuffer(IN_FLIGHT * SLOT_BYTES), slots: IN_FLIGHT, slotBytes: SLOT_BYTES };
  const worker = new Worker(WORKER_URL, { workerData: { dir, wasm, ring, shardBytes, compress } satisfies TextWorkerData });
  // Whether the worker splits UTF-8 (the WebAssembly loop is built); it decides the same way.
  const takesUtf8 = wasm && WordKernel.available();
  let texts: string[] = [];
  let ends: number[] = [];
  let units: number[] = [];
  let used = 0;
  let first = 0;
  let sent = 0;
  let inFlight = 0;
  let failure: Error | undefined;
  let exited = false;
  let done: ShardInfo[] | undefined;
  // Whoever waits for the worker's next message (an ack, 'done', 'closed' or its end).
  let waiter: (() => void) | undefined;
  const wake = () => {
    const w = waiter;
    waiter = undefined;
    w?.();
  };
  const next = () => new Promise<void>((resolve) => (waiter = resolve));
  worker.on('message', (msg: FromTextWorker) => {
    if (msg === 'ack') inFlight--;
    else if (msg === 'closed') exited = true;
    else if ('done' in msg) done = msg.done;
    else failure ??= new Error(`index grep worker: ${msg.error}`);
    wake();
  });
  worker.on('error', (err) => {
    failure ??= err;
    wake();
  });
  worker.on('exit', (code) => {
    exited = true;
    failure ??= new Error(`index grep worker exited (code ${code})`);
    wake();
  });
  const post = (msg: ToTextWorker) => worker.postMessage(msg);
  const slots = Array.from({ length: IN_FLIGHT }, (_, k) => new Uint8Array(ring.buffer, k * SLOT_BYTES, SLOT_BYTES));
  const slot = () => slots[sent % IN_FLIGHT]!;
  /** Send the batch so far (already in its slot). */
  const send = () => {
    if (texts.length > 0) post({ texts, first });
    else if (ends.length > 0) post({ utf8: { slot: sent % IN_FLIGHT }, ends: Uint32Array.from(ends), units: Uint32Array.from(units), first });
    else return;
    first += texts.length + ends.length;
    texts = [];
    ends = [];
    units = [];
    used = 0;
    sent++;
    inFlight++;
  };
  /** Send the batch so far; resolves once fewer than IN_FLIGHT batches are unanswered. */
  const flush = (): Promise<void> | void => {
    send();
    return backpressure();
  };
  /** Resolves once fewer than IN_FLIGHT messages are unanswered (nothing to wait for if so already). */
  const backpressure = (): Promise<void> | void => {
    if (inFlight < IN_FLIGHT) return;
    return (async () => {
      while (inFlight >= IN_FLIGHT && !failure) await next();
      if (failure) throw failure;
    })();
  };
  return {
    takesUtf8,
    addText(_doc, text) {
      if (failure) throw failure;
      texts.push(text);
      if (texts.length === BATCH) return flush();
    },
    addUtf8(_doc, bytes, length) {
      if (failure) throw failure;
      if (bytes.length > SLOT_BYTES) {
        // A text longer than a slot: after the batch so far, in a message of its own (counted in
        // flight like a batch, which keeps the slots' reuse safe: acks come in order).
        const send = () => {
          post({ utf8: { bytes: bytes.slice() }, ends: Uint32Array.of(bytes.length), units: Uint32Array.of(length), first });
          first++;
          inFlight++;
          return backpressure();
        };
        const waiting = flush();
        return waiting ? waiting.then(send) : send();
      }
      const waiting = used + bytes.length > SLOT_BYTES ? flush() : undefined;
      const write = () => {
        slot().set(bytes, used);
        used += bytes.length;
        ends.push(used);
        units.push(length);
        if (ends.length === BATCH) return flush();
      };
      // The slot is free only once the worker has answered for the batch that used it before.
      return waiting ? waiting.then(write) : write();
    },
    async finish() {
      // Posted now, not after an await: the caller goes on with the postings synchronously, and
      // the worker should write grep.bin meanwhile. The last batch is in its slot already.
      send();
      post({ finish: true });
      while (!done && !failure) await next();
      // Terminating makes the worker exit with code 1: decide on failure before.
      const failed = failure;
      await worker.terminate();
      if (failed) throw failed;
      return done!; // the loop above ends on done or a failure
    },
    async abort() {
      if (!exited) {
        post({ abort: true });
        while (!exited) await next();
      }
      await worker.terminate();
    },
  };
}

/** The worker when asked and available (compiled JavaScript), else this thread. */
function textSink(dir: string, shardBytes: number, parallel: boolean, wasm: boolean, compress: boolean): TextSink {
  return parallel && existsSync(fileURLToPath(WORKER_URL)) ? inWorker(dir, shardBytes, wasm, compress) : inThread(dir, shardBytes, wasm, compress);
}

function isBatch(item: SourceChunk | readonly SourceChunk[]): item is readonly SourceChunk[] {
  return Array.isArray(item);
}

/** A chunk source read a batch at a time, where a full segment puts back the chunks it did not take. */
class ChunkCursor {
  private readonly it: AsyncIterator<SourceChunk | readonly SourceChunk[]>;
  private rest: readonly SourceChunk[] | undefined;

  constructor(source: ChunkSource) {
    this.it = source[Symbol.asyncIterator]();
  }

  async next(): Promise<readonly SourceChunk[] | undefined> {
    const rest = this.rest;
    if (rest) {
      this.rest = undefined;
      return rest;
    }
    const { done, value } = await this.it.next();
    if (done) return undefined;
    return isBatch(value) ? value : [value];
  }

  putBack(rest: readonly SourceChunk[]): void {
    if (rest.length > 0) this.rest = rest;
  }

  /** Stop reading early (a failure): the source closes its files. */
  async close(): Promise<void> {
    await this.it.return?.();
  }
}

/**
 * Write the postings from the pairs (term ids already in terms.bin order) block-compressed into
 * post.data, and their block metadata (block.at, block.last, block.max); fill maxTf.
 */
function writePostings(dir: string, pairs: PostingPairs, postOff: Uint32Array, norms: Float64Array, maxTf: Float64Array): void {
  const writer = new BlockPostingsWriter(join(dir, 'post.data'), norms);
  let blocks;
  try {
    // The layout hands over its passes in term order, each a run of whole terms' postings.
    let term = 0;
    pairs.layout(postOff, norms, maxTf, (docs, tfs) => {
      for (let at = 0; at < docs.length; term++) {
        const n = postOff[term + 1]! - postOff[term]!;
        writer.addTerm(docs.subarray(at, at + n), tfs.subarray(at, at + n));
        at += n;
      }
    });
    blocks = writer.finish();
  } catch (err) {
    writer.abort();
    throw err;
  }
  writeWhole(join(dir, 'block.at'), blocks.blockAt);
  writeWhole(join(dir, 'block.last'), blocks.blockLast);
  writeWhole(join(dir, 'block.max'), blocks.blockMax);
}

/** Byte-wise comparison of UTF-8 strings, the order of terms.bin (what the binary search uses). */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** An index directory is recognised by its manifest.json naming the index format (of one segment or several). */
export const INDEX_DIR: OwnedDirKind = {
  what: 'index',
  manifest: 'manifest.json',
  recognise: (m) => typeof m === 'object' && m !== null && [INDEX_FORMAT, SEGMENTS_FORMAT].includes((m as { format?: unknown }).format as string),
};

/** Move a finished index's files into `to`, a new subdirectory: it becomes the first segment of several. */
function moveIntoSegment(dir: string, to: string): void {
  const names = readdirSync(dir);
  mkdirSync(to);
  for (const name of names) renameSync(join(dir, name), join(to, name));
}

/**
 * Index chunks into `outDir`: stream them once (chunk text goes straight to disk; memory holds the
 * postings), then sort the vocabulary and lay out the postings. Built in a temporary sibling
 * directory and renamed into place, so a failure leaves any previous index untouched; what is at
 * `outDir` is replaced only if it is an index (or empty) unless `force`. The same
 * chunks in the same order give the same bytes.
 */
export async function buildIndex(chunks: ChunkSource, outDir: string, options: BuildOptions = {}): Promise<IndexStats> {
  const k1 = options.k1 ?? 1.5;
  const b = options.b ?? 0.75;
  if (!(k1 >= 0) || !Number.isFinite(k1)) throw new InputError(`BM25 k1 must be a finite number >= 0, got ${k1}`);
  if (!(b >= 0 && b <= 1)) throw new InputError(`BM25 b must be between 0 and 1, got ${b}`);
  const analyzer = new Analyzer(options.analyzer);
  // Index files are raw typed arrays in the machine's byte order, which the format fixes as little-endian.
  if (endianness() !== 'LE') throw new Error('sleuth indexes are little-endian; this machine is big-endian');

  const maxPostings = options.segmentPostings ?? SEGMENT_POSTINGS;
  if (!Number.isInteger(maxPostings) || maxPostings < 1) throw new InputError(`segment postings must be a whole number >= 1, got ${maxPostings}`);

  checkReplaceable(outDir, INDEX_DIR, options.force);
  // Two builds into one --out would each swap in their own index and sweep the other's temporaries.
  const lock = acquireLock(outDir, 'index');
  try {
    return await buildLocked(chunks, outDir, options, analyzer, k1, b, maxPostings);
  } finally {
    lock.release();
  }
}

async function buildLocked(chunks: ChunkSource, outDir: string, options: BuildOptions, analyzer: Analyzer, k1: number, b: number, maxPostings: number): Promise<IndexStats> {
  const tmp = makeTempSibling(outDir);
  const cursor = new ChunkCursor(chunks);
  try {
    // Segment after segment, each of at most maxPostings postings: a corpus that fits one is the
    // one index it always was; the first of several is moved into its subdirectory when the second starts.
    const segments: SegmentStats[] = [];
    for (let docs = 0; ; ) {
      if (segments.length === 1) moveIntoSegment(tmp, join(tmp, segmentName(0)));
      const dir = segments.length === 0 ? tmp : join(tmp, segmentName(segments.length));
      if (segments.length > 0) mkdirSync(dir);
      const segment = await buildInto(cursor, dir, analyzer, k1, b, options, maxPostings, docs);
      segments.push(segment);
      docs += segment.docs;
      if (!segment.full) break;
      // The finished segment's WebAssembly memory (its postings, gigabytes) is garbage now, but V8
      // may not collect it before the next segment has grown its own: where the process allows
      // it (node --expose-gc, as bench:scale runs), collect now, so memory stays one segment's.
      (globalThis as { gc?: () => void }).gc?.();
      const more = await cursor.next();
      if (!more) break;
      cursor.putBack(more);
    }
    let stats: Omit<IndexStats, 'dir'> = segments[0]!;
    if (segments.length > 1) {
      await checkDistinctIds(tmp, segments.length);
      stats = writeSegmentsManifest(tmp, segments, analyzer.config, { k1, b }, options.source);
    }
    replaceDir(tmp, outDir);
    const { docs, terms, postings, tokens, bytes } = stats;
    return { dir: outDir, docs, terms, postings, tokens, bytes };
  } catch (err) {
    await cursor.close().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** One segment as built: its counts, and whether it stopped full (more chunks may follow). */
export interface SegmentStats {
  docs: number;
  terms: number;
  postings: number;
  tokens: number;
  bytes: number;
  full: boolean;
}

/**
 * Index chunks from the cursor into `dir` until they end or the postings reach maxPostings (then
 * the segment is `full` and the rest stays in the cursor). `firstDoc`: documents in the segments
 * before (for progress).
 */
async function buildInto(cursor: ChunkCursor, dir: string, analyzer: Analyzer, k1: number, b: number, options: BuildOptions, maxPostings: number, firstDoc: number): Promise<SegmentStats> {
  const { onProgress, source } = options;
  const ids: string[] = [];
  const idSink = new Utf8Sink(() => join(dir, 'ids.bin'));
  const titleSink = new Utf8Sink(() => join(dir, 'titles.bin'));
  const metaSink = new Utf8Sink(() => join(dir, 'meta.bin'));
  const idOff = new Grow(Uint32Array);
  const titleOff = new Grow(Uint32Array);
  const metaOff = new Grow(Uint32Array);
  idOff.push(0), titleOff.push(0), metaOff.push(0);
  const wasm = options.wasm ?? true;
  const compress = options.compressTexts ?? false;
  const texts = textSink(dir, options.textShardBytes ?? TEXT_SHARD_BYTES, options.parallel ?? true, wasm, compress);
  const abort = () => texts.abort();

  // Surface word -> term id (-1 = dropped), looked up in place: no string per token on the hot path.
  const words = new WordTable();
  const termOf = new Map<string, number>();
  const termStrings: string[] = [];
  let tfScratch = new Uint32Array(1 << 16);
  let df = new Uint32Array(1 << 16);
  // Per document, the (term, tf) pairs in first-seen order; scattered into postings at the end.
  const pairs = new PairChunks();
  const doclen = new Grow(Uint32Array);
  let tokens = 0;

  const newTerm = (word: string): number => {
    const term = analyzer.term(word);
    if (term === null) return -1;
    let t = termOf.get(term);
    if (t === undefined) {
      t = termStrings.length;
      termOf.set(term, t);
      termStrings.push(term);
      if (t >= tfScratch.length) {
        const next = new Uint32Array(tfScratch.length * 2);
        next.set(tfScratch);
        tfScratch = next;
        const nextDf = new Uint32Array(df.length * 2);
        nextDf.set(df);
        df = nextDf;
      }
    }
    return t;
  };
  // Term ids of the current document's words (-1 = dropped), grown to the longest document.
  let docWords = new Int32Array(1 << 16);
  const lookup = (text: string, at: number): number => {
    // A text of L code units has at most L/2 + 1 words.
    if (at + text.length / 2 + 1 > docWords.length) {
      const next = new Int32Array(2 * (at + text.length));
      next.set(docWords.subarray(0, at));
      docWords = next;
    }
    return words.lookupAll(text, newTerm, docWords, at);
  };

  // The WebAssembly word loop (title and text in one UTF-8 input), or the TypeScript one above.
  const kernel = wasm ? WordKernel.create(newTerm) : undefined;

  const sinks = [idSink, titleSink, metaSink];
  const postingsSoFar = kernel ? () => kernel.pairCount() : () => pairs.length;
  let full = false;
  try {
    for (let batch; !full && (batch = await cursor.next()); ) {
      for (let i = 0; i < batch.length; i++) {
        const chunk = batch[i]!;
        const doc = ids.length;
        if (typeof chunk.id !== 'string' || chunk.id.length === 0) throw new InputError(`chunk ${doc + 1} has an empty id`);
        ids.push(chunk.id);
        idSink.write(chunk.id);
        idOff.push(idSink.position);
        titleSink.write(chunk.title);
        titleOff.push(titleSink.position);
        if (chunk.meta && Object.keys(chunk.meta).length > 0) metaSink.write(JSON.stringify(chunk.meta));
        if (metaSink.position > 0xffffffff || titleSink.position > 0xffffffff || idSink.position > 0xffffffff) throw new InputError('corpus too large: ids, titles or metadata pass 4 GiB');
        metaOff.push(metaSink.position);
        let dl = 0;
        if (kernel) {
          // One encoding of the text: what is stored and what the grep prefilter splits (the text
          // side), and (after the title) what BM25 splits.
          // A text read as UTF-8 (Utf8Chunk) is copied in as it is.
          const utf8 = isUtf8Chunk(chunk);
          const textBytes = (utf8 ? kernel.encodeWith(chunk.title, chunk.utf8) : kernel.encode(chunk.title, chunk.text)).subarray(kernel.secondAt);
          const units = utf8 ? chunk.units : chunk.text.length;
          const waiting = texts.takesUtf8 ? texts.addUtf8(doc, textBytes, units) : texts.addText(doc, chunkText(chunk));
          if (waiting) await waiting;
          // The document's (term, tf) pairs stay in the kernel's memory (kernel.pairs()).
          kernel.countTerms();
          dl = kernel.documentLength();
        } else {
          const text = chunkText(chunk);
          const waiting = texts.addText(doc, text);
          if (waiting) await waiting;
          const count = lookup(text, lookup(chunk.title, 0));
          // The document's distinct terms straight into the pair arrays, then their frequencies.
          const { terms, tfs, at: first } = pairs.reserve(count);
          let n = first;
          for (let i = 0; i < count; i++) {
            const t = docWords[i]!;
            if (t < 0) continue;
            dl++;
            if (tfScratch[t]++ === 0) terms[n++] = t;
          }
          for (let j = first; j < n; j++) {
            const t = terms[j]!;
            tfs[j] = Math.min(tfScratch[t]!, MAX_TF);
            df[t]!++;
            tfScratch[t] = 0;
          }
          pairs.commit(n - first);
        }
        doclen.push(dl);
        tokens += dl;
        if (onProgress && (doc & 4095) === 0) onProgress(firstDoc + doc + 1);
        if (postingsSoFar() >= maxPostings || (kernel && kernel.memoryBytes() >= SEGMENT_KERNEL_BYTES)) {
          cursor.putBack(batch.slice(i + 1));
          full = true;
          break;
        }
      }
    }
  } catch (err) {
    await abort();
    throw err;
  } finally {
    // Close the files also when reading fails, so no descriptor outlives the temporary directory.
    for (const sink of sinks) sink.close();
  }
  const N = ids.length;
  if (N === 0) {
    await abort();
    throw new InputError('no chunks to index (empty corpus)');
  }
  // Doc numbers sorted by id, for docOf; a repeated id is an error here whatever the reader did.
  const idOrder = Uint32Array.from({ length: N }, (_, i) => i).sort((x, y) => (ids[x]! < ids[y]! ? -1 : ids[x]! > ids[y]! ? 1 : 0));
  for (let i = 1; i < N; i++) {
    if (ids[idOrder[i]!] === ids[idOrder[i - 1]!]) {
      await abort();
      throw new InputError(`duplicate chunk id "${ids[idOrder[i]!]}" in the corpus`);
    }
  }

  // The worker writes the last texts and grep.bin while this thread lays out the postings; on any
  // failure below, wait for it before the caller removes the directory.
  const textsWritten = texts.finish();
  textsWritten.catch(() => {}); // awaited below; this only marks a failure as handled meanwhile
  try {
    onProgress?.(firstDoc + N);

    // Vocabulary in UTF-8 byte order, and the old -> new term id map.
    const T = termStrings.length;
    const encoder = new TextEncoder();
    const termBytes = termStrings.map((t) => encoder.encode(t));
    const order = Array.from({ length: T }, (_, i) => i).sort((x, y) => compareBytes(termBytes[x]!, termBytes[y]!));
    const newId = new Uint32Array(T);
    order.forEach((old, i) => (newId[old] = i));

    // The pairs and document frequencies: the WebAssembly loop's, or the TypeScript loop's.
    const postingPairs: PostingPairs = kernel ? kernel.pairs() : pairs;
    const dfOf = kernel ? kernel.documentFrequencies(T) : df;
    const P = postingPairs.length;
    if (P > 0xffffffff) throw new InputError('corpus too large: more than 2^32 postings');
    const postOff = new Uint32Array(T + 1);
    for (let i = 0; i < T; i++) postOff[i + 1] = postOff[i]! + dfOf[order[i]!]!;
    const maxTf = new Float64Array(T);
    const avgdl = tokens / N;
    const lens = doclen.view();
    postingPairs.remapTerms(newId);
    const norms = new Float64Array(N);
    for (let doc = 0; doc < N; doc++) norms[doc] = k1 * (1 - b + (b * lens[doc]!) / avgdl);
    writePostings(dir, postingPairs, postOff, norms, maxTf);

    // Terms file in sorted order.
    const termOff = new Uint32Array(T + 1);
    let termTotal = 0;
    for (let i = 0; i < T; i++) termOff[i + 1] = termTotal += termBytes[order[i]!]!.length;
    const termsBin = new Uint8Array(termTotal);
    for (let i = 0; i < T; i++) termsBin.set(termBytes[order[i]!]!, termOff[i]!);

    const arrays: [string, ArrayBufferView][] = [
      ['ids.off', idOff.view()], ['ids.order', idOrder], ['titles.off', titleOff.view()],
      ['meta.off', metaOff.view()], ['doclen', lens], ['terms.bin', termsBin], ['terms.off', termOff],
      ['post.off', postOff], ['term.maxtf', maxTf],
    ];
    for (const [name, arr] of arrays) writeWhole(join(dir, name), arr);
    const textShards = await textsWritten;

    const files: Record<string, number> = {};
    for (const name of readdirSync(dir).sort()) files[name] = statSync(join(dir, name)).size;
    // Every file's block checksums, read back from disk: what they sum is what was written.
    const sums = sumFiles(dir, files);
    files[SUMS_FILE] = writeWhole(join(dir, SUMS_FILE), sums);
    const manifest: Manifest = {
      format: INDEX_FORMAT,
      version: compress ? COMPRESSED_INDEX_VERSION : INDEX_VERSION,
      endianness: 'LE',
      checksums: { algorithm: CHECKSUM_ALGORITHM, blockBytes: BLOCK_BYTES, file: SUMS_FILE, sum: checksumOf(new Uint8Array(sums.buffer, sums.byteOffset, sums.byteLength)), files: fileChecksums(files, sums) },
      ...(compress ? { textCodec: TEXT_CODEC } : {}),
      analyzer: analyzer.config,
      bm25: { k1, b },
      counts: { docs: N, terms: T, postings: P, tokens },
      avgdl,
      textShards,
      ...(source !== undefined ? { source } : {}),
      files,
    };
    writeFileSync(join(dir, 'manifest.json'), sealJson(manifest));
    const bytes = Object.values(files).reduce((s, n) => s + n, 0);
    return { docs: N, terms: T, postings: P, tokens, bytes, full };
  } catch (err) {
    await textsWritten.catch(() => {});
    throw err;
  }
}
