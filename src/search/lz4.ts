/**
 * LZ4 block format (https://github.com/lz4/lz4/blob/dev/doc/lz4_Block_format.md), compressor and
 * decompressor, for the chunk texts of an index stored compressed (compressed-texts.ts). The
 * compressor is LZ4's fast greedy one: a hash of the next 4 bytes finds the last position with the
 * same 4 bytes; a match is extended both ways. Blocks are small (tens of KiB), so offsets always
 * fit LZ4's 16 bits. Output is standard LZ4: any LZ4 decoder reads it.
 *
 * Decoding runs in WebAssembly (./assembly/lz4.ts) when the module is built, about 5x as fast here
 * on these texts (19 against 100 us per 16 KiB block); lz4DecompressPlain, the same decoder in TypeScript, is the fallback and says
 * what is wrong with a block the module refuses.
 */
import { WA, WASM_PAGE, compiledWasm } from '../wasm.js';

/** Bytes an LZ4 block of `n` input bytes may take at most (incompressible input). */
export function lz4Bound(n: number): number {
  return n + Math.ceil(n / 255) + 16;
}

const HASH_BITS = 14;
/** LZ4's rules: the last match starts at least 12 bytes before the end, the last 5 bytes are literals. */
const MF_LIMIT = 12;
const LAST_LITERALS = 5;
const MIN_MATCH = 4;

/** Per call, positions by hash; reused (filled with -1 per call). */
const table = new Int32Array(1 << HASH_BITS);

function read32(b: Uint8Array, i: number): number {
  return b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
}

/** Compress src into dst (at least lz4Bound(src.length) long); returns the compressed length. */
export function lz4Compress(src: Uint8Array, dst: Uint8Array): number {
  const n = src.length;
  if (dst.length < lz4Bound(n)) throw new Error(`lz4Compress: output of ${dst.length} bytes is below the bound ${lz4Bound(n)}`);
  if (n >= 1 << 16) throw new Error(`lz4Compress: blocks are below 64 KiB, got ${n} bytes`);
  table.fill(-1);
  let op = 0;
  let anchor = 0;
  let ip = 0;
  const mflimit = n - MF_LIMIT;
  const matchlimit = n - LAST_LITERALS;
  while (ip < mflimit) {
    const seq = read32(src, ip);
    const h = Math.imul(seq, 2654435761) >>> (32 - HASH_BITS);
    const ref = table[h]!;
    table[h] = ip;
    if (ref < 0 || read32(src, ref) !== seq) {
      // No match: step on, faster the longer nothing matched (LZ4's acceleration).
      ip += 1 + ((ip - anchor) >>> 6);
      continue;
    }
    let s = ip;
    let r = ref;
    while (s > anchor && r > 0 && src[s - 1] === src[r - 1]) s--, r--;
    let len = MIN_MATCH;
    while (s + len < matchlimit && src[s + len] === src[r + len]) len++;
    op = writeSequence(src, anchor, s - anchor, dst, op, s - r, len);
    ip = s + len;
    anchor = ip;
  }
  // The rest as literals, a last sequence without a match.
  const lit = n - anchor;
  dst[op++] = Math.min(lit, 15) << 4;
  if (lit >= 15) op = writeLength(dst, op, lit - 15);
  dst.set(src.subarray(anchor, n), op);
  op += lit;
  return op;
}

function writeLength(dst: Uint8Array, op: number, rest: number): number {
  while (rest >= 255) {
    dst[op++] = 255;
    rest -= 255;
  }
  dst[op++] = rest;
  return op;
}

function writeSequence(src: Uint8Array, litFrom: number, lit: number, dst: Uint8Array, op: number, offset: number, len: number): number {
  const ml = len - MIN_MATCH;
  dst[op++] = (Math.min(lit, 15) << 4) | Math.min(ml, 15);
  if (lit >= 15) op = writeLength(dst, op, lit - 15);
  for (let i = 0; i < lit; i++) dst[op + i] = src[litFrom + i]!;
  op += lit;
  dst[op++] = offset & 0xff;
  dst[op++] = offset >>> 8;
  if (ml >= 15) op = writeLength(dst, op, ml - 15);
  return op;
}

/** The input position after the length readLength read last: its second result, kept here so that no object is made per sequence. */
let lengthEnd = 0;

/**
 * An LZ4 length: the token's 4 bits `nibble`, plus, when they are 15, the bytes at ip (a byte of
 * 255 says another follows). Sets lengthEnd; `what` names the length if the input ends within it.
 */
function readLength(src: Uint8Array, nibble: number, ip: number, what: string): number {
  let len = nibble;
  if (nibble === 15) {
    let b: number;
    do {
      if (ip >= src.length) bad(ip, `${what} runs past the end`);
      b = src[ip++]!;
      len += b;
    } while (b === 255);
  }
  lengthEnd = ip;
  return len;
}

/** The decoder's error, given the input position (a function of its own, so that `ip` stays a plain local). */
function bad(ip: number, why: string): never {
  throw new Error(`damaged LZ4 block (${why} at input byte ${ip})`);
}

/** Bytes the WebAssembly decoder may read past its input and write past its output (./assembly/lz4.ts's SLACK). */
const SLACK = 32;
/** Where the decoder's input and output go in its memory, and the most each may hold. */
const WASM_SRC = 1024;
const WASM_CAPACITY = lz4Bound(1 << 16);
const WASM_DST = WASM_SRC + WASM_CAPACITY + SLACK;

interface Lz4Exports {
  decompress(src: number, srcLen: number, dst: number, dstLen: number): number;
}
/** The WebAssembly decoder and its memory's bytes, made on first use; null when the module is not built. */
let wasmDecoder: { x: Lz4Exports; bytes: Uint8Array } | null | undefined;

function wasm(): { x: Lz4Exports; bytes: Uint8Array } | null {
  if (wasmDecoder !== undefined) return wasmDecoder;
  const mod = compiledWasm('lz4.wasm');
  if (!mod) return (wasmDecoder = null);
  const pages = Math.ceil((WASM_DST + WASM_CAPACITY + SLACK) / WASM_PAGE);
  const memory = new WA.Memory({ initial: pages, maximum: pages });
  const x = new WA.Instance(mod, { env: { memory } }).exports as unknown as Lz4Exports;
  return (wasmDecoder = { x, bytes: new Uint8Array(memory.buffer) });
}

/**
 * Decompress one LZ4 block into dst, which must be exactly the original length; throws on input
 * that is not a valid block of that length (a damaged index file).
 */
export function lz4Decompress(src: Uint8Array, dst: Uint8Array): void {
  // Not built, a block larger than LZ4's, or damaged: the TypeScript decoder decodes it or names the damage.
  if (!lz4DecompressWasm(src, dst)) lz4DecompressPlain(src, dst);
}

/** Whether the WebAssembly decoder is built (lz4Decompress runs in it). */
export function lz4WasmAvailable(): boolean {
  return wasm() !== null;
}

/**
 * lz4Decompress in WebAssembly: true when it decoded the block into dst; false when the module is
 * not built, the block or its output is larger than LZ4's 64 KiB blocks, or the block is damaged.
 */
export function lz4DecompressWasm(src: Uint8Array, dst: Uint8Array): boolean {
  const w = wasm();
  if (!w || src.length > WASM_CAPACITY || dst.length > WASM_CAPACITY) return false;
  w.bytes.set(src, WASM_SRC);
  if (w.x.decompress(WASM_SRC, src.length, WASM_DST, dst.length) !== 0) return false;
  dst.set(w.bytes.subarray(WASM_DST, WASM_DST + dst.length));
  return true;
}

/** lz4Decompress in TypeScript: the same bytes, the same errors (exported for the tests that compare them). */
export function lz4DecompressPlain(src: Uint8Array, dst: Uint8Array): void {
  const end = src.length;
  let ip = 0;
  let op = 0;
  for (;;) {
    if (ip >= end) bad(ip, 'ends before its last literals');
    const token = src[ip++]!;
    const lit = readLength(src, token >>> 4, ip, 'literal length');
    ip = lengthEnd;
    if (ip + lit > end || op + lit > dst.length) bad(ip, 'literals run past the end');
    if (lit < 16) for (let i = 0; i < lit; i++) dst[op + i] = src[ip + i]!;
    else dst.set(src.subarray(ip, ip + lit), op);
    ip += lit;
    op += lit;
    if (ip === end) break;
    if (ip + 2 > end) bad(ip, 'offset runs past the end');
    const offset = src[ip]! | (src[ip + 1]! << 8);
    ip += 2;
    const len = readLength(src, token & 15, ip, 'match length') + MIN_MATCH;
    ip = lengthEnd;
    if (offset === 0 || offset > op || op + len > dst.length) bad(ip, 'match outside the output');
    const from = op - offset;
    if (offset >= len && len >= 32) dst.copyWithin(op, from, from + len);
    else for (let i = 0; i < len; i++) dst[op + i] = dst[from + i]!;
    op += len;
  }
  if (op !== dst.length) bad(ip, `decodes to ${op} bytes, expected ${dst.length}`);
}
