import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../errors.js';
import type { FileSums } from '../checksums.js';
import { isWordUnit } from './fold.js';
import { GREP_FILE, GREP_FORMAT_VERSION, GREP_MAGIC, HEADER_BYTES } from './format.js';
import type { Query } from './literals.js';

/**
 * The loaded grep prefilter (format.ts), viewed straight from the file's bytes.
 *
 * A required literal (folded, see fold.ts) is answered through the vocabulary: split at the non-word
 * units it contains, its inner pieces are whole words, its first piece ends a word, its last piece
 * starts one; a literal with no separator lies inside one word. Each piece selects the vocabulary words
 * it fits, and the chunks holding any of them; pieces too short to be selective are skipped.
 */

/** Pieces shorter than this (other than whole words) are not looked up: they fit too many words. */
const MIN_PARTIAL = 3;
/** A piece fitting more vocabulary words than this is not worth the union: treat it as "anywhere". */
const MAX_WORDS_PER_PIECE = 4096;

/** A set of documents as a bitmap, or null for "every document". */
export type DocSet = Uint32Array | null;

export class GrepIndex {
  readonly blockSize: number;
  readonly nDocs: number;
  readonly nBlocks: number;
  readonly nWords: number;
  private readonly df: Uint32Array;
  private readonly postStart: Uint32Array;
  private readonly vocabOff: Uint32Array;
  private readonly bitmaps: Uint32Array;
  private readonly varints: Uint8Array;
  private readonly vocab: Buffer;
  private readonly bitmapWordsEach: number;
  private readonly docWords: number;

  constructor(file: Buffer, path: string) {
    const bad = (why: string): never => {
      throw new InputError(`grep index ${path} ${why}; rebuild it with \`sleuth index\``);
    };
    if (file.length < HEADER_BYTES) bad(`is truncated (${file.length} bytes)`);
    if (file.toString('latin1', 0, 8) !== GREP_MAGIC) bad('is not a sleuth grep index');
    const u32 = (i: number) => file.readUInt32LE(8 + 4 * i);
    const version = u32(0);
    if (version !== GREP_FORMAT_VERSION) bad(`has format version ${version}, this sleuth reads version ${GREP_FORMAT_VERSION}`);
    this.blockSize = u32(1);
    this.nDocs = u32(2);
    this.nBlocks = u32(3);
    this.nWords = u32(4);
    const bitmapWords = u32(5);
    const varintBytes = u32(6);
    const vocabBytes = u32(7);
    const expected = HEADER_BYTES + 4 * (3 * this.nWords + 1 + bitmapWords) + varintBytes + vocabBytes;
    if (file.length !== expected) bad(`is truncated or corrupt (expected ${expected} bytes, found ${file.length})`);
    if (this.blockSize < 1 || this.nBlocks !== Math.ceil(this.nDocs / this.blockSize)) bad('has an inconsistent header');

    // Typed-array views need 4-byte alignment; readFileSync's buffer normally has it, copy if not.
    const bytes = file.byteOffset % 4 === 0 ? file : Buffer.from(file);
    const view32 = (offset: number, length: number) => new Uint32Array(bytes.buffer, bytes.byteOffset + offset, length);
    let off = HEADER_BYTES;
    this.df = view32(off, this.nWords);
    off += 4 * this.nWords;
    this.postStart = view32(off, this.nWords);
    off += 4 * this.nWords;
    this.vocabOff = view32(off, this.nWords + 1);
    off += 4 * (this.nWords + 1);
    this.bitmaps = view32(off, bitmapWords);
    off += 4 * bitmapWords;
    this.varints = bytes.subarray(off, off + varintBytes);
    off += varintBytes;
    this.vocab = bytes.subarray(off, off + vocabBytes);
    this.bitmapWordsEach = Math.ceil(this.nBlocks / 32);
    this.docWords = Math.ceil(this.nDocs / 32);
    if (this.vocabOff[this.nWords] !== vocabBytes) bad('has an inconsistent vocabulary');
  }

  /**
   * Read one byte of every memory page of the index, so that a long-lived process (a search pool
   * worker) pays the first-touch page faults once, up front, not inside its first greps. Returns a
   * checksum only so the reads cannot be optimised away.
   */
  touch(): number {
    let sum = 0;
    for (const part of [this.df, this.postStart, this.vocabOff, this.bitmaps, this.varints, this.vocab]) sum += touchPages(part);
    return sum;
  }

  /**
   * The documents that may hold a match of a regex whose matches all satisfy `query`. The bitmap
   * is this index's scratch memory: valid until the next call.
   */
  candidates(query: Query): DocSet {
    // Every bitmap of the last call is free again.
    this.free.push(...this.taken);
    this.taken.length = 0;
    return this.evaluate(query);
  }

  private evaluate(query: Query): DocSet {
    switch (query.op) {
      case 'all':
        return null;
      case 'lit':
        return this.literal(query.s);
      case 'and': {
        let acc: DocSet = null;
        for (const q of query.args) {
          const set = this.evaluate(q);
          if (set === null) continue;
          if (acc === null) acc = set;
          else for (let i = 0; i < acc.length; i++) acc[i]! &= set[i]!;
        }
        return acc;
      }
      case 'or': {
        const acc = this.emptySet();
        for (const q of query.args) {
          const set = this.evaluate(q);
          if (set === null) return null;
          for (let i = 0; i < acc.length; i++) acc[i]! |= set[i]!;
        }
        return acc;
      }
    }
  }

  /**
   * Bitmaps over the corpus (125 KB at 1M chunks), reused from call to call: a fresh one each time
   * costs more in allocation and first-touch page faults than a grep's whole prefilter otherwise.
   */
  private readonly free: Uint32Array[] = [];
  private readonly taken: Uint32Array[] = [];

  /** An all-zero bitmap, taken for the current candidates() call. */
  private emptySet(): Uint32Array {
    const set = this.free.pop()?.fill(0) ?? new Uint32Array(this.docWords);
    this.taken.push(set);
    return set;
  }

  /** Documents whose folded text may contain the folded string `s`. */
  literal(s: string): DocSet {
    const pieces: string[] = [];
    let cur = '';
    for (let i = 0; i < s.length; i++) {
      if (isWordUnit(s.charCodeAt(i))) cur += s[i];
      else {
        pieces.push(cur);
        cur = '';
      }
    }
    pieces.push(cur);
    const sets: Array<number[] | null> = [];
    if (pieces.length === 1) {
      sets.push(s.length >= MIN_PARTIAL ? this.wordsContaining(s, 'inside') : null);
    } else {
      const first = pieces[0]!;
      const last = pieces[pieces.length - 1]!;
      if (first.length >= MIN_PARTIAL) sets.push(this.wordsContaining(first, 'end'));
      if (last.length >= MIN_PARTIAL) sets.push(this.wordsStartingWith(last));
      for (const piece of pieces.slice(1, -1)) if (piece !== '') sets.push(this.exactWord(piece));
    }
    let acc: DocSet = null;
    for (const words of sets) {
      if (words === null) continue;
      const set = this.docsOf(words);
      if (acc === null) acc = set;
      else for (let i = 0; i < acc.length; i++) acc[i]! &= set[i]!;
    }
    return acc;
  }

  private word(r: number): string {
    return this.vocab.toString('utf8', this.vocabOff[r]!, this.vocabOff[r + 1]! - 1);
  }

  /** First word rank whose word is >= s (code-unit order, as written). */
  private lowerBound(s: string): number {
    let lo = 0;
    let hi = this.nWords;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.word(mid) < s) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private exactWord(s: string): number[] {
    const r = this.lowerBound(s);
    return r < this.nWords && this.word(r) === s ? [r] : [];
  }

  private wordsStartingWith(s: string): number[] | null {
    const out: number[] = [];
    for (let r = this.lowerBound(s); r < this.nWords && this.word(r).startsWith(s); r++) {
      if (out.length === MAX_WORDS_PER_PIECE) return null;
      out.push(r);
    }
    return out;
  }

  /**
   * Words containing s anywhere ('inside') or as their ending ('end'), through the vocabulary's
   * trigrams: the words holding the rarest trigram of s, each checked, not a scan of the whole
   * vocabulary (which grows with the corpus).
   */
  private wordsContaining(s: string, where: 'inside' | 'end'): number[] | null {
    const needle = Buffer.from(s, 'utf8');
    const grams = this.vocabTrigrams();
    let from = 0;
    let to = -1;
    for (let i = 0; i + 3 <= needle.length; i++) {
      const bucket = trigramBucket(needle[i]!, needle[i + 1]!, needle[i + 2]!);
      const start = grams.off[bucket]!;
      const end = grams.off[bucket + 1]!;
      if (to < 0 || end - start < to - from) {
        from = start;
        to = end;
      }
    }
    const out: number[] = [];
    if (to < 0) return out;
    for (let j = from; j < to; j++) {
      const r = grams.ranks[j]!;
      // A word lands in a bucket once per trigram of it that hashes there; ranks ascend.
      if (j > from && grams.ranks[j - 1] === r) continue;
      const word = this.vocab.subarray(this.vocabOff[r]!, this.vocabOff[r + 1]! - 1);
      const at = where === 'end' ? word.length - needle.length : word.indexOf(needle);
      if (at < 0 || (where === 'end' && !word.subarray(at).equals(needle))) continue;
      if (out.length === MAX_WORDS_PER_PIECE) return null;
      out.push(r);
    }
    return out;
  }

  private trigrams: { off: Uint32Array; ranks: Uint32Array } | undefined;

  /**
   * Per trigram bucket (hashed byte trigrams, see trigramBucket), the ranks of the vocabulary words
   * holding a trigram of it, ascending: built on the first substring lookup, in two passes (count,
   * then fill) over the vocabulary.
   */
  private vocabTrigrams(): { off: Uint32Array; ranks: Uint32Array } {
    if (this.trigrams) return this.trigrams;
    const { vocab, vocabOff } = this;
    const off = new Uint32Array(TRIGRAM_BUCKETS + 1);
    const forEach = (visit: (bucket: number, rank: number) => void) => {
      for (let r = 0; r < this.nWords; r++) {
        // Each word ends with a newline byte (format.ts), not part of the word.
        const end = vocabOff[r + 1]! - 1;
        for (let i = vocabOff[r]!; i + 3 <= end; i++) visit(trigramBucket(vocab[i]!, vocab[i + 1]!, vocab[i + 2]!), r);
      }
    };
    forEach((bucket) => off[bucket + 1]!++);
    for (let b = 0; b < TRIGRAM_BUCKETS; b++) off[b + 1]! += off[b]!;
    const fill = off.slice(0, TRIGRAM_BUCKETS);
    const ranks = new Uint32Array(off[TRIGRAM_BUCKETS]!);
    forEach((bucket, r) => {
      ranks[fill[bucket]!++] = r;
    });
    this.trigrams = { off, ranks };
    return this.trigrams;
  }

  /** Documents holding any of these words. */
  private docsOf(ranks: number[]): Uint32Array {
    const set = this.emptySet();
    const each = this.bitmapWordsEach;
    const size = this.blockSize;
    const maskBytes = Math.ceil(size / 8);
    for (const r of ranks) {
      const start = this.postStart[r]!;
      if (start & 0x80000000) {
        // A word in many blocks: a bitmap of blocks, every document of each.
        const base = (start & 0x7fffffff) * each;
        for (let i = 0; i < each; i++) {
          let bits = this.bitmaps[base + i]!;
          while (bits !== 0) {
            const low = bits & -bits;
            const blk = i * 32 + (31 - Math.clz32(low));
            setRange(set, blk * size, Math.min(this.nDocs, blk * size + size));
            bits ^= low;
          }
        }
        continue;
      }
      let p = start;
      let blk = -1;
      const n = this.df[r]!;
      for (let j = 0; j < n; j++) {
        let gap = 0;
        let shift = 0;
        for (;;) {
          const byte = this.varints[p++]!;
          gap += (byte & 0x7f) * 2 ** shift;
          if (byte < 0x80) break;
          shift += 7;
        }
        blk += gap;
        // The chunks of the block holding the word (format.ts): all, a list of offsets, or a bitmask.
        let count = this.varints[p++]!;
        if (count >= 0x80) count = (count & 0x7f) + 128 * this.varints[p++]!;
        const first = blk * size;
        if (count === size) {
          setRange(set, first, Math.min(this.nDocs, first + size));
        } else if (count <= maskBytes) {
          for (let c = 0; c < count; c++) {
            const doc = first + this.varints[p++]!;
            set[doc >>> 5]! |= 1 << (doc & 31);
          }
        } else if ((first & 7) === 0) {
          // Blocks start on a byte of the set: each mask byte lands inside one 32-bit word.
          for (let c = 0; c < maskBytes; c++) {
            const at = first + 8 * c;
            set[at >>> 5]! |= this.varints[p++]! << (at & 31);
          }
        } else {
          for (let c = 0; c < maskBytes; c++) {
            let bits = this.varints[p++]!;
            while (bits !== 0) {
              const low = bits & -bits;
              const doc = first + 8 * c + (31 - Math.clz32(low));
              set[doc >>> 5]! |= 1 << (doc & 31);
              bits ^= low;
            }
          }
        }
      }
    }
    return set;
  }
}

/** Buckets of the vocabulary's trigram lists (2^18): a few words share each, the lookup checks every word. */
const TRIGRAM_BITS = 18;
const TRIGRAM_BUCKETS = 1 << TRIGRAM_BITS;

/** The bucket of a byte trigram (a multiplicative hash of its 24 bits). */
function trigramBucket(a: number, b: number, c: number): number {
  return Math.imul((a << 16) | (b << 8) | c, 0x9e3779b1) >>> (32 - TRIGRAM_BITS);
}

/** Read one byte per 4 KiB page of an array's bytes (and its last byte); their sum. */
export function touchPages(array: ArrayBufferView): number {
  const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  let sum = 0;
  for (let i = 0; i < bytes.length; i += 4096) sum += bytes[i]!;
  return bytes.length > 0 ? sum + bytes[bytes.length - 1]! : sum;
}

/** Set bits [from, to) of a bitmap. */
function setRange(set: Uint32Array, from: number, to: number): void {
  let i = from;
  while (i < to && (i & 31) !== 0) {
    set[i >>> 5]! |= 1 << (i & 31);
    i++;
  }
  while (i + 32 <= to) {
    set[i >>> 5] = 0xffffffff;
    i += 32;
  }
  while (i < to) {
    set[i >>> 5]! |= 1 << (i & 31);
    i++;
  }
}

/**
 * The grep index in an index directory: undefined if it has none; InputError if it is unreadable;
 * DamagedIndexError if `sums` (its block checksums) do not match it.
 */
export function loadGrepIndex(dir: string, sums?: FileSums): GrepIndex | undefined {
  const path = join(dir, GREP_FILE);
  if (!existsSync(path)) return undefined;
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch (err) {
    throw new InputError(`cannot read grep index ${path}: ${(err as Error).message}`);
  }
  sums?.checkWhole(file);
  return new GrepIndex(file, path);
}
