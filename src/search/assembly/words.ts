// The index builder's two word loops, in AssemblyScript compiled to WebAssembly
// (scripts/build-wasm.mjs), over the UTF-8 bytes of a chunk: about half of a build's CPU time went
// to splitting the same text into words twice in TypeScript, at 10-19 ns per character.
//
//  - countTerms: BM25's words (../tokenize.ts: runs of \p{L}\p{M}\p{N}, an apostrophe between two
//    word characters joining them), each looked up by its exact bytes in a table of surface words
//    whose values (term ids, or -1 for a dropped word) the host's analyzer gives on first sight;
//    out come the document's distinct terms and their frequencies.
//  - grepAdd: the grep prefilter's words (../grep/fold.ts: runs of ASCII letters, digits, '_'
//    and every non-ASCII character, folded), each numbered in order of first sight and marked in
//    the prefilter's forward list (block -> words -> chunks), which grepCount and grepFill then
//    invert into grep.bin's postings (../grep/builder.ts holds the same steps in TypeScript and
//    writes the file).
//
// The host (../word-loops.ts) writes the text at inputPointer() and reads results at the
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

/**
 * A store that grows in pieces and never copies one (at a million chunks the pairs alone are over
 * half a gigabyte): per piece (pointer, capacity, used), capacity and use in `unit`-byte units.
 * The last piece is the one written; `reserve` starts a new one when it has no room.
 */
class Pieces {
  list: Cells = new Cells(12);
  count: u32 = 0;
  /** The last piece: where it starts, its capacity and how much of it is used. */
  last: usize = 0;
  cap: u32 = 0;
  used: u32 = 0;
  constructor(public unit: u32) {}
  /** Room for `n` more units in the last piece, else a new piece of max(size, n) units. */
  reserve(n: u32, size: u32): void {
    if (this.used + n <= this.cap) return;
    this.cap = max<u32>(size, n);
    this.last = heap.alloc(<usize>this.cap * this.unit);
    this.used = 0;
    const at = this.list.ensure(this.count + 1) + <usize>this.count * 12;
    store<u32>(at, <u32>this.last);
    store<u32>(at, this.cap, 4);
    store<u32>(at, 0, 8);
    this.count++;
  }
  /** The last piece now uses `used` units. */
  setUsed(used: u32): void {
    this.used = used;
    store<u32>(this.list.ptr + <usize>(this.count - 1) * 12, used, 8);
  }
  /** Where piece k starts. */
  start(k: u32): usize {
    return <usize>load<u32>(this.list.ptr + <usize>k * 12);
  }
  /** Piece k's capacity. */
  capacity(k: u32): u32 {
    return load<u32>(this.list.ptr + <usize>k * 12, 4);
  }
  /** How much of piece k is used. */
  usedIn(k: u32): u32 {
    return load<u32>(this.list.ptr + <usize>k * 12, 8);
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
/** Per term: the documents holding it. */
const df = new Cells(4);

/**
 * Every document's (term, tf) pairs, its distinct terms in order of first appearance: in pieces
 * of whole documents, each a u32 array of terms then a u16 array of their frequencies (capped at
 * 0xffff), `capacity` pairs each.
 */
const pairs = new Pieces(6);
let pairTotal: f64 = 0;
const PAIR_PIECE: u32 = 1 << 22;
/** Per document, its number of pairs. */
const docPairs = new Cells(4);
let pairDocs: u32 = 0;
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
 * Split the len bytes at p (the next document) into BM25 words, look each up (asking the host for
 * new ones), and append the document's distinct terms and their frequencies to the pairs, in order
 * of first appearance; returns how many. documentLength() is then the number of words kept.
 */
export function countTerms(p: usize, len: u32): u32 {
  const end = p + len;
  // At most one word per two bytes, plus one.
  pairs.reserve((len >>> 1) + 1, PAIR_PIECE);
  const used = pairs.used;
  const out = pairs.last + (<usize>used << 2);
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
      df.ensure(<u32>max<i32>(t, 0) + 1);
    }
    if (t < 0) continue;
    kept++;
    const at = tf.ptr + (<usize>t << 2);
    const count = load<u32>(at);
    if (count === 0) {
      store<u32>(out + (<usize>n << 2), t);
      n++;
    }
    store<u32>(at, count + 1);
  }
  const tfs = tf.ptr;
  const outTfs = pairs.last + (<usize>pairs.cap << 2) + (<usize>used << 1);
  for (let j: u32 = 0; j < n; j++) {
    const t = load<u32>(out + (<usize>j << 2));
    const at = tfs + (<usize>t << 2);
    store<u16>(outTfs + (<usize>j << 1), <u16>min<u32>(load<u32>(at), 0xffff));
    store<u32>(at, 0);
    const d = df.ptr + (<usize>t << 2);
    store<u32>(d, load<u32>(d) + 1);
  }
  pairs.setUsed(used + n);
  pairTotal += <f64>n;
  store<u32>(docPairs.ensure(pairDocs + 1) + (<usize>pairDocs << 2), n);
  pairDocs++;
  docLength = kept;
  return n;
}

/** Pairs so far. */
export function pairCount(): f64 {
  return pairTotal;
}

/** Per term id, the documents holding it (u32s). */
export function documentFrequencies(): usize {
  return df.ptr;
}

/** Replace every pair's term t by the u32 at map + 4t. */
export function remapTerms(map: usize): void {
  for (let k: u32 = 0; k < pairs.count; k++) {
    const terms = pairs.start(k);
    const used = pairs.usedIn(k);
    for (let i: u32 = 0; i < used; i++) {
      const at = terms + (<usize>i << 2);
      store<u32>(at, load<u32>(map + (<usize>load<u32>(at) << 2)));
    }
  }
}

/**
 * One pass of the postings layout (../build.ts): every pair whose term is in [lo, lo + span), in
 * document order, goes to docs (u32) and tfs (u16) at cursor[term - lo]++, the cursors starting at
 * postOff[term] - postOff[lo]; and maxTf[term] (f64) keeps the largest tf / (tf + norms[doc]).
 */
export function scatter(lo: u32, span: u32, postOff: usize, docs: usize, tfs: usize, norms: usize, maxTf: usize): void {
  const cursor = cursors.ensure(span);
  const base = load<u32>(postOff + (<usize>lo << 2));
  for (let r: u32 = 0; r < span; r++) store<u32>(cursor + (<usize>r << 2), load<u32>(postOff + (<usize>(lo + r) << 2)) - base);
  const counts = docPairs.ptr;
  let doc: u32 = 0;
  for (let k: u32 = 0; k < pairs.count; k++) {
    const terms = pairs.start(k);
    const pieceTfs = terms + (<usize>pairs.capacity(k) << 2);
    const used = pairs.usedIn(k);
    // A document's pairs never straddle two pieces; one without pairs may sit at either end.
    for (let i: u32 = 0; i < used; doc++) {
      const end = i + load<u32>(counts + (<usize>doc << 2));
      for (; i < end; i++) {
        const r = load<u32>(terms + (<usize>i << 2)) - lo;
        if (r >= span) continue;
        const c = cursor + (<usize>r << 2);
        const at = load<u32>(c);
        store<u32>(c, at + 1);
        const tf = <u32>load<u16>(pieceTfs + (<usize>i << 1));
        store<u32>(docs + (<usize>at << 2), doc);
        store<u16>(tfs + (<usize>at << 1), <u16>tf);
        const w = <f64>tf / (<f64>tf + load<f64>(norms + (<usize>doc << 3)));
        const m = maxTf + (<usize>(lo + r) << 3);
        if (w > load<f64>(m)) store<f64>(m, w);
      }
    }
  }
}
const cursors = new Cells(4);

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

export function documentLength(): u32 {
  return docLength;
}

// ---- grep words and the prefilter's forward list ------------------------------------------

// The grep prefilter (../grep/builder.ts holds the same logic in TypeScript, and the file format):
// per block of `blockSize` consecutive documents, the words it holds, each with which of its
// documents hold it. Words are numbered as first seen; documents come in order.

const grepVocab = new Table();
let blockSize: u32 = 64;
/** u32s of chunk bits per word (blockSize / 32, rounded up), and u32s per word record (a power of two above it). */
let maskWords: u32 = 2;
let stride: u32 = 4;
/**
 * Per word, `stride` u32s side by side, so that marking a word touches one cache line: the last
 * document it was seen in plus one (0 before any), its bits for the chunks of the current block,
 * and its entry statistics (grepCount).
 */
const wordRecs = new Cells(4);
let docs: u32 = 0;
let block: u32 = 0;
/** The current block's words in order of first sight there, and its (word, chunk) pairs. */
const blockWords = new Cells(4);
let blockWordCount: u32 = 0;
let blockPairs: u32 = 0;
const sortTmp = new Cells(4);
/** Digits of the radix sort: 2^11 buckets. */
const RADIX_BITS: u32 = 11;
const radixCounts = new Cells(4);
/** The current word, folded. */
const scratch = new Cells(1);

/**
 * The forward list: per block, varint(words), then per word in id order a varint id gap (from -1),
 * varint(n) and its n chunk offsets (a byte each). In pieces of bytes (a block never straddles two).
 */
const forward = new Pieces(1);
const FWD_PIECE_MAX: u32 = 16 << 20;

/** Start a prefilter of blocks of `size` documents (1 to 256); call before grepAdd. */
export function grepBegin(size: u32): void {
  blockSize = size;
  maskWords = (size + 31) >>> 5;
  stride = 2;
  while (stride < 1 + maskWords + 4) stride <<= 1;
  radixCounts.ensure(1 << RADIX_BITS);
}

/**
 * Split the len bytes at p (document `doc`, the next one: 0, 1, 2, ...) into grep words, folded as
 * ../grep/fold.ts folds UTF-16 (ASCII A-Z to a-z, U+017F to 's', U+212A to 'k'), number each new
 * one, and mark the document in each word's bits.
 */
export function grepAdd(p: usize, len: u32, doc: u32): void {
  const blk = doc / blockSize;
  while (block < blk) flushBlock();
  docs = doc + 1;
  const offset = doc - block * blockSize;
  const blockStart = doc - offset;
  const bit: u32 = 1 << (offset & 31);
  const bitAt: usize = <usize>(1 + (offset >>> 5)) << 2;
  const end = p + len;
  const buf = scratch.ensure(len + 16);
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
      wordRecs.ensure((id + 1) * stride);
    }
    const rec = wordRecs.ptr + (<usize>(id * stride) << 2);
    const last = load<u32>(rec);
    if (last === doc + 1) continue;
    store<u32>(rec, doc + 1);
    if (last <= blockStart) {
      // First time in this block: list the word, clear its bits.
      const words = blockWords.ensure(blockWordCount + 1);
      store<u32>(words + (<usize>blockWordCount << 2), id);
      blockWordCount++;
      memory.fill(rec + 4, 0, <usize>maskWords << 2);
    }
    store<u32>(rec + bitAt, load<u32>(rec + bitAt) | bit);
    blockPairs++;
  }
}

/** Whether an unfolded byte belongs to a grep word: ASCII letters, digits, '_', any non-ASCII byte. */
// @ts-ignore: decorator
@inline function isGrepByte(b: u32): bool {
  return (b | 0x20) - 0x61 < 26 || b - 0x30 < 10 || b === 0x5f || b >= 0x80;
}

// @ts-ignore: decorator
@inline function writeVarint(p: usize, v: u32): usize {
  while (v >= 0x80) {
    store<u8>(p, <u8>(v | 0x80));
    p++;
    v >>>= 7;
  }
  store<u8>(p, <u8>v);
  return p + 1;
}

/** The varint at p, and where the next value starts (in varintEnd). */
let varintEnd: usize = 0;
// @ts-ignore: decorator
@inline function readVarint(p: usize): u32 {
  let v: u32 = 0;
  let shift: u32 = 0;
  for (;;) {
    const byte = <u32>load<u8>(p++);
    v |= (byte & 0x7f) << shift;
    if (byte < 0x80) break;
    shift += 7;
  }
  varintEnd = p;
  return v;
}

/** The block's words in id order (least-significant-digit radix sort); returns where they are. */
function sortBlockWords(n: u32): usize {
  let from = blockWords.ptr;
  let to = sortTmp.ensure(blockWords.cap);
  const counts = radixCounts.ptr;
  const mask: u32 = (1 << RADIX_BITS) - 1;
  const limit = <u64>grepVocab.count;
  for (let shift: u32 = 0; shift === 0 || limit > (<u64>1 << shift); shift += RADIX_BITS) {
    memory.fill(counts, 0, <usize>(mask + 1) << 2);
    for (let i: u32 = 0; i < n; i++) {
      const c = counts + (<usize>((load<u32>(from + (<usize>i << 2)) >>> shift) & mask) << 2);
      store<u32>(c, load<u32>(c) + 1);
    }
    let sum: u32 = 0;
    for (let d: u32 = 0; d <= mask; d++) {
      const c = counts + (<usize>d << 2);
      const count = load<u32>(c);
      store<u32>(c, sum);
      sum += count;
    }
    for (let i: u32 = 0; i < n; i++) {
      const v = load<u32>(from + (<usize>i << 2));
      const c = counts + (<usize>((v >>> shift) & mask) << 2);
      const at = load<u32>(c);
      store<u32>(c, at + 1);
      store<u32>(to + (<usize>at << 2), v);
    }
    const t = from;
    from = to;
    to = t;
  }
  return from;
}

/** Append the current block to the forward list and start the next. */
function flushBlock(): void {
  const n = blockWordCount;
  const words = sortBlockWords(n);
  // Per word at most 5 bytes of id gap and 2 of count, plus a byte per chunk.
  // Pieces double from 64 KiB up to FWD_PIECE_MAX.
  forward.reserve(5 + 7 * n + blockPairs, min<u32>(max<u32>(forward.cap << 1, 1 << 16), FWD_PIECE_MAX));
  let p = writeVarint(forward.last + forward.used, n);
  let prev: u32 = 0xffffffff; // the first gap is from -1
  for (let j: u32 = 0; j < n; j++) {
    const id = load<u32>(words + (<usize>j << 2));
    const bits = wordRecs.ptr + (<usize>(id * stride) << 2) + 4;
    let count: u32 = 0;
    for (let w: u32 = 0; w < maskWords; w++) count += popcnt(load<u32>(bits + (<usize>w << 2)));
    p = writeVarint(p, id - prev);
    p = writeVarint(p, count);
    // The word's entry statistics for grep.bin's layout (grepCount), kept as the entries are made.
    const stats = bits + (<usize>maskWords << 2);
    store<u32>(stats, load<u32>(stats) + 1);
    store<u32>(stats, load<u32>(stats, 4) + count, 4);
    // The gap from the last block (-1 before the first: last + 1 = 0).
    store<u32>(stats, load<u32>(stats, 8) + varintLength(block + 1 - load<u32>(stats, 12)) + chunkListBytes(count), 8);
    store<u32>(stats, block + 1, 12);
    for (let w: u32 = 0; w < maskWords; w++) {
      let m = load<u32>(bits + (<usize>w << 2));
      while (m !== 0) {
        store<u8>(p++, <u8>((w << 5) + ctz(m)));
        m &= m - 1;
      }
    }
    prev = id;
  }
  forward.setUsed(<u32>(p - forward.last));
  blockWordCount = 0;
  blockPairs = 0;
  block++;
}

/** Flush the blocks up to the last document's; returns the number of blocks. */
export function grepFinish(): u32 {
  const blocks = (docs + blockSize - 1) / blockSize;
  while (block < blocks) flushBlock();
  return blocks;
}

/** Bytes of a (word, block) entry's chunk list after its block gap, as ../grep/builder.ts chunkListBytes. */
// @ts-ignore: decorator
@inline function chunkListBytes(n: u32): u32 {
  const maskBytes = (blockSize + 7) >>> 3;
  return varintLength(n) + (n === blockSize ? 0 : n <= maskBytes ? n : maskBytes);
}

// @ts-ignore: decorator
@inline function varintLength(v: u32): u32 {
  let n: u32 = 1;
  while (v >= 0x80) {
    v >>>= 7;
    n++;
  }
  return n;
}

/**
 * Pass 1, kept by flushBlock as the forward list grew: per word id, at stats + 16 * id, [blocks
 * holding it, chunks holding it, bytes of its entry list, last block + 1] (u32s).
 */
export function grepCount(stats: usize): void {
  const n = grepVocab.count;
  const at = 1 + maskWords;
  for (let id: u32 = 0; id < n; id++) memory.copy(stats + (<usize>id << 4), wordRecs.ptr + (<usize>(id * stride + at) << 2), 16);
}

/**
 * Pass 2: fill the postings of the words whose entry lists start in [lo, hi) of grep.bin's varints,
 * into out (zeroed here first) at their start - lo; and when `withBitmaps`, the bitmap words'
 * blocks into bitmaps (bitmapWordsEach u32s a bitmap, zeroed by the host). Per word id at plan +
 * 16 * id: [bitmap number or -1, write position in the varints, last block + 1 (0), start], as
 * the host planned them from grepCount's stats.
 */
export function grepFill(plan: usize, bitmaps: usize, bitmapWordsEach: u32, out: usize, lo: u32, hi: u32, withBitmaps: u32): void {
  memory.fill(out, 0, <usize>(hi - lo));
  const varints = out - <usize>lo;
  const maskBytes = (blockSize + 7) >>> 3;
  let blk: u32 = 0;
  for (let k: u32 = 0; k < forward.count; k++) {
    const start = forward.start(k);
    const used = forward.usedIn(k);
    let p = start;
    const end = start + used;
    for (; p < end; blk++) {
      const words = readVarint(p);
      p = varintEnd;
      let id: u32 = 0xffffffff;
      for (let j: u32 = 0; j < words; j++) {
        id += readVarint(p);
        const n = readVarint(varintEnd);
        const at = varintEnd;
        p = at + n;
        const r = plan + (<usize>id << 4);
        const bitmap = load<i32>(r);
        if (bitmap >= 0) {
          if (withBitmaps === 0) continue;
          const word = bitmaps + ((<usize>bitmap * bitmapWordsEach + (blk >>> 5)) << 2);
          store<u32>(word, load<u32>(word) | (1 << (blk & 31)));
          continue;
        }
        const listStart = load<u32>(r, 12);
        if (listStart < lo || listStart >= hi) continue;
        let q = writeVarint(varints + load<u32>(r, 4), blk + 1 - load<u32>(r, 8));
        q = writeVarint(q, n);
        if (n === blockSize) {
          // every chunk of the block: nothing more to say
        } else if (n <= maskBytes) {
          memory.copy(q, at, n);
          q += n;
        } else {
          for (let o: u32 = 0; o < n; o++) {
            const c = <u32>load<u8>(at + o);
            const byte = q + (c >>> 3);
            store<u8>(byte, <u32>load<u8>(byte) | (<u32>1 << (c & 7)));
          }
          q += maskBytes;
        }
        store<u32>(r, <u32>(q - varints), 4);
        store<u32>(r, blk + 1, 8);
      }
    }
  }
}

/** Zeroed memory of `bytes` bytes, for the host's arrays (stats, plan, bitmaps, varints). */
export function allocate(bytes: u32): usize {
  const p = heap.alloc(bytes);
  memory.fill(p, 0, bytes);
  return p;
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
