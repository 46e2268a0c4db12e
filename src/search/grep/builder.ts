import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { foldUnit } from './fold.js';
import { GREP_FILE, GREP_FORMAT_VERSION, GREP_MAGIC, HEADER_BYTES } from './format.js';

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
 * Memory while building: the vocabulary (a hash table over a typed-array arena) and a forward list
 * (block -> sorted word ids, each with the offsets of its chunks in the block, ~1 byte per word and
 * chunk) that write() inverts in two streaming passes.
 */
export interface GrepBuilderOptions {
  /** Chunks per block (default 64). */
  blockSize?: number;
}

export const DEFAULT_BLOCK_SIZE = 64;

const REC = 4;

/** Word records with "last document" unset (-1). */
function newRecords(words: number): Int32Array {
  const rec = new Int32Array(words * REC);
  for (let r = 0; r < rec.length; r += REC) rec[r + 3] = -1;
  return rec;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

export class GrepIndexBuilder {
  readonly blockSize: number;
  private nDocs = 0;
  /** Folded code units of every distinct word, back to back; word id's units start at wordStart[id]. */
  private arena = new Uint16Array(1 << 16);
  private wordStart: Uint32Array = new Uint32Array(1025);
  private nWords = 0;
  /** Per word, REC int32s side by side so that a lookup touches one cache line: hash, arena start, length, last document seen. */
  private rec = newRecords(1024);
  private table = new Int32Array(2048);
  private block = 0;
  /** The words in the current block, in the order first seen there (sorted when the block is written). */
  private blockWords: Uint32Array = new Uint32Array(4096);
  private blockWordCount = 0;
  /** (word, chunk) pairs in the current block. */
  private blockCount = 0;
  /** Per word, a bit per chunk offset in the current block (valid for the words of blockWords). */
  private masks: Uint32Array;
  private readonly maskWords: number;
  /** Block b's entries: varint(words), then per word in id order a varint id gap, varint(n) and its n chunk offsets (a byte each). */
  private fwd = new Uint8Array(1 << 16);
  private fwdLen = 0;
  private written = false;

  constructor(options: GrepBuilderOptions = {}) {
    const b = options.blockSize ?? DEFAULT_BLOCK_SIZE;
    // Offsets within a block are stored in one byte.
    if (!Number.isInteger(b) || b < 1 || b > 256) throw new Error(`grep block size must be a whole number from 1 to 256, got ${b}`);
    this.blockSize = b;
    this.maskWords = Math.ceil(b / 32);
    this.masks = new Uint32Array(1024 * this.maskWords);
  }

  /** Add the text of document `doc`; documents must come in order 0, 1, 2, ... */
  add(doc: number, text: string): void {
    if (this.written) throw new Error('GrepIndexBuilder.add after write');
    if (doc !== this.nDocs) throw new Error(`GrepIndexBuilder.add: expected document ${this.nDocs}, got ${doc}`);
    const blk = Math.floor(doc / this.blockSize);
    while (this.block < blk) this.flushBlock();
    this.nDocs++;

    // The hot loop: everything it touches per word is a local, and a word seen before (nearly all of
    // them) costs one table probe, one comparison and one block check.
    let table = this.table;
    let mask = table.length - 1;
    let rec = this.rec;
    let arena = this.arena;
    const offset = doc - this.block * this.blockSize;
    let h = FNV_OFFSET;
    let len = 0;
    let lone = false; // the current word contains an unpaired surrogate
    const n = text.length;
    for (let i = 0; i <= n; i++) {
      let u = i < n ? text.charCodeAt(i) : 0x20;
      if (u >= 0x41 && u <= 0x5a) u += 32;
      else if (u >= 0x80) {
        if (u === 0x17f) u = 0x73;
        else if (u === 0x212a) u = 0x6b;
        else if (u >= 0xd800 && u <= 0xdfff && !pairedSurrogate(text, i)) {
          // Stored text is UTF-8, where an unpaired surrogate becomes U+FFFD: index what grep sees.
          u = 0xfffd;
          lone = true;
        }
      }
      if ((u >= 0x61 && u <= 0x7a) || (u >= 0x30 && u <= 0x39) || u === 0x5f || u >= 0x80) {
        h = Math.imul(h ^ u, FNV_PRIME);
        len++;
        continue;
      }
      if (len === 0) continue;
      const hash = mix(h) | 0;
      const from = i - len;
      let slot = hash & mask;
      let id = -1;
      for (;;) {
        const cand = table[slot]! - 1;
        if (cand < 0) break;
        const r = cand * REC;
        if (rec[r] === hash && rec[r + 2] === len && (lone ? this.sameFolded(rec[r + 1]!, text, from, len) : sameAscii(arena, rec[r + 1]!, text, from, len))) {
          id = cand;
          break;
        }
        slot = (slot + 1) & mask;
      }
      if (id < 0) {
        id = this.newWord(text, from, len, hash, lone, slot);
        table = this.table;
        mask = table.length - 1;
        rec = this.rec;
        arena = this.arena;
      }
      const r = id * REC;
      const last = rec[r + 3]!;
      if (last !== doc) {
        rec[r + 3] = doc;
        const m = id * this.maskWords;
        if (last < doc - offset) {
          // First time in this block: list the word, clear its bits.
          if (this.blockWordCount === this.blockWords.length) this.blockWords = grow32(this.blockWords, this.blockWordCount + 1);
          this.blockWords[this.blockWordCount++] = id;
          this.masks.fill(0, m, m + this.maskWords);
        }
        this.masks[m + (offset >>> 5)]! |= 1 << (offset & 31);
        this.blockCount++;
      }
      h = FNV_OFFSET;
      len = 0;
      lone = false;
    }
  }

  /** Record a word not seen before, whose table slot is `slot`; returns its id. */
  private newWord(text: string, start: number, len: number, h: number, lone: boolean, slot: number): number {
    const id = this.nWords++;
    this.storeWord(text, start, len, lone);
    if ((id + 1) * REC > this.rec.length) {
      const next = newRecords(2 * (id + 1));
      next.set(this.rec);
      this.rec = next;
    }
    if ((id + 1) * this.maskWords > this.masks.length) {
      const next = new Uint32Array(2 * (id + 1) * this.maskWords);
      next.set(this.masks);
      this.masks = next;
    }
    const r = id * REC;
    this.rec[r] = h;
    this.rec[r + 1] = this.wordStart[id]!;
    this.rec[r + 2] = len;
    this.table[slot] = id + 1;
    if ((id + 1) * 2 > this.table.length) this.rehash();
    return id;
  }

  /** Append the folded units of text[start, start+len) to the arena as word number nWords-1. */
  private storeWord(text: string, start: number, len: number, lone: boolean): void {
    const id = this.nWords - 1;
    if (id + 2 > this.wordStart.length) this.wordStart = grow32(this.wordStart, id + 2);
    let at = this.wordStart[id]!;
    if (at + len > this.arena.length) {
      const next = new Uint16Array(Math.max(this.arena.length * 2, at + len));
      next.set(this.arena);
      this.arena = next;
    }
    for (let j = start; j < start + len; j++) {
      const u = text.charCodeAt(j);
      this.arena[at++] = lone && u >= 0xd800 && u <= 0xdfff && !pairedSurrogate(text, j) ? 0xfffd : foldUnit(u);
    }
    this.wordStart[id + 1] = at;
  }

  /** Whether the arena units at `at` equal the folded text at `start` (len units). */
  private sameFolded(at: number, text: string, start: number, len: number): boolean {
    const arena = this.arena;
    for (let j = 0; j < len; j++) {
      let u = text.charCodeAt(start + j);
      if (u >= 0x41 && u <= 0x5a) u += 32;
      else if (u === 0x17f) u = 0x73;
      else if (u === 0x212a) u = 0x6b;
      else if (u >= 0xd800 && u <= 0xdfff && !pairedSurrogate(text, start + j)) u = 0xfffd;
      if (arena[at + j] !== u) return false;
    }
    return true;
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let id = 0; id < this.nWords; id++) {
      let slot = this.rec[id * REC]! & mask;
      while (table[slot] !== 0) slot = (slot + 1) & mask;
      table[slot] = id + 1;
    }
    this.table = table;
  }

  private flushBlock(): void {
    // The block's words in id order, each with its chunk offsets in order (from its bits).
    const words = this.blockWords.subarray(0, this.blockWordCount).sort();
    // Per word at most 5 bytes of id gap and 2 of count, plus a byte per chunk.
    this.ensureFwd(5 + 7 * words.length + this.blockCount);
    const fwd = this.fwd;
    const masks = this.masks;
    const mw = this.maskWords;
    let p = writeVarint(fwd, this.fwdLen, words.length);
    let prev = -1;
    for (let j = 0; j < words.length; j++) {
      const id = words[j]!;
      const m = id * mw;
      let count = 0;
      for (let w = 0; w < mw; w++) count += popcount(masks[m + w]!);
      p = writeVarint(fwd, p, id - prev);
      p = writeVarint(fwd, p, count);
      for (let w = 0; w < mw; w++) {
        let bits = masks[m + w]!;
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
    const next = new Uint8Array(Math.max(this.fwd.length * 2, this.fwdLen + extra));
    next.set(this.fwd.subarray(0, this.fwdLen));
    this.fwd = next;
  }

  /** Write grep.bin into `dir` (deterministic bytes: same documents, same file). */
  write(dir: string): void {
    if (this.written) throw new Error('GrepIndexBuilder.write called twice');
    this.written = true;
    const nBlocks = Math.ceil(this.nDocs / this.blockSize);
    while (this.block < nBlocks) this.flushBlock();
    const nWords = this.nWords;
    const words: string[] = [];
    for (let id = 0; id < nWords; id++) words.push(unitsToString(this.arena, this.wordStart[id]!, this.wordStart[id + 1]!));
    this.arena = new Uint16Array(0);

    // Vocabulary in code-unit order, so the file does not depend on the order words were first seen.
    const order = Array.from({ length: nWords }, (_, i) => i).sort((a, b) => (words[a]! < words[b]! ? -1 : words[a]! > words[b]! ? 1 : 0));
    const rank = new Uint32Array(nWords);
    order.forEach((id, r) => (rank[id] = r));

    // Pass 1: block counts, chunk counts and the exact size of each word's entry list.
    const df = new Uint32Array(nWords);
    const chunks = new Float64Array(nWords);
    const varintSize = new Float64Array(nWords);
    const prev = new Int32Array(nWords).fill(-1);
    const size = this.blockSize;
    this.forEachPosting((id, blk, n) => {
      const r = rank[id]!;
      df[r]!++;
      chunks[r]! += n;
      varintSize[r]! += varintLength(blk - prev[r]!) + chunkListBytes(n, size);
      prev[r] = blk;
    });

    // A word's postings are a bitmap over blocks (every chunk of each) when that is smaller than its
    // list and the list would say little anyway: the word is in most blocks, and in most chunks of them.
    const bitmapWordsEach = Math.ceil(nBlocks / 32);
    const postStart = new Uint32Array(nWords);
    let bitmapWords = 0;
    let varintBytes = 0;
    for (let r = 0; r < nWords; r++) {
      if (varintSize[r]! > bitmapWordsEach * 4 && df[r]! * 2 > nBlocks && chunks[r]! * 2 > df[r]! * size) {
        postStart[r] = (0x80000000 | (bitmapWords / bitmapWordsEach)) >>> 0;
        bitmapWords += bitmapWordsEach;
      } else {
        postStart[r] = varintBytes;
        varintBytes += varintSize[r]!;
      }
    }
    if (varintBytes >= 0x80000000 || bitmapWords / Math.max(1, bitmapWordsEach) >= 0x80000000) throw new Error('grep index too large for its format (postings over 2 GiB)');

    // Pass 2: fill postings.
    const bitmaps = new Uint32Array(bitmapWords);
    const varints = new Uint8Array(varintBytes);
    const cursor = new Uint32Array(nWords);
    const maskBytes = Math.ceil(size / 8);
    prev.fill(-1);
    this.forEachPosting((id, blk, n, fwd, at) => {
      const r = rank[id]!;
      const start = postStart[r]!;
      if (start & 0x80000000) {
        bitmaps[(start & 0x7fffffff) * bitmapWordsEach + (blk >>> 5)]! |= 1 << (blk & 31);
        return;
      }
      let p = writeVarint(varints, start + cursor[r]!, blk - prev[r]!);
      p = writeVarint(varints, p, n);
      if (n === size) {
        // every chunk of the block: nothing more to say
      } else if (n <= maskBytes) {
        for (let j = 0; j < n; j++) varints[p++] = fwd[at + j]!;
      } else {
        for (let j = 0; j < n; j++) varints[p + (fwd[at + j]! >>> 3)]! |= 1 << (fwd[at + j]! & 7);
        p += maskBytes;
      }
      cursor[r] = p - start;
      prev[r] = blk;
    });

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
    const fields = [GREP_FORMAT_VERSION, this.blockSize, this.nDocs, nBlocks, nWords, bitmapWords, varintBytes, vocabBytes];
    fields.forEach((v, i) => header.writeUInt32LE(v, 8 + 4 * i));

    // Written beside it, then renamed over it: a reader never sees half a file, and a failed write leaves the old one.
    const path = join(dir, GREP_FILE);
    const fd = openSync(`${path}.tmp`, 'w');
    try {
      for (const part of [header, df, postStart, vocabOff, bitmaps, varints, vocab]) {
        const bytes = new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
        let off = 0;
        while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      }
    } finally {
      closeSync(fd);
    }
    renameSync(`${path}.tmp`, path);
    // The builder is done; let its memory go before the caller's next step.
    this.fwd = new Uint8Array(0);
    this.table = new Int32Array(0);
    this.rec = new Int32Array(0);
  }

  /** Every (word, block) entry in block order: n chunks of the block hold the word, their offsets at fwd[at, at + n). */
  private forEachPosting(fn: (id: number, blk: number, n: number, fwd: Uint8Array, at: number) => void): void {
    const fwd = this.fwd;
    let p = 0;
    for (let blk = 0; p < this.fwdLen; blk++) {
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
  }
}

/** Finish an FNV-1a hash (murmur3's fmix32): FNV's low bits, used for the table slot, are weak alone. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function pairedSurrogate(text: string, i: number): boolean {
  const u = text.charCodeAt(i);
  if (u <= 0xdbff) {
    const next = text.charCodeAt(i + 1);
    return next >= 0xdc00 && next <= 0xdfff;
  }
  const before = text.charCodeAt(i - 1);
  return before >= 0xd800 && before <= 0xdbff;
}





function unitsToString(units: Uint16Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i += 8192) s += String.fromCharCode(...units.subarray(i, Math.min(to, i + 8192)));
  return s;
}

/**
 * Whether arena units at `at` equal text[start, start+len) folded, for words without unpaired
 * surrogates (the folding here is fold.ts's, inlined).
 */
function sameAscii(arena: Uint16Array, at: number, text: string, start: number, len: number): boolean {
  for (let j = 0; j < len; j++) {
    let u = text.charCodeAt(start + j);
    if (u >= 0x41 && u <= 0x5a) u += 32;
    else if (u === 0x17f) u = 0x73;
    else if (u === 0x212a) u = 0x6b;
    if (arena[at + j] !== u) return false;
  }
  return true;
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
