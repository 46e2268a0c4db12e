// The index builder's two word loops, in AssemblyScript compiled to WebAssembly
// (scripts/build-wasm.mjs), over the UTF-8 bytes of a chunk: about half of a build's CPU time went
// to splitting the same text into words twice in TypeScript, at 10-19 ns per character.
//
//  - countTerms: BM25's words (../tokenize.ts: runs of \p{L}\p{M}\p{N}, an apostrophe between two
//    word characters joining them), each looked up by its exact bytes in a table of surface words
//    whose values (term ids, or -1 for a dropped word) the host's analyzer gives on first sight;
//    out come the document's distinct terms and their frequencies.
//  - grepWords: the grep prefilter's words (../grep/fold.ts: runs of ASCII letters, digits, '_'
//    and every non-ASCII character, folded), each numbered in order of first sight; out come the
//    numbers of the words the document holds.
//
// The host (../word-kernel.ts) writes the text at inputPointer() and reads results at the
// pointers exported below; the memory is the host's, grown here through the stub runtime's heap.
// The TypeScript builders (../build.ts, ../grep/builder.ts) hold the same logic over UTF-16, and
// the tests check that both build byte-identical indexes.

/** The term id of a surface word not seen before (-1 to drop it): the host's analyzer. */
@external("env", "newSurfaceWord")
declare function newSurfaceWord(ptr: usize, len: u32): i32;
/** Whether an astral code point (U+10000 and up) is a BM25 word character (\p{L}\p{M}\p{N}). */
@external("env", "astralWordChar")
declare function astralWordChar(cp: u32): i32;


/** A growable array of `width`-byte cells, zero-filled as it grows. */
class Cells {
  ptr: usize = 0;
  cap: u32 = 0;
  constructor(public width: u32) {}
  /** Make room for cell indexes below `n`; returns the base pointer. */
  ensure(n: u32): usize {
    if (n <= this.cap) return this.ptr;
    let cap = max<u32>(this.cap << 1, 1024);
    while (cap < n) cap <<= 1;
    const bytes = <usize>cap * this.width;
    const old = <usize>this.cap * this.width;
    const ptr = this.ptr === 0 ? heap.alloc(bytes) : heap.realloc(this.ptr, bytes);
    memory.fill(ptr + old, 0, bytes - old);
    this.ptr = ptr;
    this.cap = cap;
    return ptr;
  }
}

/** Whether the len bytes at a and b are equal. */
// @ts-ignore: decorator
@inline function same(a: usize, b: usize, len: u32): bool {
  let i: usize = 0;
  const n = <usize>len;
  for (; i + 8 <= n; i += 8) if (load<u64>(a + i) !== load<u64>(b + i)) return false;
  for (; i < n; i++) if (load<u8>(a + i) !== load<u8>(b + i)) return false;
  return true;
}

/** The low n bytes of x (n from 0 to 8). */
// @ts-ignore: decorator
@inline function lowBytes(x: u64, n: u32): u64 {
  return n >= 8 ? x : x & ((<u64>1 << (<u64>n << 3)) - 1);
}

/**
 * A key's hash from its bytes, read 8 at a time (a key's memory has 16 bytes of slack after it, so
 * reads past its end are harmless, and masked off). k0 and k1 are its first 16 bytes, zero-padded.
 */
// @ts-ignore: decorator
@inline function keyHash(p: usize, len: u32, k0: u64, k1: u64): u32 {
  let h = k0 * 0x9e3779b97f4a7c15 + k1 * 0xc2b2ae3d27d4eb4f + <u64>len;
  for (let o: u32 = 16; o < len; o += 8) h = (h ^ lowBytes(load<u64>(p + o), len - o)) * 0x9e3779b97f4a7c15;
  return <u32>((h ^ (h >>> 29)) * 0xbf58476d1ce4e5b9 >>> 32);
}

/**
 * Byte strings -> i32, open addressing. A slot is 32 bytes: the key's first 16 bytes (zero-padded),
 * its length + 1 (0 for an empty slot), its value and its offset in the arena, where every key is
 * kept back to back (with 16 bytes of slack). Keys of up to 16 bytes, nearly all words, compare in
 * the slot alone: one cache line per probe.
 */
class Table {
  slots: Cells = new Cells(32);
  mask: u32 = 0;
  arena: Cells = new Cells(1);
  arenaLen: u32 = 0;
  count: u32 = 0;
  /** Key starts and lengths by insertion order (for the host to read the keys back). */
  keys: Cells = new Cells(8);
  /** Set by find: the key's first 16 bytes and hash, for insert. */
  k0: u64 = 0;
  k1: u64 = 0;
  h: u32 = 0;

  constructor() {
    this.slots.ensure(1 << 14);
    this.mask = (1 << 14) - 1;
  }

  /** The slot holding the key at [p, p + len), or the empty slot where it would go. */
  find(p: usize, len: u32): usize {
    const k0 = lowBytes(load<u64>(p), len);
    const k1 = len <= 8 ? 0 : lowBytes(load<u64>(p, 8), len - 8);
    const h = keyHash(p, len, k0, k1);
    this.k0 = k0;
    this.k1 = k1;
    this.h = h;
    const base = this.slots.ptr;
    let s = h & this.mask;
    let slot = base + (<usize>s << 5);
    for (;;) {
      const l = load<u32>(slot, 16);
      if (l === 0) break;
      if (l === len + 1 && load<u64>(slot) === k0 && load<u64>(slot, 8) === k1 && (len <= 16 || same(this.arena.ptr + load<u32>(slot, 24) + 16, p + 16, len - 16))) break;
      s = (s + 1) & this.mask;
      slot = base + (<usize>s << 5);
    }
    return slot;
  }

  /** Store the key at [p, p + len) with value v in the empty slot `slot`, just returned by find. */
  insert(slot: usize, p: usize, len: u32, v: i32): void {
    const at = this.arenaLen;
    const arena = this.arena.ensure(at + len + 16);
    memory.copy(arena + at, p, len);
    this.arenaLen = at + len;
    store<u64>(slot, this.k0);
    store<u64>(slot, this.k1, 8);
    store<u32>(slot, len + 1, 16);
    store<i32>(slot, v, 20);
    store<u32>(slot, at, 24);
    store<u32>(slot, this.h, 28);
    const keys = this.keys.ensure(this.count + 1);
    store<u32>(keys + (<usize>this.count << 3), at);
    store<u32>(keys + (<usize>this.count << 3), len, 4);
    this.count++;
    if (this.count * 2 > this.mask + 1) this.grow();
  }

  private grow(): void {
    const oldPtr = this.slots.ptr;
    const oldSlots = this.mask + 1;
    const slots = oldSlots << 1;
    // A fresh table (the old one is left behind in the stub heap: at most as large as the new one).
    const fresh = new Cells(32);
    fresh.ensure(slots);
    const mask = slots - 1;
    for (let i: u32 = 0; i < oldSlots; i++) {
      const from = oldPtr + (<usize>i << 5);
      if (load<u32>(from, 16) === 0) continue;
      let s = load<u32>(from, 28) & mask;
      while (load<u32>(fresh.ptr + (<usize>s << 5), 16) !== 0) s = (s + 1) & mask;
      memory.copy(fresh.ptr + (<usize>s << 5), from, 32);
    }
    this.slots = fresh;
    this.mask = mask;
  }
}

// ---- input ---------------------------------------------------------------------------------

const input = new Cells(1);

/** Where the host writes the next text (at least `bytes` long). */
export function inputPointer(bytes: u32): usize {
  // 16 bytes of slack: the loops read whole 16-byte vectors, and keys 8 bytes at a time.
  return input.ensure(bytes + 16);
}

/** Per byte lane of v: all ones where it is an ASCII letter or digit. */
// @ts-ignore: decorator
@inline function asciiAlnum(v: v128): v128 {
  const digit = i8x16.lt_u(i8x16.sub(v, i8x16.splat(0x30)), i8x16.splat(10));
  const letter = i8x16.lt_u(i8x16.sub(v128.or(v, i8x16.splat(0x20)), i8x16.splat(0x61)), i8x16.splat(26));
  return v128.or(digit, letter);
}

/** Bits of the lanes from `n` on (n < 16): the bytes past the text's end. */
// @ts-ignore: decorator
@inline function pastEnd(n: usize): i32 {
  return n >= 16 ? 0 : 0xffff ^ ((1 << <i32>n) - 1);
}

// ---- BM25 words ----------------------------------------------------------------------------

const surface = new Table();
/** Per term: its frequency in the current document (zero between documents). */
const tf = new Cells(4);
/** The current document's distinct terms and their frequencies (capped at 0xffff). */
const outTerms = new Cells(4);
const outTfs = new Cells(2);
/** Per BMP code unit, a bit: whether it is a word character; the host fills it (classBits). */
const classes = new Cells(1);
let docLength: u32 = 0;

/** The 8 KiB bitmap of BMP word characters, for the host to fill before the first countTerms. */
export function classBits(): usize {
  return classes.ensure(8192);
}

/**
 * Byte width (1-4) of the word character starting at p, or 0 if the character there is not one
 * (p < end). The text is well-formed UTF-8 (the host's encoder replaces lone surrogates).
 */
// @ts-ignore: decorator
@inline function wordCharWidth(p: usize, end: usize): u32 {
  const b = <u32>load<u8>(p);
  if (b < 0x80) return b - 0x30 < 10 || (b | 0x20) - 0x61 < 26 ? 1 : 0;
  let cp: u32;
  let w: u32;
  if (b < 0xe0) {
    cp = ((b & 0x1f) << 6) | (<u32>load<u8>(p, 1) & 0x3f);
    w = 2;
  } else if (b < 0xf0) {
    cp = ((b & 0x0f) << 12) | ((<u32>load<u8>(p, 1) & 0x3f) << 6) | (<u32>load<u8>(p, 2) & 0x3f);
    w = 3;
  } else {
    cp = ((b & 0x07) << 18) | ((<u32>load<u8>(p, 1) & 0x3f) << 12) | ((<u32>load<u8>(p, 2) & 0x3f) << 6) | (<u32>load<u8>(p, 3) & 0x3f);
    return astralWordChar(cp) ? 4 : 0;
  }
  return (<u32>load<u8>(classes.ptr + (cp >>> 3)) >>> (cp & 7)) & 1 ? w : 0;
}

/** Byte width of the apostrophe at p (' U+2019 U+02BC), or 0. */
// @ts-ignore: decorator
@inline function apostropheWidth(p: usize, end: usize): u32 {
  const b = load<u8>(p);
  if (b === 0x27) return 1;
  if (b === 0xe2 && p + 2 < end && load<u8>(p, 1) === 0x80 && load<u8>(p, 2) === 0x99) return 3;
  if (b === 0xca && p + 1 < end && load<u8>(p, 1) === 0xbc) return 2;
  return 0;
}

/**
 * Split the len bytes at p into BM25 words, look each up (asking the host for new ones), and
 * write the distinct terms to termsPointer() and their frequencies to tfsPointer(), in order of
 * first appearance; returns how many. documentLength() is then the number of words kept.
 */
export function countTerms(p: usize, len: u32): u32 {
  const end = p + len;
  // At most one word per two bytes, plus one.
  outTerms.ensure((len >>> 1) + 1);
  outTfs.ensure((len >>> 1) + 1);
  tf.ensure(1);
  let n: u32 = 0;
  let kept: u32 = 0;
  let i = p;
  while (i < end) {
    const start = i;
    const b = <u32>load<u8>(i);
    if (b < 0x80) {
      if (!(b - 0x30 < 10 || (b | 0x20) - 0x61 < 26)) {
        i++;
        continue;
      }
      // The common case, 16 bytes at once: an ASCII word ended by an ASCII byte other than an
      // apostrophe (which might join it to the next word) within the vector.
      const stop = ~i8x16.bitmask(asciiAlnum(v128.load(i))) & 0xffff | pastEnd(end - i);
      const w = <usize>ctz(stop);
      if (stop !== 0 && (i + w === end || (<u32>load<u8>(i + w) < 0x80 && load<u8>(i + w) !== 0x27))) i += w;
      else i = wordEnd(i, end);
    } else {
      if (wordCharWidth(i, end) === 0) {
        i++;
        while (i < end && (load<u8>(i) & 0xc0) === 0x80) i++; // the rest of a multi-byte character
        continue;
      }
      i = wordEnd(i, end);
    }
    const wordLen = <u32>(i - start);
    const slot = surface.find(start, wordLen);
    let t: i32;
    if (load<u32>(slot, 16) !== 0) {
      t = load<i32>(slot, 20);
    } else {
      t = newSurfaceWord(start, wordLen);
      surface.insert(slot, start, wordLen, t);
      tf.ensure(<u32>max<i32>(t, 0) + 1);
    }
    if (t < 0) continue;
    kept++;
    const at = tf.ptr + (<usize>t << 2);
    const count = load<u32>(at);
    if (count === 0) {
      store<u32>(outTerms.ptr + (<usize>n << 2), t);
      n++;
    }
    store<u32>(at, count + 1);
  }
  const tfs = tf.ptr;
  for (let j: u32 = 0; j < n; j++) {
    const at = tfs + (<usize>load<u32>(outTerms.ptr + (<usize>j << 2)) << 2);
    store<u16>(outTfs.ptr + (<usize>j << 1), <u16>min<u32>(load<u32>(at), 0xffff));
    store<u32>(at, 0);
  }
  docLength = kept;
  return n;
}

/** The end of the BM25 word starting at i (a word character), a character at a time. */
function wordEnd(i: usize, end: usize): usize {
  let w = wordCharWidth(i, end);
  for (;;) {
    i += w;
    if (i >= end) break;
    w = wordCharWidth(i, end);
    if (w === 0) {
      const a = apostropheWidth(i, end);
      if (a !== 0 && i + a < end && (w = wordCharWidth(i + a, end)) !== 0) {
        i += a;
        continue;
      }
      break;
    }
  }
  return i;
}

export function termsPointer(): usize {
  return outTerms.ptr;
}
export function tfsPointer(): usize {
  return outTfs.ptr;
}
export function documentLength(): u32 {
  return docLength;
}

// ---- grep words ----------------------------------------------------------------------------

const grepVocab = new Table();
/** Per grep word: the last document it was seen in, plus one (0 = none yet). */
const lastDoc = new Cells(4);
/** The current document's grep words, each once, in order of first appearance. */
const outWords = new Cells(4);
/** The current word, folded. */
const scratch = new Cells(1);

/**
 * Split the len bytes at p (document `doc`, documents in increasing order) into grep words, folded
 * as ../grep/fold.ts folds UTF-16 (ASCII A-Z to a-z, U+017F to 's', U+212A to 'k'), number each
 * (0, 1, 2, ... in order of first sight in the corpus), and write the numbers of the words the
 * document holds, once each, to wordsPointer(); returns how many.
 */
export function grepWords(p: usize, len: u32, doc: u32): u32 {
  const end = p + len;
  outWords.ensure((len >>> 1) + 1);
  const buf = scratch.ensure(len + 16);
  let n: u32 = 0;
  let i = p;
  while (i < end) {
    let b = <u32>load<u8>(i);
    if (!isGrepByte(b)) {
      i++;
      continue;
    }
    let k: u32 = 0;
    // The common case, 16 bytes at once: an ASCII word that ends within the vector, folded there.
    const v = v128.load(i);
    const high = i8x16.bitmask(v);
    const stop = ~(i8x16.bitmask(v128.or(asciiAlnum(v), i8x16.eq(v, i8x16.splat(0x5f)))) | high) & 0xffff | pastEnd(end - i);
    const w = ctz(stop);
    if (stop !== 0 && (high & ((1 << w) - 1)) === 0) {
      const upper = i8x16.lt_u(i8x16.sub(v, i8x16.splat(0x41)), i8x16.splat(26));
      v128.store(buf, v128.or(v, v128.and(upper, i8x16.splat(0x20))));
      k = <u32>w;
      i += <usize>w;
    } else {
      while (i < end) {
        b = <u32>load<u8>(i);
        if (b - 0x41 < 26) b += 32;
        else if (b >= 0x80) {
          if (b === 0xc5 && i + 1 < end && load<u8>(i, 1) === 0xbf) {
            b = 0x73; // U+017F long s
            i++;
          } else if (b === 0xe2 && i + 2 < end && load<u8>(i, 1) === 0x84 && load<u8>(i, 2) === 0xaa) {
            b = 0x6b; // U+212A Kelvin sign
            i += 2;
          }
        } else if (!isGrepByte(b)) break;
        store<u8>(buf + k, <u8>b);
        k++;
        i++;
      }
    }
    const slot = grepVocab.find(buf, k);
    let id: u32;
    if (load<u32>(slot, 16) !== 0) {
      id = load<u32>(slot, 20);
    } else {
      id = grepVocab.count;
      grepVocab.insert(slot, buf, k, id);
      lastDoc.ensure(id + 1);
    }
    const seen = lastDoc.ptr + (<usize>id << 2);
    if (load<u32>(seen) !== doc + 1) {
      store<u32>(seen, doc + 1);
      store<u32>(outWords.ptr + (<usize>n << 2), id);
      n++;
    }
  }
  return n;
}

/** Whether an unfolded byte belongs to a grep word: ASCII letters, digits, '_', any non-ASCII byte. */
// @ts-ignore: decorator
@inline function isGrepByte(b: u32): bool {
  return (b | 0x20) - 0x61 < 26 || b - 0x30 < 10 || b === 0x5f || b >= 0x80;
}

export function wordsPointer(): usize {
  return outWords.ptr;
}
/** Distinct grep words so far. */
export function grepWordCount(): u32 {
  return grepVocab.count;
}
/** The grep vocabulary's arena (its words' folded UTF-8, back to back) and per word (start, length) u32 pairs. */
export function grepArena(): usize {
  return grepVocab.arena.ptr;
}
export function grepKeys(): usize {
  return grepVocab.keys.ptr;
}
