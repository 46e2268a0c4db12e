// The JSONL reader's fast path, in AssemblyScript compiled to WebAssembly (scripts/build-wasm.mjs):
// a batch of lines is split and each line that is a plain chunk record, `{"id": "...", "text":
// "...", "title": "..."}` in any order with JSON whitespace between, has its three strings
// unescaped to UTF-8, so that the index builder gets each text as UTF-8 without a string made of
// it, a JSON.parse of it or an encoding back (../read.ts). Any line outside that shape (other
// fields, a value that is not a string, a bad escape, invalid UTF-8, a byte-order mark, invalid
// JSON) is left to the reader's JSON.parse path, which makes the same chunk or the same error.

/** A growable byte array. */
class Bytes {
  ptr: usize = 0;
  cap: usize = 0;
  /** Make room for `n` bytes; returns the base pointer. */
  ensure(n: usize): usize {
    if (n <= this.cap) return this.ptr;
    let cap = max<usize>(this.cap << 1, 1 << 16);
    while (cap < n) cap <<= 1;
    this.ptr = this.ptr === 0 ? heap.alloc(cap) : heap.realloc(this.ptr, cap);
    this.cap = cap;
    return this.ptr;
  }
}

const input = new Bytes();
const arena = new Bytes();
const records = new Bytes();
let arenaLen: usize = 0;

/** u32s per line record (see scanLines). */
const RECORD: u32 = 11;
export const OK: u32 = 0;
export const BLANK: u32 = 1;
export const FALLBACK: u32 = 2;

/** Where the host writes the next batch (at least `bytes` long, with 16 bytes of slack). */
export function inputPointer(bytes: u32): usize {
  return input.ensure(<usize>bytes + 16);
}
export function arenaPointer(): usize {
  return arena.ptr;
}
export function recordsPointer(): usize {
  return records.ptr;
}
/** Bytes of the arena the last scanLines used. */
export function arenaLength(): u32 {
  return <u32>arenaLen;
}

/** Per line, set by scanString: the unescaped string's length in UTF-16 code units. */
let units: u32 = 0;
/** Where scanString stopped (after the closing quote), or 0 if the string is not for the fast path. */
let after: usize = 0;

// @ts-ignore: decorator
@inline function isWs(b: u32): bool {
  return b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a;
}

function skipWs(p: usize, end: usize): usize {
  while (p < end && isWs(<u32>load<u8>(p))) p++;
  return p;
}

// @ts-ignore: decorator
@inline function hex(b: u32): i32 {
  if (b - 0x30 < 10) return <i32>(b - 0x30);
  const l = b | 0x20;
  if (l - 0x61 < 6) return <i32>(l - 0x61 + 10);
  return -1;
}

/** The 4 hex digits at p as a code unit, or -1. */
function hex4(p: usize): i32 {
  const a = hex(load<u8>(p));
  const b = hex(load<u8>(p, 1));
  const c = hex(load<u8>(p, 2));
  const d = hex(load<u8>(p, 3));
  if ((a | b | c | d) < 0) return -1;
  return (a << 12) | (b << 8) | (c << 4) | d;
}

/** Write code point cp (not a surrogate) as UTF-8 at out; returns the end. */
function putCodePoint(out: usize, cp: u32): usize {
  if (cp < 0x80) {
    store<u8>(out, <u8>cp);
    return out + 1;
  }
  if (cp < 0x800) {
    store<u8>(out, <u8>(0xc0 | (cp >>> 6)));
    store<u8>(out, <u8>(0x80 | (cp & 0x3f)), 1);
    return out + 2;
  }
  if (cp < 0x10000) {
    store<u8>(out, <u8>(0xe0 | (cp >>> 12)));
    store<u8>(out, <u8>(0x80 | ((cp >>> 6) & 0x3f)), 1);
    store<u8>(out, <u8>(0x80 | (cp & 0x3f)), 2);
    return out + 3;
  }
  store<u8>(out, <u8>(0xf0 | (cp >>> 18)));
  store<u8>(out, <u8>(0x80 | ((cp >>> 12) & 0x3f)), 1);
  store<u8>(out, <u8>(0x80 | ((cp >>> 6) & 0x3f)), 2);
  store<u8>(out, <u8>(0x80 | (cp & 0x3f)), 3);
  return out + 4;
}

/**
 * Bytes of the well-formed UTF-8 sequence at p (lead byte >= 0x80, as the WHATWG decoder accepts
 * it: no overlong forms, no surrogates, nothing past U+10FFFF), or 0.
 */
function utf8Width(p: usize, end: usize): u32 {
  const b0 = <u32>load<u8>(p);
  let width: u32;
  // The second byte's range: narrower after E0 and F0 (no overlong form), ED (no surrogate), F4 (nothing past U+10FFFF).
  let lo: u32 = 0x80;
  let hi: u32 = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) width = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) {
    width = 3;
    if (b0 === 0xe0) lo = 0xa0;
    if (b0 === 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    width = 4;
    if (b0 === 0xf0) lo = 0x90;
    if (b0 === 0xf4) hi = 0x8f;
  } else return 0;
  if (p + width > end) return 0;
  const b1 = <u32>load<u8>(p, 1);
  if (b1 < lo || b1 > hi) return 0;
  for (let k: u32 = 2; k < width; k++) if ((<u32>load<u8>(p + k) & 0xc0) !== 0x80) return 0;
  return width;
}

/**
 * The JSON string starting at p (its opening quote) and ending before `end`, unescaped to UTF-8 at
 * out; returns the end of what was written, with `after` set past the closing quote and `units` to
 * its UTF-16 length. `after` = 0 if the string is not for the fast path (unterminated, a control
 * character, a bad escape, a lone surrogate escape, invalid UTF-8).
 */
function scanString(p: usize, end: usize, out: usize): usize {
  after = 0;
  let n: u32 = 0;
  p++;
  for (;;) {
    // 16 bytes at a time while they are plain ASCII: no quote, backslash or control character.
    while (p + 16 <= end) {
      const v = v128.load(p);
      const special = v128.or(
        v128.or(i8x16.eq(v, i8x16.splat(0x22)), i8x16.eq(v, i8x16.splat(0x5c))),
        i8x16.lt_u(v, i8x16.splat(0x20)),
      );
      const stop = i8x16.bitmask(v128.or(special, i8x16.lt_s(v, i8x16.splat(0)))) & 0xffff;
      if (stop === 0) {
        v128.store(out, v);
        out += 16;
        p += 16;
        n += 16;
        continue;
      }
      const k = <usize>ctz(stop);
      v128.store(out, v); // the bytes past k are overwritten or left past the end
      out += k;
      p += k;
      n += <u32>k;
      break;
    }
    if (p >= end) return 0;
    const b = <u32>load<u8>(p);
    if (b === 0x22) {
      after = p + 1;
      units = n;
      return out;
    }
    if (b < 0x20) return 0;
    if (b < 0x80 && b !== 0x5c) {
      store<u8>(out++, <u8>b);
      p++;
      n++;
      continue;
    }
    if (b >= 0x80) {
      const w = utf8Width(p, end);
      if (w === 0) return 0;
      memory.copy(out, p, w);
      out += w;
      p += w;
      n += w === 4 ? 2 : 1;
      continue;
    }
    // An escape.
    if (p + 1 >= end) return 0;
    const e = <u32>load<u8>(p, 1);
    let c: i32 = -1;
    if (e === 0x22 || e === 0x5c || e === 0x2f) c = <i32>e;
    else if (e === 0x62) c = 0x08;
    else if (e === 0x66) c = 0x0c;
    else if (e === 0x6e) c = 0x0a;
    else if (e === 0x72) c = 0x0d;
    else if (e === 0x74) c = 0x09;
    if (c >= 0) {
      store<u8>(out++, <u8>c);
      p += 2;
      n++;
      continue;
    }
    if (e !== 0x75 || p + 6 > end) return 0;
    const u = hex4(p + 2);
    if (u < 0) return 0;
    if (u >= 0xd800 && u <= 0xdbff) {
      // A high surrogate: the fast path takes it only with its low half, as \uXXXX right after.
      if (p + 12 > end || load<u8>(p, 6) !== 0x5c || load<u8>(p, 7) !== 0x75) return 0;
      const low = hex4(p + 8);
      if (low < 0xdc00 || low > 0xdfff) return 0;
      out = putCodePoint(out, 0x10000 + ((<u32>(u - 0xd800) << 10) | <u32>(low - 0xdc00)));
      p += 12;
      n += 2;
      continue;
    }
    if (u >= 0xdc00 && u <= 0xdfff) return 0;
    out = putCodePoint(out, <u32>u);
    p += 6;
    n++;
  }
  return 0; // not reached: the loop returns
}

/** Which of the three fields the key at [k, k + len) names: 0 id, 1 title, 2 text, -1 another. */
function fieldOf(k: usize, len: usize): i32 {
  if (len === 2 && load<u8>(k) === 0x69 && load<u8>(k, 1) === 0x64) return 0;
  if (len === 5 && load<u8>(k) === 0x74 && load<u8>(k, 1) === 0x69 && load<u8>(k, 2) === 0x74 && load<u8>(k, 3) === 0x6c && load<u8>(k, 4) === 0x65) return 1;
  if (len === 4 && load<u8>(k) === 0x74 && load<u8>(k, 1) === 0x65 && load<u8>(k, 2) === 0x78 && load<u8>(k, 3) === 0x74) return 2;
  return -1;
}

/**
 * The line [p, end) (without its newline): OK with its record filled, BLANK (JSON whitespace
 * only), or FALLBACK.
 */
function scanLine(p: usize, end: usize, rec: usize): u32 {
  p = skipWs(p, end);
  if (p === end) return BLANK;
  if (load<u8>(p) !== 0x7b) return FALLBACK;
  p = skipWs(p + 1, end);
  let seen: u32 = 0;
  let more = true;
  while (more) {
    if (p >= end || load<u8>(p) !== 0x22) return FALLBACK;
    // The key, unescaped into the arena (and then written over).
    const keyAt = arena.ensure(arenaLen + <usize>(end - p) + 16) + arenaLen;
    const keyEnd = scanString(p, end, keyAt);
    if (after === 0) return FALLBACK;
    const field = fieldOf(keyAt, keyEnd - keyAt);
    if (field < 0 || (seen & (1 << field)) !== 0) return FALLBACK;
    seen |= 1 << field;
    p = skipWs(after, end);
    if (p >= end || load<u8>(p) !== 0x3a) return FALLBACK;
    p = skipWs(p + 1, end);
    if (p >= end || load<u8>(p) !== 0x22) return FALLBACK;
    const at = arena.ensure(arenaLen + <usize>(end - p) + 16) + arenaLen;
    const valueEnd = scanString(p, end, at);
    if (after === 0) return FALLBACK;
    const len = <u32>(valueEnd - at);
    store<u32>(rec + 4 + (<usize>field << 3), <u32>arenaLen);
    store<u32>(rec + 8 + (<usize>field << 3), len);
    if (field === 2) store<u32>(rec, units, 28);
    arenaLen += <usize>len;
    p = skipWs(after, end);
    if (p >= end) return FALLBACK;
    const b = load<u8>(p);
    if (b === 0x2c) {
      p = skipWs(p + 1, end);
    } else if (b === 0x7d) {
      more = false;
    } else {
      return FALLBACK;
    }
  }
  if (skipWs(p + 1, end) !== end) return FALLBACK;
  // An id and a text are needed, and an empty id is an error: JSON.parse's path reports them.
  if ((seen & 1) === 0 || (seen & 4) === 0 || load<u32>(rec, 8) === 0) return FALLBACK;
  if ((seen & 2) === 0) store<u32>(rec, 0xffffffff, 16);
  else store<u32>(rec, fingerprint(rec), 40);
  return OK;
}

const FNV_PRIME: u32 = 0x01000193;
/** Bytes hashed from each end of a text (../read.ts FINGERPRINT_ENDS). */
const ENDS: u32 = 64;

/**
 * ../read.ts's fingerprint of an OK line's chunk (it has a title): FNV-1a over the title's UTF-16
 * code units, the text's UTF-16 length, and the first and last 64 bytes of its UTF-8.
 */
function fingerprint(rec: usize): u32 {
  let h: u32 = 0x811c9dc5;
  let p = arena.ptr + <usize>load<u32>(rec, 12);
  const titleEnd = p + <usize>load<u32>(rec, 16);
  while (p < titleEnd) {
    // The title is well-formed UTF-8 (scanString checked it): decode a code point, hash its units.
    const b = <u32>load<u8>(p);
    let cp: u32;
    if (b < 0x80) {
      cp = b;
      p += 1;
    } else if (b < 0xe0) {
      cp = ((b & 0x1f) << 6) | (<u32>load<u8>(p, 1) & 0x3f);
      p += 2;
    } else if (b < 0xf0) {
      cp = ((b & 0x0f) << 12) | ((<u32>load<u8>(p, 1) & 0x3f) << 6) | (<u32>load<u8>(p, 2) & 0x3f);
      p += 3;
    } else {
      cp = ((b & 0x07) << 18) | ((<u32>load<u8>(p, 1) & 0x3f) << 12) | ((<u32>load<u8>(p, 2) & 0x3f) << 6) | (<u32>load<u8>(p, 3) & 0x3f);
      p += 4;
    }
    if (cp >= 0x10000) {
      h = (h ^ (0xd800 + ((cp - 0x10000) >>> 10))) * FNV_PRIME;
      h = (h ^ (0xdc00 + ((cp - 0x10000) & 0x3ff))) * FNV_PRIME;
    } else {
      h = (h ^ cp) * FNV_PRIME;
    }
  }
  h = (h ^ load<u32>(rec, 28)) * FNV_PRIME;
  const text = arena.ptr + <usize>load<u32>(rec, 20);
  const n = load<u32>(rec, 24);
  const head = min<u32>(n, ENDS);
  for (let i: u32 = 0; i < head; i++) h = (h ^ <u32>load<u8>(text + i)) * FNV_PRIME;
  for (let i: u32 = max<u32>(ENDS, n - min<u32>(n, ENDS)); i < n; i++) h = (h ^ <u32>load<u8>(text + i)) * FNV_PRIME;
  return h;
}

/**
 * Split the len bytes at inputPointer() into lines (on '\n'; a '\r' before it is dropped) and scan
 * each; returns the number of lines. Per line, RECORD u32s at recordsPointer(): status, id offset
 * and length, title offset and length (length 0xffffffff: no title), text offset and length
 * (offsets into arenaPointer(); valid for an OK line), the text's UTF-16 length, the line's start
 * and end in the input, and the chunk's fingerprint (../read.ts; for an OK line with a title).
 */
export function scanLines(len: u32): u32 {
  const base = input.ptr;
  const end = base + <usize>len;
  arenaLen = 0;
  let lines: u32 = 0;
  let p = base;
  while (p < end) {
    let e = p;
    // The newline, 16 bytes at a time.
    for (;;) {
      if (e + 16 <= end) {
        const m = i8x16.bitmask(i8x16.eq(v128.load(e), i8x16.splat(0x0a)));
        if (m !== 0) {
          e += <usize>ctz(m);
          break;
        }
        e += 16;
      } else {
        while (e < end && load<u8>(e) !== 0x0a) e++;
        break;
      }
    }
    let lineEnd = e;
    if (lineEnd > p && load<u8>(lineEnd - 1) === 0x0d) lineEnd--;
    const rec = records.ensure(<usize>(lines + 1) * RECORD * 4) + <usize>lines * RECORD * 4;
    store<u32>(rec, 0xffffffff, 16);
    const mark = arenaLen;
    const status = scanLine(p, lineEnd, rec);
    if (status !== OK) arenaLen = mark;
    store<u32>(rec, status);
    store<u32>(rec, <u32>(p - base), 32);
    store<u32>(rec, <u32>(lineEnd - base), 36);
    lines++;
    p = e + 1;
  }
  return lines;
}
