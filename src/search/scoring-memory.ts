import { WA, WASM_MAX_BYTES, WASM_PAGE, compiledWasm, type WasmMemory } from '../wasm.js';
import { BLOCK } from './block-postings.js';

/** Documents per scoring segment at most: the accumulators and candidate buffers are this long. */
export const MAX_SEGMENT_DOCS = 1 << 14;
/** Distinct query terms the WebAssembly loops take at most (assembly/bm25.ts's MAX_TERMS); longer queries score in TypeScript. */
export const MAX_QUERY_TERMS = 1024;
/** The largest k the pruned loop keeps (its heap is the candidate buffers). */
export const MAX_PRUNED_K = MAX_SEGMENT_DOCS;
/** Documents a segment's touched list holds (assembly/bm25.ts's TOUCHED_MAX): a quarter of a segment. */
const TOUCHED_MAX = MAX_SEGMENT_DOCS / 4;
/** Bytes left alone at the start of the memory (AssemblyScript's static area). */
const RESERVED = 65536;

interface Bm25Exports {
  init(data: number, blockAt: number, blockLast: number, blockMax: number, norm: number, one: number, acc: number, query: number, buffers: number, heapDocs: number, heapScores: number, touched: number): void;
  queryBytes(): number;
  touchedMax(): number;
  reset(q: number): void;
  accumulate(j: number, base: number, limit: number, record: number): number;
  collect(len: number, min: number, outDocs: number, outScores: number): number;
  collectTouched(len: number, min: number, outDocs: number, outScores: number): number;
  pruned(q: number, k: number, floor: number, scale: number): number;
  decodeInto(b: number, n: number, prev: number, docs: number, tfs: number): void;
  postingsScored(reset: boolean): number;
}

/** One query term as the WebAssembly loops take it. */
export interface KernelTerm {
  /** Its first block and one past its last. */
  start: number;
  end: number;
  /** Postings in its last block. */
  lastN: number;
  /** Its place in the query: scores are summed in this order. */
  order: number;
  idf: number;
  /** idf times the largest weight of its postings (times the segment's bound scale): its score bound. */
  ub: number;
}

/**
 * BM25 scoring's arrays in one WebAssembly memory (accumulators, candidate buffers, length norms,
 * the compressed postings and their block metadata, the query's terms and cursors), and the
 * WebAssembly loops over them (./assembly/bm25.ts).
 *
 * The postings arrays are the index's post.data and block.* bytes, read into this memory by the
 * index's PagedFiles (see open.ts), so nothing is copied; like any large zero-filled allocation,
 * the memory is committed by the OS only where written.
 */
export class ScoringMemory {
  readonly acc: Float64Array;
  readonly outScores: Float64Array;
  readonly outDocs: Uint32Array;
  readonly norm: Float64Array;
  /** Per document, 1 / (1 + norm): a posting of tf 1 weighs idf times this (no divide per posting). */
  readonly one: Float64Array;
  readonly words: Uint32Array;
  readonly blockAt: Uint32Array;
  readonly blockLast: Uint32Array;
  readonly blockMax: Float32Array;
  private readonly tU32: Uint32Array;
  private readonly tF64: Float64Array;
  private readonly at: { outScores: number; outDocs: number };

  private constructor(private readonly x: Bm25Exports, buffer: ArrayBuffer, docs: number, words: number, blocks: number, at: Record<'acc' | 'outScores' | 'outDocs' | 'norm' | 'one' | 'data' | 'blockAt' | 'blockLast' | 'blockMax' | 'query' | 'buffers' | 'touched', number>) {
    this.at = at;
    this.acc = new Float64Array(buffer, at.acc, MAX_SEGMENT_DOCS);
    this.outScores = new Float64Array(buffer, at.outScores, MAX_SEGMENT_DOCS);
    this.outDocs = new Uint32Array(buffer, at.outDocs, MAX_SEGMENT_DOCS);
    this.norm = new Float64Array(buffer, at.norm, docs);
    this.one = new Float64Array(buffer, at.one, docs);
    this.words = new Uint32Array(buffer, at.data, words);
    this.blockAt = new Uint32Array(buffer, at.blockAt, blocks + 1);
    this.blockLast = new Uint32Array(buffer, at.blockLast, blocks);
    this.blockMax = new Float32Array(buffer, at.blockMax, blocks);
    // The query area (assembly/bm25.ts's init): nine u32 arrays, then f64 ones, MAX_QUERY_TERMS each.
    this.tU32 = new Uint32Array(buffer, at.query, 4 * MAX_QUERY_TERMS);
    this.tF64 = new Float64Array(buffer, at.query + 9 * 4 * MAX_QUERY_TERMS, 2 * MAX_QUERY_TERMS);
    x.init(at.data, at.blockAt, at.blockLast, at.blockMax, at.norm, at.one, at.acc, at.query, at.buffers, at.outDocs, at.outScores, at.touched);
  }

  /**
   * A memory for an index of `docs` documents, `words` words of post.data and `blocks` blocks;
   * undefined when the WebAssembly module is not built (`npm run build`) or the arrays pass the
   * 4 GiB a memory can hold (then scoring runs in TypeScript).
   */
  static create(docs: number, words: number, blocks: number): ScoringMemory | undefined {
    const mod = compiledWasm('bm25.wasm');
    if (!mod) return undefined;
    const align = (n: number) => Math.ceil(n / 16) * 16;
    let next = RESERVED;
    const take = (bytes: number) => {
      const p = next;
      next = align(next + bytes);
      return p;
    };
    const queryBytes = MAX_QUERY_TERMS * (9 * 4 + 4 * 8);
    const at = {
      acc: take(MAX_SEGMENT_DOCS * 8),
      outScores: take(MAX_SEGMENT_DOCS * 8),
      outDocs: take(MAX_SEGMENT_DOCS * 4),
      query: take(queryBytes),
      buffers: take(2 * MAX_QUERY_TERMS * BLOCK * 4),
      touched: take(TOUCHED_MAX * 4),
      norm: take(docs * 8),
      one: take(docs * 8),
      blockAt: take((blocks + 1) * 4),
      blockLast: take(blocks * 4),
      blockMax: take(blocks * 4),
      // The decoders read up to 12 bytes past a block's values: 16 bytes to spare past the last block.
      data: take(words * 4 + 16),
    };
    if (next > WASM_MAX_BYTES) return undefined;
    const pages = Math.max(1, Math.ceil(next / WASM_PAGE));
    let memory: WasmMemory;
    try {
      memory = new WA.Memory({ initial: pages, maximum: pages });
    } catch {
      // Out of address space (each memory reserves its 4 GiB range, and unreachable ones wait
      // for the garbage collector): score in TypeScript rather than fail the open.
      return undefined;
    }
    const instance = new WA.Instance(mod, { env: { memory } });
    const x = instance.exports as unknown as Bm25Exports;
    if (x.touchedMax() !== TOUCHED_MAX) throw new Error(`bm25.wasm records ${x.touchedMax()} touched documents, this code ${TOUCHED_MAX}: rebuild it (npm run build)`);
    if (x.queryBytes() !== queryBytes) throw new Error(`bm25.wasm lays out ${x.queryBytes()} bytes of query, this code ${queryBytes}: rebuild it (npm run build)`);
    return new ScoringMemory(x, memory.buffer, docs, words, blocks, at);
  }

  /** Byte views of the arrays the index files are read into. */
  static bytesOf(a: Uint32Array | Float32Array): Uint8Array {
    return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  }

  /** Write the query's terms (at most MAX_QUERY_TERMS) into their slots, in the order given; cursors at their starts. */
  setQuery(terms: readonly KernelTerm[]): void {
    const u = this.tU32;
    const f = this.tF64;
    const M = MAX_QUERY_TERMS;
    if (terms.length > M) throw new Error(`setQuery: ${terms.length} terms, at most ${M}`);
    terms.forEach((t, j) => {
      u[j] = t.start;
      u[M + j] = t.end;
      u[2 * M + j] = t.lastN;
      u[3 * M + j] = t.order;
      f[j] = t.idf;
      f[M + j] = t.ub;
    });
    this.x.reset(terms.length);
  }

  /** See accumulate in ./assembly/bm25.ts: adds term slot j's postings in [base, limit) into acc (record: lists their documents for collectTouched); returns how many. */
  accumulate(j: number, base: number, limit: number, record = false): number {
    return this.x.accumulate(j, base, limit, record ? 1 : 0);
  }

  /** See collect in ./assembly/bm25.ts: accumulators of [0, len) above min to outDocs/outScores, then zeroed. */
  collect(len: number, min: number): number {
    return this.x.collect(len, min, this.at.outDocs, this.at.outScores);
  }

  /** See collectTouched in ./assembly/bm25.ts: collect, from the recorded terms' documents when they were few. */
  collectTouched(len: number, min: number): number {
    return this.x.collectTouched(len, min, this.at.outDocs, this.at.outScores);
  }

  /** See pruned in ./assembly/bm25.ts: the top k (k <= MAX_PRUNED_K) of the q terms set, unordered, in outDocs/outScores; returns how many. */
  pruned(q: number, k: number, floor: number, scale: number): number {
    return this.x.pruned(q, k, floor, scale);
  }

  /** Postings the WebAssembly loops have scored (weights computed) since the last reset; reset: count from 0 again. */
  postingsScored(reset = false): number {
    return this.x.postingsScored(reset);
  }

  /** Decode block b (n postings, after document prev) with the WebAssembly decoder, for the tests. */
  decode(b: number, n: number, prev: number): { docs: Uint32Array; tfs: Uint32Array } {
    this.x.decodeInto(b, n, prev, this.at.outDocs, this.at.outScores);
    return { docs: this.outDocs.slice(0, n), tfs: new Uint32Array(this.outScores.buffer, this.outScores.byteOffset, n).slice() };
  }
}
