import { closeSync, openSync, writeSync } from 'node:fs';
import { InputError } from '../errors.js';
import { Grow } from './buffers.js';

/**
 * The postings codec of index format versions 3 and 4: each term's postings in blocks of BLOCK,
 * packed with a fixed width per block (frame of reference), and per block the metadata that lets
 * a query skip it without decoding it (its last document and a bound on its scores).
 *
 * A block is a run of 4-byte little-endian words, starting on a word boundary of post.data:
 *
 *   word 0   docWidth (bits 0-7) | tfWidth (bits 8-15); the rest zero
 *   gaps     the document gaps g_i = doc_i - doc_{i-1} - 1, docWidth bits each, where doc_{-1} is
 *            the last document of the term's previous block, or -1 for its first block
 *   tfs      the term frequencies less one, tf_i - 1 (tf is 1..65535), tfWidth bits each
 *
 * n values of width w take ceil(n·w / 32) words, value i at byte i·w/8. A width is the least of 0, 8, 16 and 32 bits that holds the block's largest value (0
 * when all are zero, as the tfs of many blocks are). Whole bytes rather than the fewest bits: the
 * exhaustive loop decodes every posting of a query, and WebAssembly widens a row of four 8- or
 * 16-bit values with one load (assembly/bm25.ts), where bit-packed values took a dozen shifts and
 * masks a row and made that loop a third slower than raw postings. Most gaps of the postings a
 * query reads (its common terms') fit in a byte.
 */
export const BLOCK = 128;
/** The widths a block's values may have, in bits. */
const BLOCK_WIDTHS = [0, 8, 16, 32];
/** The most words one block takes: its header, 32-bit gaps and 16-bit tfs. */
export const MAX_BLOCK_WORDS = 1 + 4 * 32 + 4 * 16;
/** The largest term frequency a posting holds (the builder saturates at it). */
export const MAX_POSTING_TF = 0xffff;

/** The width of a block whose largest value is v (unsigned 32-bit): the least of 0, 8, 16 and 32 bits that holds it. */
export function widthFor(v: number): number {
  return v === 0 ? 0 : v < 0x100 ? 8 : v < 0x10000 ? 16 : 32;
}

/** Words a block of n values (1..BLOCK) takes with these widths, its header included. */
export function blockWords(n: number, docWidth: number, tfWidth: number): number {
  return 1 + Math.ceil((n * docWidth) / 32) + Math.ceil((n * tfWidth) / 32);
}

/** Blocks of a term with `postings` postings. */
export function blocksOf(postings: number): number {
  return Math.ceil(postings / BLOCK);
}

/** Per term, the number of its first block (T + 1 entries), from post.off. */
export function blockOffsets(postOff: Uint32Array): Uint32Array {
  const T = postOff.length - 1;
  const out = new Uint32Array(T + 1);
  for (let t = 0; t < T; t++) out[t + 1] = out[t]! + blocksOf(postOff[t + 1]! - postOff[t]!);
  return out;
}

/** Write n values of `width` bits (0, 8, 16 or 32) in order at out[at...]; returns the next word. */
function pack(values: Uint32Array, n: number, width: number, out: Uint32Array, at: number): number {
  const words = Math.ceil((n * width) / 32);
  out.fill(0, at, at + words);
  const perWord = 32 / width;
  if (width !== 0) for (let i = 0; i < n; i++) out[at + Math.floor(i / perWord)] |= values[i]! << (width * (i % perWord));
  return at + words;
}

/** Read n values of `width` bits at words[at...] into out[0..n), as pack wrote them; returns the next word. */
function unpack(words: Uint32Array, at: number, n: number, width: number, out: Uint32Array): number {
  if (width === 0) {
    out.fill(0, 0, n);
    return at;
  }
  const perWord = 32 / width;
  const mask = width === 32 ? 0xffffffff : (1 << width) - 1;
  for (let i = 0; i < n; i++) out[i] = (words[at + Math.floor(i / perWord)]! >>> (width * (i % perWord))) & mask;
  return at + Math.ceil((n * width) / 32);
}

/**
 * Encode one block: n (1..BLOCK) postings, docs ascending and above `prev` (the term's previous
 * block's last document, or -1), tfs 1..MAX_POSTING_TF, at out[at...]; returns the next word.
 * `scratch` holds BLOCK values.
 */
export function encodeBlock(docs: ArrayLike<number>, tfs: ArrayLike<number>, n: number, prev: number, out: Uint32Array, at: number, scratch: Uint32Array): number {
  let maxGap = 0;
  let maxTf = 0;
  for (let i = 0, last = prev; i < n; i++) {
    const d = docs[i]!;
    const tf = tfs[i]!;
    if (!(d > last) || d > 0xffffffff) throw new Error(`postings block: document ${d} after ${last} (documents must ascend within 0..2^32-1)`);
    if (!(tf >= 1 && tf <= MAX_POSTING_TF)) throw new Error(`postings block: tf ${tf} outside 1..${MAX_POSTING_TF}`);
    maxGap = Math.max(maxGap, d - last - 1);
    maxTf = Math.max(maxTf, tf - 1);
    last = d;
  }
  const docWidth = widthFor(maxGap);
  const tfWidth = widthFor(maxTf);
  out[at++] = docWidth | (tfWidth << 8);
  for (let i = 0, last = prev; i < n; i++) {
    scratch[i] = docs[i]! - last - 1;
    last = docs[i]!;
  }
  at = pack(scratch, n, docWidth, out, at);
  for (let i = 0; i < n; i++) scratch[i] = tfs[i]! - 1;
  return pack(scratch, n, tfWidth, out, at);
}

/** A block header's document and tf widths, or undefined for a header no block has. */
export function blockWidths(header: number): [number, number] | undefined {
  const docWidth = header & 0xff;
  const tfWidth = (header >>> 8) & 0xff;
  return BLOCK_WIDTHS.includes(docWidth) && BLOCK_WIDTHS.includes(tfWidth) && tfWidth <= 16 && header >>> 16 === 0 ? [docWidth, tfWidth] : undefined;
}

/**
 * Decode the block of n postings at words[at...] (prev as given to encodeBlock) into docs and tfs
 * (BLOCK long each); returns the word after the block.
 */
export function decodeBlock(words: Uint32Array, at: number, n: number, prev: number, docs: Uint32Array, tfs: Uint32Array): number {
  const header = words[at++]!;
  const widths = blockWidths(header);
  if (!widths) throw new InputError(`damaged postings block (header ${header.toString(16)}); rebuild with \`sleuth index\``);
  const [docWidth, tfWidth] = widths;
  at = unpack(words, at, n, docWidth, docs);
  let last = prev;
  for (let i = 0; i < n; i++) docs[i] = last = (last + 1 + docs[i]!) >>> 0;
  at = unpack(words, at, n, tfWidth, tfs);
  for (let i = 0; i < n; i++) tfs[i]!++;
  return at;
}

/** f32 at least v (v non-negative and finite): block bounds are stored in 4 bytes and must not fall below a score. */
export function f32Above(v: number): number {
  const f = Math.fround(v);
  if (f >= v) return f;
  f32Scratch[0] = f;
  f32Bits[0]!++;
  return f32Scratch[0]!;
}
const f32Scratch = new Float32Array(1);
const f32Bits = new Uint32Array(f32Scratch.buffer);

/** A term's postings as the encoder is given them. */
export interface TermPostings {
  docs: Uint32Array;
  tfs: Uint16Array;
}

/**
 * Writes post.data a term at a time (terms in order), keeping the block metadata: block.at (the
 * word where each block starts, and one past the last), block.last and block.max.
 */
export class BlockPostingsWriter {
  private readonly fd: number;
  private buf = new Uint32Array(1 << 18);
  private used = 0;
  /** Words written to the file so far. */
  private flushed = 0;
  readonly blockAt = new Grow(Uint32Array);
  readonly blockLast = new Grow(Uint32Array);
  private readonly blockMaxes = new Grow(Float64Array);
  private readonly scratch = new Uint32Array(BLOCK);

  /** norms: per document, k1·(1 - b + b·dl/avgdl), for the blocks' score bounds. */
  constructor(path: string, private readonly norms: Float64Array) {
    this.fd = openSync(path, 'w');
  }

  /** Append one term's postings (documents ascending); returns the largest tf/(tf + norm) of them. */
  addTerm(docs: Uint32Array, tfs: Uint16Array): number {
    const norms = this.norms;
    let termMax = 0;
    let prev = -1;
    for (let start = 0; start < docs.length; start += BLOCK) {
      const n = Math.min(BLOCK, docs.length - start);
      if (this.used + MAX_BLOCK_WORDS > this.buf.length) this.flush();
      const word = this.flushed + this.used;
      if (word > 0xffffffff) throw new InputError('postings too large for one segment (over 16 GiB compressed); build with smaller segments');
      this.blockAt.push(word);
      const blockDocs = docs.subarray(start, start + n);
      const blockTfs = tfs.subarray(start, start + n);
      this.used = encodeBlock(blockDocs, blockTfs, n, prev, this.buf, this.used, this.scratch);
      let max = 0;
      for (let i = 0; i < n; i++) {
        const tf = blockTfs[i]!;
        const w = tf / (tf + norms[blockDocs[i]!]!);
        if (w > max) max = w;
      }
      prev = blockDocs[n - 1]!;
      this.blockLast.push(prev);
      this.blockMaxes.push(max);
      if (max > termMax) termMax = max;
    }
    return termMax;
  }

  private flush(): void {
    const bytes = new Uint8Array(this.buf.buffer, 0, this.used * 4);
    let at = 0;
    while (at < bytes.length) at += writeSync(this.fd, bytes, at, bytes.length - at);
    this.flushed += this.used;
    this.used = 0;
  }

  /** Flush and close post.data; the metadata arrays as they go to their files. */
  finish(): { blockAt: Uint32Array; blockLast: Uint32Array; blockMax: Float32Array } {
    this.flush();
    closeSync(this.fd);
    this.blockAt.push(this.flushed);
    const maxes = this.blockMaxes.view();
    const blockMax = new Float32Array(maxes.length);
    for (let i = 0; i < maxes.length; i++) blockMax[i] = f32Above(maxes[i]!);
    return { blockAt: this.blockAt.view(), blockLast: this.blockLast.view(), blockMax };
  }

  /** Close without finishing (a failed build). */
  abort(): void {
    try {
      closeSync(this.fd);
    } catch {
      // Already closed.
    }
  }
}
