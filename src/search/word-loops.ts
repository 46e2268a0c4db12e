import { STUB_HEAP_MAX_PAGES, WA, compiledWasm, unsignedResults, type WasmMemory } from '../wasm.js';
import { postingPasses, type PostingPairs } from './buffers.js';
import { DEFAULT_BLOCK_SIZE, ENTRY_STATS, type ForwardList, type VarintRange } from './grep/builder.js';

/**
 * The index builder's word loops in WebAssembly (./assembly/words.ts), over the UTF-8 of each text:
 * BM25's (term, tf) pairs (countTerms, pairs) and the grep prefilter's forward list (grepList). Each
 * instance owns a memory and the tables in it, so a builder thread makes its own.
 */
interface WordExports {
  inputPointer(bytes: number): number;
  classBits(): number;
  countTerms(p: number, len: number): number;
  documentLength(): number;
  pairCount(): number;
  documentFrequencies(): number;
  remapTerms(map: number): void;
  scatter(lo: number, span: number, postOff: number, docs: number, tfs: number, norms: number, maxTf: number): void;
  grepBegin(blockSize: number): void;
  grepAdd(p: number, len: number, doc: number): void;
  grepFinish(): number;
  grepCount(stats: number): void;
  grepFill(plan: number, bitmaps: number, bitmapWordsEach: number, out: number, lo: number, hi: number, withBitmaps: number): void;
  allocate(bytes: number): number;
  grepWordCount(): number;
  grepArena(): number;
  grepKeys(): number;
}

const WORD_CHAR = /[\p{L}\p{M}\p{N}]/u;

/** Bit c of the 8 KiB map: whether BMP code unit c is a word character (as tokenize.ts decides). */
let bmpWordBits: Uint8Array | undefined;
function wordBits(): Uint8Array {
  if (bmpWordBits) return bmpWordBits;
  const bits = new Uint8Array(8192);
  // Test 256 characters at a time with one global regex over a string of them.
  const global = new RegExp(WORD_CHAR.source, 'gu');
  for (let block = 0; block < 256; block++) {
    let s = '';
    for (let c = block * 256; c < block * 256 + 256; c++) s += c >= 0xd800 && c <= 0xdfff ? ' ' : String.fromCharCode(c);
    for (const m of s.matchAll(global)) {
      const c = m[0].charCodeAt(0);
      bits[c >>> 3]! |= 1 << (c & 7);
    }
  }
  return (bmpWordBits = bits);
}


const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class WordKernel {
  private readonly x: WordExports;
  private readonly memory: WasmMemory;
  private u8: Uint8Array;
  private encoded = 0;
  private readonly astral = new Map<number, boolean>();

  /**
   * A kernel whose countTerms asks `termOf` for the term id of each surface word it has not seen
   * (-1 to drop it); undefined when the module is not built (`npm run build`).
   */
  static create(termOf: (word: string) => number = () => -1): WordKernel | undefined {
    const mod = compiledWasm('words.wasm');
    return mod ? new WordKernel(mod, termOf) : undefined;
  }

  /** Whether the module is built (create() gives a kernel). */
  static available(): boolean {
    return compiledWasm('words.wasm') !== null;
  }

  private constructor(mod: object, termOf: (word: string) => number) {
    this.memory = new WA.Memory({ initial: 256, maximum: STUB_HEAP_MAX_PAGES });
    this.u8 = new Uint8Array(this.memory.buffer);
    const env = {
      memory: this.memory,
      // The stub runtime's failure report (an allocation past its limit): no message decoding needed.
      abort: (_message: number, _file: number, line: number, column: number) => {
        throw new Error(`index word loop (words.wasm) aborted at ${line}:${column}`);
      },
      // p arrives as a signed i32 (negative past 2 GiB): read it unsigned, as unsignedResults below does.
      newSurfaceWord: (p: number, len: number) => termOf(decoder.decode(this.bytes(p >>> 0, len))),
      astralWordChar: (cp: number) => {
        let word = this.astral.get(cp);
        if (word === undefined) this.astral.set(cp, (word = WORD_CHAR.test(String.fromCodePoint(cp))));
        return word ? 1 : 0;
      },
    };
    this.x = unsignedResults(new WA.Instance(mod, { env }).exports as unknown as WordExports, ['classBits', 'inputPointer', 'allocate', 'documentFrequencies', 'grepArena', 'grepKeys']);
    const bits = this.x.classBits();
    this.view().set(wordBits(), bits);
  }

  /** The memory as bytes (a fresh view after the module grew it). */
  private view(): Uint8Array {
    if (this.u8.buffer !== this.memory.buffer) this.u8 = new Uint8Array(this.memory.buffer);
    return this.u8;
  }

  /** Copy `data` into fresh kernel memory; returns where (valid across later growth). */
  private place(data: ArrayBufferView): number {
    const at = this.x.allocate(data.byteLength);
    this.view().set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), at);
    return at;
  }

  private bytes(p: number, len: number): Uint8Array {
    return this.view().subarray(p, p + len);
  }

  /**
   * Encode the texts as UTF-8 into the input, joined by a newline (a word never spans it); returns
   * the bytes, a view valid until the next call.
   */
  encode(first: string, second?: string): Uint8Array {
    const room = 3 * (first.length + 1 + (second?.length ?? 0));
    const p = this.x.inputPointer(room);
    const input = this.view().subarray(p, p + room);
    let n = encoder.encodeInto(first, input).written;
    this.second = n + 1;
    if (second !== undefined) {
      input[n++] = 0x0a;
      n += encoder.encodeInto(second, input.subarray(n)).written;
    }
    this.encoded = n;
    return input.subarray(0, n);
  }

  /** encode(first, second) for a second text already in UTF-8 (copied in as it is). */
  encodeWith(first: string, second: Uint8Array): Uint8Array {
    const room = 3 * first.length + 1 + second.length;
    const p = this.x.inputPointer(room);
    const input = this.view().subarray(p, p + room);
    let n = encoder.encodeInto(first, input).written;
    input[n++] = 0x0a;
    this.second = n;
    input.set(second, n);
    n += second.length;
    this.encoded = n;
    return input.subarray(0, n);
  }

  private second = 0;
  /** Where the second text starts in the bytes encode() last returned. */
  get secondAt(): number {
    return this.second;
  }

  /** Make `bytes` (UTF-8) the input, as encode() would. */
  setInput(bytes: Uint8Array): void {
    const p = this.x.inputPointer(bytes.length);
    this.view().set(bytes, p);
    this.encoded = bytes.length;
  }

  /**
   * BM25 terms of the last encoded input, the next document: its (term, tf) pairs are appended to
   * pairs(); returns how many distinct terms it has, and documentLength() counts the words kept.
   */
  countTerms(): number {
    return this.x.countTerms(this.x.inputPointer(0), this.encoded);
  }
  documentLength(): number {
    return this.x.documentLength();
  }

  /** Bytes of WebAssembly memory the loops hold (their pairs, tables and inputs): a build ends a segment before it runs out. */
  memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** (term, tf) pairs split so far, over all documents. */
  pairCount(): number {
    return this.x.pairCount();
  }

  /** Per term id below `terms`, the documents holding it (a copy). */
  documentFrequencies(terms: number): Uint32Array {
    return new Uint32Array(this.memory.buffer, this.x.documentFrequencies(), terms).slice();
  }

  /** The (term, tf) pairs of every document countTerms has split, in this kernel's memory. */
  pairs(): PostingPairs {
    const x = this.x;
    const memory = this.memory;
    const place = (data: ArrayBufferView) => this.place(data);
    return {
      length: x.pairCount(),
      remapTerms: (map) => x.remapTerms(place(map)),
      layout: (postOff, norms, maxTf, write) => {
        const passes = postingPasses(postOff);
        const most = Math.max(0, ...passes.map((p) => p.postings));
        const offAt = place(postOff);
        const normsAt = place(norms);
        const maxAt = x.allocate(8 * maxTf.length);
        const docsAt = x.allocate(4 * most);
        const tfsAt = x.allocate(2 * most);
        for (const { lo, hi, postings } of passes) {
          x.scatter(lo, hi - lo, offAt, docsAt, tfsAt, normsAt, maxAt);
          // Views made after the call, which may have grown (and so replaced) the buffer.
          write(new Uint32Array(memory.buffer, docsAt, postings), new Uint16Array(memory.buffer, tfsAt, postings));
        }
        maxTf.set(new Float64Array(memory.buffer, maxAt, maxTf.length));
      },
    };
  }

  private grep: KernelGrepList | undefined;

  /**
   * The grep prefilter's forward list, built in this kernel's memory from the inputs given to its
   * add() (one list per kernel: its vocabulary is the kernel's).
   */
  grepList(blockSize = DEFAULT_BLOCK_SIZE): KernelGrepList {
    if (this.grep) throw new Error('WordKernel.grepList: one forward list per kernel');
    if (!Number.isInteger(blockSize) || blockSize < 1 || blockSize > 256) throw new Error(`grep block size must be a whole number from 1 to 256, got ${blockSize}`);
    this.x.grepBegin(blockSize);
    return (this.grep = new KernelGrepList(this, blockSize));
  }

  /** Mark the last input's grep words in the forward list as document `doc` (KernelGrepList.add). */
  grepAdd(doc: number): void {
    this.x.grepAdd(this.x.inputPointer(0), this.encoded, doc);
  }

  grepFinish(): number {
    return this.x.grepFinish();
  }

  /** Pass 1 of the forward list (ForwardList.countEntries), copied out of the kernel's memory. */
  grepCount(nWords: number): Uint32Array {
    const stats = this.x.allocate(4 * ENTRY_STATS * nWords);
    this.x.grepCount(stats);
    return new Uint32Array(this.memory.buffer, stats, ENTRY_STATS * nWords).slice();
  }

  /**
   * Pass 2 (ForwardList.fill), a range of the varints at a time through one buffer in the kernel's
   * memory: at a million chunks the varints are 200 MB, which a buffer for them all would first-touch.
   */
  grepFill(plan: Int32Array, bitmapWords: number, bitmapWordsEach: number, ranges: VarintRange[], write: (varints: Uint8Array, bitmaps: Uint32Array) => void): void {
    const planAt = this.place(plan);
    const bitmapsAt = this.x.allocate(4 * bitmapWords);
    const outAt = this.x.allocate(Math.max(0, ...ranges.map((r) => r.hi - r.lo)));
    // Views made after the calls, which may have grown (and so replaced) the buffer.
    ranges.forEach(({ lo, hi }, k) => {
      this.x.grepFill(planAt, bitmapsAt, bitmapWordsEach, outAt, lo, hi, k === 0 ? 1 : 0);
      write(new Uint8Array(this.memory.buffer, outAt, hi - lo), new Uint32Array(this.memory.buffer, bitmapsAt, bitmapWords));
    });
  }

  /** Every grep word so far, by number. */
  grepVocabulary(): string[] {
    const n = this.x.grepWordCount();
    const keys = new Uint32Array(this.memory.buffer, this.x.grepKeys(), 2 * n);
    const arena = this.x.grepArena();
    const words: string[] = new Array(n);
    for (let id = 0; id < n; id++) words[id] = decoder.decode(this.bytes(arena + keys[2 * id]!, keys[2 * id + 1]!));
    return words;
  }
}

/**
 * The grep prefilter's forward list in a WordKernel (its grepAdd, in WebAssembly, splits, numbers
 * and marks the words of a text in one loop); ../grep/builder.ts writes grep.bin from it.
 */
export class KernelGrepList implements ForwardList {
  private added = 0;

  constructor(private readonly kernel: WordKernel, readonly blockSize: number) {}

  get docs(): number {
    return this.added;
  }

  /** Add the kernel's last input (encode or setInput) as document `doc`: documents in order 0, 1, 2, ... */
  add(doc: number): void {
    if (doc !== this.added) throw new Error(`grep forward list: expected document ${this.added}, got ${doc}`);
    this.kernel.grepAdd(doc);
    this.added++;
  }

  /** Every word so far, by number. */
  words(): string[] {
    return this.kernel.grepVocabulary();
  }

  finish(): number {
    return this.kernel.grepFinish();
  }

  countEntries(nWords: number): Uint32Array {
    return this.kernel.grepCount(nWords);
  }

  fill(plan: Int32Array, bitmapWords: number, bitmapWordsEach: number, ranges: VarintRange[], write: (varints: Uint8Array, bitmaps: Uint32Array) => void): void {
    this.kernel.grepFill(plan, bitmapWords, bitmapWordsEach, ranges, write);
  }
}
