// BM25 scoring over block-compressed postings (../block-postings.ts), in AssemblyScript compiled to
// WebAssembly (scripts/build-wasm.mjs). Every pointer is a byte offset into the one imported memory,
// laid out by ../scoring-memory.ts, which hands them over once (init). src/search/bm25.ts holds the
// exhaustive loop in plain TypeScript as well, and the tests check that all give the same bits.
//
// A term's weight in a document is idf * (tf / (tf + norm[doc])) in f64, and a document's score is
// the sum of its terms' weights in query order, starting from 0: the same operations whichever loop
// runs, so a document's score does not depend on which loop found it, and ties break alike.

const BLOCK: u32 = 128;
/** Query terms at most (the cursor arrays' length); scoring-memory.ts's MAX_QUERY_TERMS. */
const MAX_TERMS: u32 = 1024;
/** No document (past every real one: documents are numbered below 2^32 - 1). */
const END: u32 = 0xffffffff;
/** Relative slack on bound tests, so float rounding can only make them look at more documents. */
const SLACK: f64 = 1 - 1e-9;

// The index's arrays.
let data: usize = 0; // post.data: the blocks, 4-byte words
let blockAt: usize = 0; // u32 per block: its first word in data
let blockLast: usize = 0; // u32 per block: its last document
let blockMax: usize = 0; // f32 per block: a bound on tf / (tf + norm) over its postings
let norm: usize = 0; // f64 per document: k1 * (1 - b + b * dl / avgdl)
let one: usize = 0; // f64 per document: 1 / (1 + norm), the weight of tf 1 less the idf
let acc: usize = 0; // f64 per document of a scoring segment (the exhaustive loop's accumulators)
// The query's terms (MAX_TERMS slots each), written by the caller: first and end block, the size of
// the last block, the term's place in the query, its idf and its bound (idf * largest weight).
let tStart: usize = 0;
let tEnd: usize = 0;
let tLastN: usize = 0;
let tOrder: usize = 0;
let tIdf: usize = 0;
let tUb: usize = 0;
// Cursor state: the block the cursor is in, the block decoded in its buffer, the position there,
// its current document, and (pruning) the block-bound cursor, the running sums of bounds, the
// candidate's weight per query term.
let cBlock: usize = 0;
let cDecoded: usize = 0;
let cPos: usize = 0;
let cDoc: usize = 0;
let cShallow: usize = 0;
let cCum: usize = 0;
let cWeight: usize = 0;
// Per term slot, BLOCK decoded documents and BLOCK decoded tfs less one (u32 each).
let bufDocs: usize = 0;
let bufTfs: usize = 0;
// The pruned query's top k (a min-heap: root the worst kept hit).
let heapDocs: usize = 0;
let heapScores: usize = 0;
/** Postings whose weight the loops computed, since the last postingsScored(true) (bench:scale reports it). */
let scored: u64 = 0;

/**
 * The documents (offsets from the segment's base, u32) of the terms accumulate was asked to record
 * in the current segment: the only ones that can enter the top k when the other terms' bounds sum
 * below the k-th score. A quarter of the segment at most: past that, scanning every accumulator
 * costs less, and `touchedFull` says so.
 */
let touched: usize = 0;
let touchedCount: u32 = 0;
let touchedFull = false;
const TOUCHED_MAX: u32 = 4096;

/** Postings scored so far; reset: start again from 0. */
export function postingsScored(reset: bool): f64 {
  const n = <f64>scored;
  if (reset) scored = 0;
  return n;
}

/** Where the arrays are (byte offsets); `query` is where the caller writes the query's terms, `heap` the top k. */
export function init(dataAt: usize, blockAtAt: usize, blockLastAt: usize, blockMaxAt: usize, normAt: usize, oneAt: usize, accAt: usize, query: usize, buffers: usize, heapDocsAt: usize, heapScoresAt: usize, touchedAt: usize): void {
  touched = touchedAt;
  data = dataAt;
  blockAt = blockAtAt;
  blockLast = blockLastAt;
  blockMax = blockMaxAt;
  norm = normAt;
  one = oneAt;
  acc = accAt;
  const n = <usize>MAX_TERMS;
  tStart = query;
  tEnd = tStart + 4 * n;
  tLastN = tEnd + 4 * n;
  tOrder = tLastN + 4 * n;
  cBlock = tOrder + 4 * n;
  cDecoded = cBlock + 4 * n;
  cPos = cDecoded + 4 * n;
  cDoc = cPos + 4 * n;
  cShallow = cDoc + 4 * n;
  tIdf = cShallow + 4 * n; // 8-aligned: query is, and 9 arrays of 4 * MAX_TERMS bytes precede
  tUb = tIdf + 8 * n;
  cCum = tUb + 8 * n;
  cWeight = cCum + 8 * n;
  bufDocs = buffers;
  bufTfs = buffers + 4 * n * BLOCK;
  heapDocs = heapDocsAt;
  heapScores = heapScoresAt;
}

/** Entries of the touched list init expects (scoring-memory.ts lays it out). */
export function touchedMax(): u32 {
  return TOUCHED_MAX;
}

/** Bytes of the query area init expects (scoring-memory.ts lays it out). */
export function queryBytes(): u32 {
  return MAX_TERMS * (9 * 4 + 4 * 8);
}

// @ts-ignore: decorator
@inline function u32At(base: usize, i: u32): u32 {
  return load<u32>(base + (<usize>i << 2));
}
// @ts-ignore: decorator
@inline function setU32(base: usize, i: u32, v: u32): void {
  store<u32>(base + (<usize>i << 2), v);
}
// @ts-ignore: decorator
@inline function f64At(base: usize, i: u32): f64 {
  return load<f64>(base + (<usize>i << 3));
}
// @ts-ignore: decorator
@inline function setF64(base: usize, i: u32, v: f64): void {
  store<f64>(base + (<usize>i << 3), v);
}

/**
 * Values 4r..4r+3 of a block's values of `width` bits (0, 8, 16 or 32) at src, in order, as four
 * u32 lanes: one widening load. May read up to 12 bytes past the values (data is padded).
 */
// @ts-ignore: decorator
@inline function valueRow(src: usize, r: u32, width: u32): v128 {
  if (width == 8) return i32x4.extend_low_i16x8_u(v128.load8x8_u(src + (<usize>r << 2)));
  if (width == 16) return v128.load16x4_u(src + (<usize>r << 3));
  if (width == 32) return v128.load(src + (<usize>r << 4));
  return i32x4.splat(0);
}

/** Row r's four documents from its gaps at src, after the previous row's last document (in every lane of carry). */
// @ts-ignore: decorator
@inline function docRow(src: usize, r: u32, width: u32, carry: v128): v128 {
  const zero = i32x4.splat(0);
  // Gaps (a, b, c, d) to documents: plus one each, then (a, a+b, a+b+c, a+b+c+d) after carry.
  let v = i32x4.add(valueRow(src, r, width), i32x4.splat(1));
  v = i32x4.add(v, i32x4.shuffle(v, zero, 4, 0, 1, 2));
  v = i32x4.add(v, i32x4.shuffle(v, zero, 4, 4, 0, 1));
  return i32x4.add(v, carry);
}

/** Bytes that n values of `width` bits take (whole words). */
// @ts-ignore: decorator
@inline function valueBytes(n: u32, width: u32): usize {
  return <usize>((n * width + 31) >> 5) << 2;
}

/**
 * Decode block b (n postings, after document prev) into docs and tfs (tf - 1), u32 each, a row of
 * four at a time (so up to 3 values past n are written: the buffers hold BLOCK); returns the
 * block's tf width. With zeroTfs false, a block whose tfs are all 1 (width 0) leaves tfs as it
 * was: the caller reads no tf of it.
 */
function decode(b: u32, n: u32, prev: u32, docs: usize, tfs: usize, zeroTfs: bool): u32 {
  const src = data + (<usize>u32At(blockAt, b) << 2);
  const header = load<u32>(src);
  const docWidth = header & 0xff;
  const tfWidth = (header >> 8) & 0xff;
  const rows = (n + 3) >> 2;
  let carry = i32x4.splat(<i32>prev);
  for (let r: u32 = 0; r < rows; r++) {
    const v = docRow(src + 4, r, docWidth, carry);
    v128.store(docs + (<usize>r << 4), v);
    carry = i32x4.shuffle(v, v, 3, 3, 3, 3);
  }
  if (tfWidth != 0 || zeroTfs) {
    const tfSrc = src + 4 + valueBytes(n, docWidth);
    for (let r: u32 = 0; r < rows; r++) v128.store(tfs + (<usize>r << 4), valueRow(tfSrc, r, tfWidth));
  }
  return tfWidth;
}

/**
 * Decode a whole block for the tests (the codec's round trip in WebAssembly): block b of a term whose
 * previous block ended at prev (or 0xffffffff), n postings, into docs and tfs (tf itself).
 */
export function decodeInto(b: u32, n: u32, prev: u32, docs: usize, tfs: usize): void {
  decode(b, n, prev, docs, tfs, true);
  for (let i: u32 = 0; i < n; i++) setU32(tfs, i, u32At(tfs, i) + 1);
}

/** Put the cursors of the query's q terms at their first blocks (nothing decoded). */
export function reset(q: u32): void {
  for (let j: u32 = 0; j < q; j++) {
    setU32(cBlock, j, u32At(tStart, j));
    setU32(cShallow, j, u32At(tStart, j));
    setU32(cDecoded, j, END);
    setU32(cPos, j, 0);
  }
}

// @ts-ignore: decorator
@inline function sizeOf(j: u32, b: u32): u32 {
  return b + 1 == u32At(tEnd, j) ? u32At(tLastN, j) : BLOCK;
}

/** Make block b the one decoded in term j's buffer. */
function loadBlock(j: u32, b: u32): void {
  if (u32At(cDecoded, j) == b) return;
  const prev = b == u32At(tStart, j) ? END : u32At(blockLast, b - 1);
  const at = <usize>j * BLOCK * 4;
  decode(b, sizeOf(j, b), prev, bufDocs + at, bufTfs + at, true);
  setU32(cDecoded, j, b);
  setU32(cPos, j, 0);
}

/** Term j's weight in the document at its cursor. */
// @ts-ignore: decorator
@inline function weightAt(j: u32, doc: u32): f64 {
  scored++;
  const tfLess1 = u32At(bufTfs + <usize>j * BLOCK * 4, u32At(cPos, j));
  // tf 1 (most postings): 1 / (1 + norm) is in the table, the same f64 operations done once.
  if (tfLess1 == 0) return f64At(tIdf, j) * f64At(one, doc);
  const tf = <f64>(tfLess1 + 1);
  return f64At(tIdf, j) * (tf / (tf + f64At(norm, doc)));
}

/**
 * Room for n more entries in the touched list (at most cap in all): where to write them, or 0 once
 * the list is full (collectTouched then scans every accumulator instead).
 */
// @ts-ignore: decorator
@inline function reserveTouched(n: u32, cap: u32): usize {
  if (touchedFull) return 0;
  if (touchedCount + n > cap) {
    touchedFull = true;
    return 0;
  }
  const at = touched + (<usize>touchedCount << 2);
  touchedCount += n;
  return at;
}

/** acc[d] += idf * one[d]: the weight of tf 1. */
// @ts-ignore: decorator
@inline function addOne(accBase: usize, d: u32, idf: f64): void {
  const slot = accBase + (<usize>d << 3);
  store<f64>(slot, load<f64>(slot) + idf * f64At(one, d));
}

/** acc[d] += idf * (tf / (tf + norm[d])). */
// @ts-ignore: decorator
@inline function addTf(accBase: usize, d: u32, tfLess1: u32, idf: f64): void {
  const tf = <f64>(tfLess1 + 1);
  const slot = accBase + (<usize>d << 3);
  store<f64>(slot, load<f64>(slot) + idf * (tf / (tf + f64At(norm, d))));
}

/**
 * Add full block b's weights (after document prev) into the accumulators straight from its packed
 * rows, four postings a row: no buffer between unpacking and adding. The same f64 operations, in
 * the same order, as the buffered loop in accumulate. Unless `record` is 0, the documents' offsets
 * from base are written there too (128 u32s).
 */
function addBlock(b: u32, prev: u32, idf: f64, accBase: usize, record: usize, base: u32): void {
  const src = data + (<usize>u32At(blockAt, b) << 2);
  const header = load<u32>(src);
  const docWidth = header & 0xff;
  const tfWidth = (header >> 8) & 0xff;
  const docSrc = src + 4;
  let carry = i32x4.splat(<i32>prev);
  if (tfWidth == 0) {
    for (let r: u32 = 0; r < 32; r++) {
      const v = docRow(docSrc, r, docWidth, carry);
      carry = i32x4.shuffle(v, v, 3, 3, 3, 3);
      if (record) v128.store(record + (<usize>r << 4), i32x4.sub(v, i32x4.splat(base)));
      addOne(accBase, i32x4.extract_lane(v, 0), idf);
      addOne(accBase, i32x4.extract_lane(v, 1), idf);
      addOne(accBase, i32x4.extract_lane(v, 2), idf);
      addOne(accBase, i32x4.extract_lane(v, 3), idf);
    }
    return;
  }
  const tfSrc = docSrc + valueBytes(BLOCK, docWidth);
  for (let r: u32 = 0; r < 32; r++) {
    const v = docRow(docSrc, r, docWidth, carry);
    carry = i32x4.shuffle(v, v, 3, 3, 3, 3);
    if (record) v128.store(record + (<usize>r << 4), i32x4.sub(v, i32x4.splat(base)));
    const t = valueRow(tfSrc, r, tfWidth);
    addTf(accBase, i32x4.extract_lane(v, 0), i32x4.extract_lane(t, 0), idf);
    addTf(accBase, i32x4.extract_lane(v, 1), i32x4.extract_lane(t, 1), idf);
    addTf(accBase, i32x4.extract_lane(v, 2), i32x4.extract_lane(t, 2), idf);
    addTf(accBase, i32x4.extract_lane(v, 3), i32x4.extract_lane(t, 3), idf);
  }
}

/**
 * The exhaustive loop: add term j's weights into the accumulators for its documents in [base,
 * limit) (acc[doc - base]); its cursor stays at the first document not added. A block is decoded
 * once, whatever the number of scoring segments it spans. Returns how many postings it added.
 */
export function accumulate(j: u32, base: u32, limit: u32, record: bool): u32 {
  let added: u32 = 0;
  // The touched list takes a quarter of the segment at most.
  const touchedCap = min<u32>((limit - base) >> 2, TOUCHED_MAX);
  const idf = f64At(tIdf, j);
  const start = u32At(tStart, j);
  const end = u32At(tEnd, j);
  const at = <usize>j * BLOCK * 4;
  const docs = bufDocs + at;
  const tfs = bufTfs + at;
  const accBase = acc - (<usize>base << 3);
  for (let b = u32At(cBlock, j); b < end; b++) {
    // A block whose documents all come at or after limit waits, undecoded, for a later segment.
    if (b != start && u32At(blockLast, b - 1) >= limit - 1) return added;
    const n = sizeOf(j, b);
    const decoded = u32At(cDecoded, j) == b;
    if (n == BLOCK && !decoded && u32At(blockLast, b) < limit) {
      // The common case: a whole block inside the segment, added as it is unpacked.
      const into = record ? reserveTouched(BLOCK, touchedCap) : 0;
      addBlock(b, b == start ? END : u32At(blockLast, b - 1), idf, accBase, into, base);
      scored += BLOCK;
      added += BLOCK;
      setU32(cBlock, j, b + 1);
      continue;
    }
    let tfWidth: u32;
    let pos: u32;
    if (decoded) {
      pos = u32At(cPos, j);
      tfWidth = (load<u32>(data + (<usize>u32At(blockAt, b) << 2)) >> 8) & 0xff;
    } else {
      tfWidth = decode(b, n, b == start ? END : u32At(blockLast, b - 1), docs, tfs, false);
      setU32(cDecoded, j, b);
      pos = 0;
    }
    // The postings to add: the whole rest of the block, or those before limit.
    let stop = n;
    if (u32At(blockLast, b) >= limit) {
      stop = pos;
      while (u32At(docs, stop) < limit) stop++;
    }
    scored += stop - pos;
    added += stop - pos;
    const into = record ? reserveTouched(stop - pos, touchedCap) : 0;
    if (into) for (let i = pos; i < stop; i++) setU32(into, i - pos, u32At(docs, i) - base);
    // Every tf 1 (width 0): the table's weights, no tf read.
    if (tfWidth == 0) for (; pos < stop; pos++) addOne(accBase, u32At(docs, pos), idf);
    else for (; pos < stop; pos++) addTf(accBase, u32At(docs, pos), u32At(tfs, pos), idf);
    setU32(cPos, j, pos);
    if (pos < n) return added;
    setU32(cBlock, j, b + 1);
  }
  return added;
}

/**
 * Every accumulator of [0, len) above `min`, in order: its offset to outDocs (u32) and its score to
 * outScores (f64); then all of [0, len) set back to zero. Returns how many were written (at most len).
 *
 * Eight at a time: few pass min once the top k fills, so one test of eight comparisons skips most
 * runs, and each is zeroed as it is read (one pass over the accumulators, not two).
 */
export function collect(len: u32, min: f64, outDocs: usize, outScores: usize): u32 {
  let n: u32 = 0;
  const bar = f64x2.splat(min);
  const zero = f64x2.splat(0);
  const whole = len & ~7;
  let o: u32 = 0;
  for (; o < whole; o += 8) {
    const p = acc + (<usize>o << 3);
    const a = v128.load(p);
    const b = v128.load(p, 16);
    const c = v128.load(p, 32);
    const d = v128.load(p, 48);
    if (v128.any_true(v128.or(v128.or(f64x2.gt(a, bar), f64x2.gt(b, bar)), v128.or(f64x2.gt(c, bar), f64x2.gt(d, bar))))) {
      for (let i: u32 = 0; i < 8; i++) {
        const score = f64At(p, i);
        if (score > min) {
          setU32(outDocs, n, o + i);
          setF64(outScores, n, score);
          n++;
        }
      }
    }
    v128.store(p, zero);
    v128.store(p, zero, 16);
    v128.store(p, zero, 32);
    v128.store(p, zero, 48);
  }
  for (; o < len; o++) {
    const score = f64At(acc, o);
    if (score > min) {
      setU32(outDocs, n, o);
      setF64(outScores, n, score);
      n++;
    }
    setF64(acc, o, 0);
  }
  return n;
}

/**
 * What collect gives, from the touched list when it holds every document that can score above min
 * (the caller recorded every term whose bound is not in the sum below min): each listed
 * accumulator above min, zeroed as it is read (a document listed twice is taken once), then all of
 * [0, len) zeroed; in list order, not document order. When the list filled up, collect itself.
 */
export function collectTouched(len: u32, min: f64, outDocs: usize, outScores: usize): u32 {
  const n0 = touchedCount;
  const full = touchedFull;
  touchedCount = 0;
  touchedFull = false;
  if (full) return collect(len, min, outDocs, outScores);
  let n: u32 = 0;
  for (let i: u32 = 0; i < n0; i++) {
    const o = u32At(touched, i);
    const slot = acc + (<usize>o << 3);
    const score = load<f64>(slot);
    store<f64>(slot, 0);
    if (score > min) {
      setU32(outDocs, n, o);
      setF64(outScores, n, score);
      n++;
    }
  }
  memory.fill(acc, 0, <usize>len << 3);
  return n;
}

/** Term j's cursor moved to the first document at or after target in its decoded block (which holds one); returns it. */
// @ts-ignore: decorator
@inline function seekInBlock(j: u32, target: u32): u32 {
  const docs = bufDocs + <usize>j * BLOCK * 4;
  let pos = u32At(cPos, j);
  while (u32At(docs, pos) < target) pos++;
  setU32(cPos, j, pos);
  const d = u32At(docs, pos);
  setU32(cDoc, j, d);
  return d;
}

/** Term j's first document at or after target (END if none), its cursor moved there. */
// @ts-ignore: decorator
@inline function seek(j: u32, target: u32): u32 {
  const b = u32At(cBlock, j);
  // Most seeks end in the block already decoded: no call, no block search.
  if (u32At(cDecoded, j) != b || u32At(blockLast, b) < target) return seekBlocks(j, target);
  return seekInBlock(j, target);
}

/** seek past the decoded block. */
function seekBlocks(j: u32, target: u32): u32 {
  const end = u32At(tEnd, j);
  let b = u32At(cBlock, j);
  // Whole blocks before target are passed on their last documents, undecoded.
  while (b < end && u32At(blockLast, b) < target) b++;
  setU32(cBlock, j, b);
  if (b >= end) {
    setU32(cDoc, j, END);
    return END;
  }
  loadBlock(j, b);
  return seekInBlock(j, target);
}

/** A bound on term j's weight in document d and the documents after it up to its block's end (0 past its last). */
function blockBound(j: u32, d: u32, scale: f64): f64 {
  const end = u32At(tEnd, j);
  let b = u32At(cShallow, j);
  while (b < end && u32At(blockLast, b) < d) b++;
  setU32(cShallow, j, b);
  return b < end ? <f64>load<f32>(blockMax + (<usize>b << 2)) * f64At(tIdf, j) * scale : 0;
}

let heapSize: u32 = 0;

// @ts-ignore: decorator
@inline function worse(i: u32, j: u32): bool {
  const a = f64At(heapScores, i);
  const b = f64At(heapScores, j);
  return a < b || (a == b && u32At(heapDocs, i) > u32At(heapDocs, j));
}

function swap(i: u32, j: u32): void {
  const d = u32At(heapDocs, i);
  const s = f64At(heapScores, i);
  setU32(heapDocs, i, u32At(heapDocs, j));
  setF64(heapScores, i, f64At(heapScores, j));
  setU32(heapDocs, j, d);
  setF64(heapScores, j, s);
}

/** Keep (doc, score) in the top k (the caller has checked that it enters). */
function heapPush(k: u32, doc: u32, score: f64): void {
  if (heapSize < k) {
    let i = heapSize++;
    setU32(heapDocs, i, doc);
    setF64(heapScores, i, score);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!worse(i, parent)) break;
      swap(i, parent);
      i = parent;
    }
    return;
  }
  setU32(heapDocs, 0, doc);
  setF64(heapScores, 0, score);
  let i: u32 = 0;
  for (;;) {
    const l: u32 = 2 * i + 1;
    const r = l + 1;
    let w = i;
    if (l < heapSize && worse(l, w)) w = l;
    if (r < heapSize && worse(r, w)) w = r;
    if (w == i) return;
    swap(i, w);
    i = w;
  }
}

/**
 * The top k (at most the heap's length) of the query's q terms, by block-max MaxScore, document at
 * a time. The terms' slots come in ascending order of bound (tUb); `floor`: a score to beat (the
 * segments before this one); `scale`: factor on the stored bounds (segments.ts). Returns how many
 * hits are in the heap arrays (unordered).
 *
 * The terms whose bounds sum below the k-th score so far are non-essential: a document none of
 * the others holds cannot enter, so candidates are only the essential terms' documents, in order.
 * Runs of them are skipped undecoded while the essential terms' current blocks' bounds plus the
 * non-essential terms' sum stay below the k-th score. A candidate's non-essential terms are looked
 * up (highest bound first) only while its score so far plus their block bounds can still enter.
 * Its score is then summed in query order (the exhaustive loop's sum, to the bit); documents come
 * in order, so a later one tying the k-th score never displaces it (the exhaustive tie rule).
 */
export function pruned(q: u32, k: u32, floor: f64, scale: f64): u32 {
  heapSize = 0;
  reset(q);
  const small = q <= 64;
  let sum: f64 = 0;
  for (let j: u32 = 0; j < q; j++) {
    sum += f64At(tUb, j);
    setF64(cCum, j, sum);
    setU32(cDoc, j, seek(j, 0));
  }
  // A document enters when its score passes thr (the k-th score once there are k, never below floor).
  let thr = floor;
  let ne: u32 = 0;
  while (ne < q && f64At(cCum, ne) < thr * SLACK) ne++;
  let cur: u32 = 0;
  while (ne < q) {
    // The window [cur, windowEnd]: where every essential term is within its current block.
    let windowEnd: u32 = END;
    if (thr > 0) {
      let bound: f64 = ne > 0 ? f64At(cCum, ne - 1) : 0;
      let any = false;
      for (let j = ne; j < q; j++) {
        const end = u32At(tEnd, j);
        let b = u32At(cBlock, j);
        while (b < end && u32At(blockLast, b) < cur) b++;
        setU32(cBlock, j, b);
        if (b >= end) continue;
        any = true;
        const last = u32At(blockLast, b);
        if (last < windowEnd) windowEnd = last;
        bound += <f64>load<f32>(blockMax + (<usize>b << 2)) * f64At(tIdf, j) * scale;
      }
      if (!any) break;
      if (bound < thr * SLACK) {
        cur = windowEnd + 1;
        continue;
      }
    }
    // The candidates of the window, in order.
    let rewindow = false;
    while (!rewindow) {
      let d = END;
      for (let j = ne; j < q; j++) {
        let x = u32At(cDoc, j);
        if (x < cur) x = seek(j, cur);
        if (x < d) d = x;
      }
      if (d == END) return heapSize;
      if (d > windowEnd) {
        cur = d;
        break;
      }
      cur = d + 1;
      // The candidate's weights by query place: which are set, as bits of matched (up to 64
      // terms), else all zeroed first.
      let matched: u64 = 0;
      if (!small) for (let j: u32 = 0; j < q; j++) setF64(cWeight, j, 0);
      let score: f64 = 0;
      for (let j = ne; j < q; j++) {
        if (u32At(cDoc, j) != d) continue;
        const w = weightAt(j, d);
        const order = u32At(tOrder, j);
        setF64(cWeight, order, w);
        matched |= <u64>1 << <u64>order;
        score += w;
      }
      const bar = thr * SLACK;
      if (ne > 0) {
        // What the non-essential terms may add, from their bounds over the blocks holding d.
        let rest = f64At(cCum, ne - 1);
        let j = ne;
        while (j > 0 && score + rest >= bar) {
          j--;
          rest -= f64At(tUb, j) - blockBound(j, d, scale);
        }
        if (score + rest < bar) continue;
        // Then their weights, while the candidate can still enter.
        for (j = ne; j > 0 && score + rest >= bar; ) {
          j--;
          let x = u32At(cDoc, j);
          if (x < d) x = seek(j, d);
          if (x == d) {
            const w = weightAt(j, d);
            const order = u32At(tOrder, j);
            setF64(cWeight, order, w);
            matched |= <u64>1 << <u64>order;
            score += w;
          }
          rest -= blockBound(j, d, scale);
        }
        if (score + rest < bar) continue;
      }
      let exact: f64 = 0;
      if (small) {
        // The weights in query order; an absent term's 0 would add nothing (w + 0 == w exactly).
        for (let m = matched; m != 0; m &= m - 1) exact += f64At(cWeight, <u32>ctz(m));
      } else {
        for (let i: u32 = 0; i < q; i++) exact += f64At(cWeight, i);
      }
      if (!(exact > thr)) continue;
      heapPush(k, d, exact);
      if (heapSize < k) continue;
      const kth = f64At(heapScores, 0);
      if (kth > thr) {
        thr = kth;
        while (ne < q && f64At(cCum, ne) < thr * SLACK) ne++;
        // A higher bar: fewer essential terms, and blocks that may now be skipped whole.
        rewindow = true;
      }
      if (cur > windowEnd) break;
    }
  }
  return heapSize;
}
