import { WA, WASM_MAX_BYTES, WASM_PAGE, compiledWasm, type WasmMemory } from '../wasm.js';

/** Documents per scoring segment at most: the accumulators and candidate buffers are this long. */
export const MAX_SEGMENT_DOCS = 1 << 14;
/** Bytes left alone at the start of the memory (AssemblyScript's static area). */
const RESERVED = 65536;

interface Bm25Exports {
  accumulate(docs: number, tfs: number, at: number, end: number, base: number, limit: number, idf: number, norm: number, acc: number): number;
  collect(acc: number, len: number, min: number, outDocs: number, outScores: number): number;
}


/**
 * BM25 scoring's arrays in one WebAssembly memory (accumulators, candidate buffers, length norms,
 * postings), and the WebAssembly loops over them (./assembly/bm25.ts): about twice as fast per
 * posting as the same loop in TypeScript, which has to check every array bound.
 *
 * The postings arrays are the index's post.docs and post.tfs bytes, read into this memory by the
 * index's PagedFiles (see open.ts), so nothing is copied; like any large zero-filled allocation,
 * the memory is committed by the OS only where written.
 */
export class ScoringMemory {
  readonly acc: Float64Array;
  readonly outScores: Float64Array;
  readonly outDocs: Uint32Array;
  readonly norm: Float64Array;
  readonly postDocs: Uint32Array;
  readonly postTfs: Uint16Array;
  private readonly at: { acc: number; outScores: number; outDocs: number; norm: number; docs: number; tfs: number };

  private constructor(private readonly x: Bm25Exports, buffer: ArrayBuffer, docs: number, postings: number, at: ScoringMemory['at']) {
    this.at = at;
    this.acc = new Float64Array(buffer, at.acc, MAX_SEGMENT_DOCS);
    this.outScores = new Float64Array(buffer, at.outScores, MAX_SEGMENT_DOCS);
    this.outDocs = new Uint32Array(buffer, at.outDocs, MAX_SEGMENT_DOCS);
    this.norm = new Float64Array(buffer, at.norm, docs);
    this.postDocs = new Uint32Array(buffer, at.docs, postings);
    this.postTfs = new Uint16Array(buffer, at.tfs, postings);
  }

  /**
   * A memory for an index of `docs` documents and `postings` postings; undefined when the
   * WebAssembly module is not built (`npm run build`) or the arrays pass the 4 GiB a memory can
   * hold (then scoring runs in TypeScript).
   */
  static create(docs: number, postings: number): ScoringMemory | undefined {
    const mod = compiledWasm('bm25.wasm');
    if (!mod) return undefined;
    const align8 = (n: number) => Math.ceil(n / 8) * 8;
    let next = RESERVED;
    const take = (bytes: number) => {
      const p = next;
      next = align8(next + bytes);
      return p;
    };
    const at = {
      acc: take(MAX_SEGMENT_DOCS * 8),
      outScores: take(MAX_SEGMENT_DOCS * 8),
      outDocs: take(MAX_SEGMENT_DOCS * 4),
      norm: take(docs * 8),
      docs: take(postings * 4),
      tfs: take(postings * 2),
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
    return new ScoringMemory(instance.exports as unknown as Bm25Exports, memory.buffer, docs, postings, at);
  }

  /** The bytes of post.docs and post.tfs, for the files to be read into. */
  get docsBytes(): Uint8Array {
    return new Uint8Array(this.postDocs.buffer, this.postDocs.byteOffset, this.postDocs.byteLength);
  }
  get tfsBytes(): Uint8Array {
    return new Uint8Array(this.postTfs.buffer, this.postTfs.byteOffset, this.postTfs.byteLength);
  }

  /** See accumulate in ./assembly/bm25.ts: adds one term's postings of a segment, returns where it stopped. */
  accumulate(at: number, end: number, base: number, limit: number, idf: number): number {
    return this.x.accumulate(this.at.docs, this.at.tfs, at, end, base, limit, idf, this.at.norm, this.at.acc);
  }

  /** See collect in ./assembly/bm25.ts: accumulators of [0, len) above min to outDocs/outScores, then zeroed. */
  collect(len: number, min: number): number {
    return this.x.collect(this.at.acc, len, min, this.at.outDocs, this.at.outScores);
  }
}
