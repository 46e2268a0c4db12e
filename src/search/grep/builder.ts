import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { GREP_FILE, GREP_FORMAT_VERSION, GREP_MAGIC, HEADER_BYTES } from './format.js';
import { GrepWords } from './words.js';

/**
 * Builds the grep prefilter: for every distinct folded word of the corpus (fold.ts), the blocks of
 * `blockSize` consecutive chunks that contain it, and which chunks of each block.
 *
 * Why words, not trigrams: on English text nearly every trigram occurs in nearly every block of 64
 * chunks (measured on 1M synthetic chunks: "arc", "rch", "che", "her" each in 100% of blocks), so
 * block-level trigrams filter nothing, and chunk-level trigram postings would cost several times the
 * text. Words stay selective, and a literal maps to words through the vocabulary (exact, prefix, suffix
 * or substring match; see word-index.ts). Every entry says which chunks of its block hold the word, so
 * that "former" AND "producer" narrows to the chunks holding both: on text where both words are in
 * nearly every block (measured on 1M synthetic chunks), block-level entries left 97% of the corpus to
 * the regex; chunk-level ones leave a few hundred chunks. Words in most chunks of their blocks (the
 * commonest words) are kept as a bitmap of blocks instead, which is smaller and filters little anyway.
 *
 * Words come numbered (addWords), from a vocabulary the caller keeps: GrepWords in TypeScript, or
 * the index builder's WebAssembly loop over UTF-8 (../assembly/words.ts); add() numbers them with
 * a GrepWords of its own. Memory while building: a record per word (last document, chunk bits) and
 * a forward list (block -> sorted word ids, each with the offsets of its chunks in the block, ~1
 * byte per word and chunk) that write() inverts in two streaming passes.
 */
export interface GrepBuilderOptions {
  /** Chunks per block (default 64). */
  blockSize?: number;
}

export const DEFAULT_BLOCK_SIZE = 64;

export class GrepIndexBuilder implements ForwardList {
  readonly blockSize: number;
  private nDocs = 0;
  /** The vocabulary add() numbers words with (addWords callers keep their own). */
  private ownWords: GrepWords | undefined;
  /** Words numbered so far (the highest id seen plus one). */
  private nWords = 0;
  /**
   * Per word, `stride` u32s side by side, so that marking a word touches one cache line: the last
   * document seen plus one (0 before any), then its bits for the chunks of the current block
   * (valid for the words of blockWords).
   */
  private rec: Uint32Array;
  private readonly stride: number;
  private block = 0;
  /** The words in the current block, in the order first seen there (sorted when the block is written). */
  private blockWords: Uint32Array = new Uint32Array(4096);
  private blockWordCount = 0;
  /** (word, chunk) pairs in the current block. */
  private blockCount = 0;
  private readonly maskWords: number;
  /** Scratch for sorting blockWords. */
  private sortTmp: Uint32Array = new Uint32Array(4096);
  /** Block b's entries: varint(words), then per word in id order a varint id gap, varint(n) and its n chunk offsets (a byte each). */
  private fwd = new Uint8Array(1 << 16);
  private fwdLen = 0;
  /**
   * The forward list's full chunks before `fwd` (a block never straddles two): chunks, not one
   * array grown by doubling, so that no copy is made and no memory first-touched twice.
   */
  private fwdDone: { bytes: Uint8Array; used: number }[] = [];
  private written = false;

  constructor(options: GrepBuilderOptions = {}) {
    const b = options.blockSize ?? DEFAULT_BLOCK_SIZE;
    // Offsets within a block are stored in one byte.
    if (!Number.isInteger(b) || b < 1 || b > 256) throw new Error(`grep block size must be a whole number from 1 to 256, got ${b}`);
    this.blockSize = b;
    this.maskWords = Math.ceil(b / 32);
    this.stride = 2 ** Math.ceil(Math.log2(1 + this.maskWords));
    this.rec = new Uint32Array(1024 * this.stride);
  }

  /** Add the text of document `doc`; documents must come in order 0, 1, 2, ... */
  add(doc: number, text: string): void {
    // Checked before the words are numbered, so a refused document leaves the vocabulary alone.
    this.checkOrder(doc);
    this.addWords(doc, (this.ownWords ??= new GrepWords()).wordsOf(doc, text));
  }

  /**
   * Add document `doc` as the numbers of its words (each once), from a vocabulary the caller keeps
   * (GrepWords, or the WebAssembly loop) and hands to write(); documents in order 0, 1, 2, ...
   */
  addWords(doc: number, ids: Uint32Array): void {
    this.checkOrder(doc);
    const blk = Math.floor(doc / this.blockSize);
    while (this.block < blk) this.flushBlock();
    this.nDocs++;
    const offset = doc - this.block * this.blockSize;
    const blockStart = doc - offset;
    const mw = this.maskWords;
    const stride = this.stride;
    const bit = 1 << (offset & 31);
    const word = 1 + (offset >>> 5);
    for (let j = 0; j < ids.length; j++) {
      const id = ids[j]!;
      if (id >= this.nWords) this.growWords(id + 1);
      const r = id * stride;
      const rec = this.rec;
      const last = rec[r]! - 1;
      if (last === doc) continue;
      rec[r] = doc + 1;
      if (last < blockStart) {
        // First time in this block: list the word, clear its bits.
        if (this.blockWordCount === this.blockWords.length) this.blockWords = grow32(this.blockWords, this.blockWordCount + 1);
        this.blockWords[this.blockWordCount++] = id;
        rec.fill(0, r + 1, r + 1 + mw);
      }
      rec[r + word]! |= bit;
      this.blockCount++;
    }
  }

  private checkOrder(doc: number): void {
    if (this.written) throw new Error('GrepIndexBuilder.add after write');
    if (doc !== this.nDocs) throw new Error(`GrepIndexBuilder.add: expected document ${this.nDocs}, got ${doc}`);
  }

  private growWords(n: number): void {
    this.nWords = n;
    if (n * this.stride > this.rec.length) {
      const next = new Uint32Array(Math.max(2 * this.rec.length, n * this.stride));
      next.set(this.rec);
      this.rec = next;
    }
  }

  private flushBlock(): void {
    // The block's words in id order, each with its chunk offsets in order (from its bits).
    if (this.sortTmp.length < this.blockWordCount) this.sortTmp = new Uint32Array(this.blockWords.length);
    const words = radixSort(this.blockWords, this.blockWordCount, this.sortTmp, this.nWords);
    // Per word at most 5 bytes of id gap and 2 of count, plus a byte per chunk.
    this.ensureFwd(5 + 7 * words.length + this.blockCount);
    const fwd = this.fwd;
    const rec = this.rec;
    const stride = this.stride;
    const mw = this.maskWords;
    let p = writeVarint(fwd, this.fwdLen, words.length);
    let prev = -1;
    for (let j = 0; j < words.length; j++) {
      const id = words[j]!;
      const m = id * stride + 1;
      let count = 0;
      for (let w = 0; w < mw; w++) count += popcount(rec[m + w]!);
      p = writeVarint(fwd, p, id - prev);
      p = writeVarint(fwd, p, count);
      for (let w = 0; w < mw; w++) {
        let bits = rec[m + w]!;
        while (bits !== 0) {
          const low = bits & -bits;
          fwd[p++] = w * 32 + (31 - Math.clz32(low));
          bits ^= low;
        }
      }
      prev = id;
    }
    this.fwdLen = p;
    this.blockWordCount = 0;
    this.blockCount = 0;
    this.block++;
  }

  private ensureFwd(extra: number): void {
    if (this.fwdLen + extra <= this.fwd.length) return;
    this.fwdDone.push({ bytes: this.fwd, used: this.fwdLen });
    this.fwd = new Uint8Array(Math.max(Math.min(this.fwd.length * 2, FWD_CHUNK_MAX), extra));
    this.fwdLen = 0;
  }

  /**
   * Write grep.bin into `dir` (deterministic bytes: same documents, same file). `words` are the
   * words by number, from the vocabulary addWords' caller kept; add()'s own by default.
   */
  write(dir: string, words: string[] = this.ownWords?.words() ?? []): void {
    if (this.written) throw new Error('GrepIndexBuilder.write called twice');
    if (words.length < this.nWords) throw new Error(`GrepIndexBuilder.write: ${words.length} words given, documents hold ${this.nWords}`);
    this.written = true;
    this.ownWords = undefined;
    writeGrepFile(dir, this, words);
    // The builder is done; let its memory go before the caller's next step.
    this.fwd = new Uint8Array(0);
    this.fwdLen = 0;
    this.fwdDone = [];
    this.rec = new Uint32Array(0);
  }

  finish(): number {
    const nBlocks = Math.ceil(this.nDocs / this.blockSize);
    while (this.block < nBlocks) this.flushBlock();
    return nBlocks;
  }

  get docs(): number {
    return this.nDocs;
  }

  countEntries(nWords: number): Uint32Array {
    const stats = new Uint32Array(ENTRY_STATS * nWords);
    const size = this.blockSize;
    this.forEachPosting((id, blk, n) => {
      const r = ENTRY_STATS * id;
      stats[r]!++;
      stats[r + 1]! += n;
      stats[r + 2]! += varintLength(blk + 1 - stats[r + 3]!) + chunkListBytes(n, size);
      stats[r + 3] = blk + 1;
    });
    return stats;
  }

  fill(plan: Int32Array, bitmapWords: number, bitmapWordsEach: number, ranges: VarintRange[], write: (varints: Uint8Array, bitmaps: Uint32Array) => void): void {
    // All at once (this builder is the reference and the fallback), handed out a range at a time.
    const bitmaps = new Uint32Array(bitmapWords);
    const varints = new Uint8Array(ranges.length > 0 ? ranges[ranges.length - 1]!.hi : 0);
    const size = this.blockSize;
    const maskBytes = Math.ceil(size / 8);
    this.forEachPosting((id, blk, n, fwd, at) => {
      const r = ENTRY_STATS * id;
      const bitmap = plan[r]!;
      if (bitmap >= 0) {
        bitmaps[bitmap * bitmapWordsEach + (blk >>> 5)]! |= 1 << (blk & 31);
        return;
      }
      let p = writeVarint(varints, plan[r + 1]!, blk + 1 - plan[r + 2]!);
      p = writeVarint(varints, p, n);
      if (n === size) {
        // every chunk of the block: nothing more to say
      } else if (n <= maskBytes) {
        for (let j = 0; j < n; j++) varints[p++] = fwd[at + j]!;
      } else {
        for (let j = 0; j < n; j++) varints[p + (fwd[at + j]! >>> 3)]! |= 1 << (fwd[at + j]! & 7);
        p += maskBytes;
      }
      plan[r + 1] = p;
      plan[r + 2] = blk + 1;
    });
    for (const { lo, hi } of ranges) write(varints.subarray(lo, hi), bitmaps);
  }

  /** Every (word, block) entry in block order: n chunks of the block hold the word, their offsets at fwd[at, at + n). */
  private forEachPosting(fn: (id: number, blk: number, n: number, fwd: Uint8Array, at: number) => void): void {
    let blk = 0;
    for (const chunk of [...this.fwdDone, { bytes: this.fwd, used: this.fwdLen }]) blk = this.forEachPostingIn(chunk.bytes, chunk.used, blk, fn);
  }

  /** forEachPosting over one chunk of the forward list, whose first block is `blk`; returns the next block. */
  private forEachPostingIn(fwd: Uint8Array, used: number, blk: number, fn: (id: number, blk: number, n: number, fwd: Uint8Array, at: number) => void): number {
    let p = 0;
    for (; p < used; blk++) {
      let words = 0;
      let shift = 0;
      for (;;) {
        const byte = fwd[p++]!;
        words += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) break;
        shift += 7;
      }
      let id = -1;
      for (let j = 0; j < words; j++) {
        let gap = 0;
        shift = 0;
        for (;;) {
          const byte = fwd[p++]!;
          gap += (byte & 0x7f) * 2 ** shift;
          if (byte < 0x80) break;
          shift += 7;
        }
        id += gap;
        let n = fwd[p++]!;
        if (n >= 0x80) n = (n & 0x7f) + 128 * fwd[p++]!;
        fn(id, blk, n, fwd, p);
        p += n;
      }
    }
    return blk;
  }
}

/**
 * A finished forward list (block -> words -> chunks), as writeGrepFile inverts it: the TypeScript
 * GrepIndexBuilder, or the WebAssembly one (../word-loops.ts), which build the same lists.
 */
export interface ForwardList {
  readonly blockSize: number;
  /** Documents added. */
  readonly docs: number;
  /** Close the last block; returns the number of blocks. */
  finish(): number;
  /**
   * Pass 1: per word id, ENTRY_STATS u32s: the blocks holding it, the chunks holding it, the bytes
   * of its entry list (as the file lays it out), and scratch.
   */
  countEntries(nWords: number): Uint32Array;
  /**
   * Pass 2: the postings, from a plan of ENTRY_STATS int32s per word id: its bitmap number (or -1
   * for an entry list), where its entry list starts in the varints, 0 (scratch), and its start
   * again. The varints come a range at a time, [lo, hi) for each of `ranges` in order (each
   * range's words whole), handed to `write` with the bitmaps (complete from the first call on);
   * views valid until it returns.
   */
  fill(plan: Int32Array, bitmapWords: number, bitmapWordsEach: number, ranges: VarintRange[], write: (varints: Uint8Array, bitmaps: Uint32Array) => void): void;
}

/** A range of grep.bin's varints, [lo, hi) in bytes, that starts and ends between two words' lists. */
export interface VarintRange {
  lo: number;
  hi: number;
}

/** Bytes of varints filled per pass of ForwardList.fill (a word with more gets a pass of its own). */
const VARINT_PASS_BYTES = 32 << 20;

/** u32s per word of countEntries' stats and of fill's plan (one cache line holds four words' worth). */
export const ENTRY_STATS = 4;

/**
 * Write grep.bin into `dir` from a forward list and its vocabulary (`words`, by number), through a
 * temporary file renamed into place: a reader never sees half a file. `passBytes`: varints filled
 * per pass (smaller only to exercise the passes in tests).
 */
export function writeGrepFile(dir: string, list: ForwardList, words: string[], passBytes = VARINT_PASS_BYTES): void {
  const nBlocks = list.finish();
  const nWords = words.length;
  const size = list.blockSize;

  // Vocabulary in code-unit order, so the file does not depend on the order words were first seen.
  const order = Array.from({ length: nWords }, (_, i) => i).sort((a, b) => (words[a]! < words[b]! ? -1 : words[a]! > words[b]! ? 1 : 0));
  const stats = list.countEntries(nWords);

  // A word's postings are a bitmap over blocks (every chunk of each) when that is smaller than its
  // list and the list would say little anyway: the word is in most blocks, and in most chunks of them.
  // In rank order: df and postStart as the file has them; per id, the plan fill() follows.
  const bitmapWordsEach = Math.ceil(nBlocks / 32);
  const df = new Uint32Array(nWords);
  const postStart = new Uint32Array(nWords);
  const plan = new Int32Array(ENTRY_STATS * nWords);
  let bitmapWords = 0;
  let varintBytes = 0;
  // The varints are filled a range of words at a time, through one buffer (../word-loops.ts).
  const ranges: VarintRange[] = [];
  let rangeStart = 0;
  for (let rk = 0; rk < nWords; rk++) {
    const r = ENTRY_STATS * order[rk]!;
    const blocks = stats[r]!;
    const listBytes = stats[r + 2]!;
    df[rk] = blocks;
    if (listBytes > bitmapWordsEach * 4 && blocks * 2 > nBlocks && stats[r + 1]! * 2 > blocks * size) {
      const bitmap = bitmapWords / bitmapWordsEach;
      postStart[rk] = (0x80000000 | bitmap) >>> 0;
      plan[r] = bitmap;
      bitmapWords += bitmapWordsEach;
    } else {
      postStart[rk] = varintBytes;
      plan[r] = -1;
      plan[r + 1] = varintBytes;
      plan[r + 3] = varintBytes;
      if (varintBytes - rangeStart >= passBytes) {
        ranges.push({ lo: rangeStart, hi: varintBytes });
        rangeStart = varintBytes;
      }
      varintBytes += listBytes;
    }
    if (varintBytes >= 0x80000000 || bitmapWords / Math.max(1, bitmapWordsEach) >= 0x80000000) throw new Error('grep index too large for its format (postings over 2 GiB)');
  }
  if (varintBytes > rangeStart || ranges.length === 0) ranges.push({ lo: rangeStart, hi: varintBytes });

  // Vocabulary: UTF-8 words, each followed by '\n' (never part of a word), so a substring search over
  // the whole blob cannot match across two words.
  const vocabOff = new Uint32Array(nWords + 1);
  let vocabBytes = 0;
  for (let r = 0; r < nWords; r++) {
    vocabOff[r] = vocabBytes;
    vocabBytes += Buffer.byteLength(words[order[r]!]!, 'utf8') + 1;
  }
  const vocab = Buffer.alloc(vocabBytes, 0x0a);
  for (let r = 0; r < nWords; r++) vocab.write(words[order[r]!]!, vocabOff[r]!, 'utf8');
  vocabOff[nWords] = vocabBytes;

  const header = Buffer.alloc(HEADER_BYTES);
  header.write(GREP_MAGIC, 0, 'latin1');
  const fields = [GREP_FORMAT_VERSION, size, list.docs, nBlocks, nWords, bitmapWords, varintBytes, vocabBytes];
  fields.forEach((v, i) => header.writeUInt32LE(v, 8 + 4 * i));

  const path = join(dir, GREP_FILE);
  const fd = openSync(`${path}.tmp`, 'w');
  const put = (part: ArrayBufferView) => {
    const bytes = new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  };
  try {
    for (const part of [header, df, postStart, vocabOff]) put(part);
    let first = true;
    list.fill(plan, bitmapWords, bitmapWordsEach, ranges, (varints, bitmaps) => {
      // The bitmaps come before the varints in the file, and are whole from the first range on.
      if (first) put(bitmaps);
      first = false;
      put(varints);
    });
    put(vocab);
  } finally {
    closeSync(fd);
  }
  renameSync(`${path}.tmp`, path);
}

/** Largest chunk of the forward list (a block needing more gets a chunk its size). */
const FWD_CHUNK_MAX = 16 << 20;

/** Digits of radixSort: 2^11 buckets, so that two passes sort ids below 2^22. */
const RADIX_BITS = 11;
const radixCounts = new Uint32Array(1 << RADIX_BITS);

/**
 * The first n values of `a` (all below `limit`) in increasing order, sorted in place or into
 * `tmp` (which is returned): least-significant-digit radix sort. A block's few thousand word ids
 * sort several times faster so than with TypedArray.prototype.sort (measured: 3 s of a 1M build).
 */
function radixSort(a: Uint32Array, n: number, tmp: Uint32Array, limit: number): Uint32Array {
  let from = a;
  let to = tmp;
  for (let shift = 0; shift === 0 || limit > 2 ** shift; shift += RADIX_BITS) {
    const counts = radixCounts.fill(0);
    const mask = (1 << RADIX_BITS) - 1;
    for (let i = 0; i < n; i++) counts[(from[i]! >>> shift) & mask]!++;
    let sum = 0;
    for (let d = 0; d <= mask; d++) {
      const c = counts[d]!;
      counts[d] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const v = from[i]!;
      to[counts[(v >>> shift) & mask]!++] = v;
    }
    [from, to] = [to, from];
  }
  return from.subarray(0, n);
}

function grow32(a: Uint32Array, min: number): Uint32Array {
  const next = new Uint32Array(Math.max(a.length * 2, min));
  next.set(a);
  return next;
}

/**
 * Bytes of one block entry's chunk list after its block gap: varint(n), then nothing when every chunk of
 * the block holds the word, n one-byte offsets when that is no longer than a bitmask, else the bitmask
 * (bit o of byte o >> 3 for offset o).
 */
export function chunkListBytes(n: number, size: number): number {
  const maskBytes = Math.ceil(size / 8);
  return varintLength(n) + (n === size ? 0 : n <= maskBytes ? n : maskBytes);
}

export function varintLength(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

export function writeVarint(out: Uint8Array, pos: number, v: number): number {
  while (v >= 0x80) {
    out[pos++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[pos++] = v;
  return pos;
}

/** Number of set bits of a 32-bit word. */
export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}
