// The LZ4 block decoder, in AssemblyScript compiled to WebAssembly (scripts/build-wasm.mjs): the
// chunk texts of a compressed index are read through it (../compressed-texts.ts). ../lz4.ts holds
// the same decoder in plain TypeScript; it is the fallback when the module is not built, and it is
// what names the damage when this one refuses a block. The tests check that both decode the same.
//
// Texts of words drawn at random compress to about 2,000 sequences per 16 KiB block, 2.7 literal
// and 5.4 match bytes each on average: per-sequence cost is what matters, so short copies go 8
// bytes at a time into slack that the caller leaves after the input and the output (SLACK bytes).

/** Bytes after the input and after the output that a copy may read or write past its end. */
export const SLACK: u32 = 32;

/**
 * A literal or match length of 15 or more extended by the bytes at ip (each adds itself; they go on
 * while they are 255), and where they end: (end << 32) | length, or 0 when the input ends first.
 * Inlined, with both results in one u64: as a plain function with its second result in a global it
 * made decoding a block 4-30% slower, and a division to recover the end 2-5% slower.
 */
// @ts-ignore: decorator
@inline function extendedLength(length: usize, ip: usize, end: usize): u64 {
  let b: u32;
  do {
    if (ip >= end) return 0;
    b = <u32>load<u8>(ip++);
    length += <usize>b;
  } while (b == 255);
  return (<u64>ip << 32) | <u64>length;
}

/**
 * Decode the LZ4 block of `srcLen` bytes at `src` into `dstLen` bytes at `dst`. Returns 0 when the
 * block decodes to exactly `dstLen` bytes, else -1 - (the input byte where it went wrong).
 */
export function decompress(src: usize, srcLen: u32, dst: usize, dstLen: u32): i32 {
  const end = src + <usize>srcLen;
  const outEnd = dst + <usize>dstLen;
  let ip = src;
  let op = dst;
  for (;;) {
    if (ip >= end) return -1 - <i32>(ip - src);
    const token = <u32>load<u8>(ip++);
    let lit = <usize>(token >> 4);
    if (lit == 15) {
      const extended = extendedLength(lit, ip, end);
      if (extended == 0) return -1 - <i32>(end - src);
      lit = <usize>extended;
      ip = <usize>(extended >> 32);
    }
    if (ip + lit > end || op + lit > outEnd) return -1 - <i32>(ip - src);
    if (lit <= 16) {
      // Within the slack: 16 bytes, whatever lit is.
      store<u64>(op, load<u64>(ip));
      store<u64>(op + 8, load<u64>(ip + 8));
    } else memory.copy(op, ip, lit);
    ip += lit;
    op += lit;
    if (ip == end) break;
    if (ip + 2 > end) return -1 - <i32>(ip - src);
    const offset = <usize>load<u16>(ip);
    ip += 2;
    let len = <usize>(token & 15) + 4;
    if (len == 19) {
      const extended = extendedLength(len, ip, end);
      if (extended == 0) return -1 - <i32>(end - src);
      len = <usize>extended;
      ip = <usize>(extended >> 32);
    }
    if (offset == 0 || offset > op - dst || op + len > outEnd) return -1 - <i32>(ip - src);
    const from = op - offset;
    if (offset >= 8) {
      // 8 bytes at a time: each load reads bytes written before it (offset >= 8), as LZ4 asks.
      for (let i: usize = 0; i < len; i += 8) store<u64>(op + i, load<u64>(from + i));
    } else {
      for (let i: usize = 0; i < len; i++) store<u8>(op + i, load<u8>(from + i));
    }
    op += len;
  }
  return op == outEnd ? 0 : -1 - <i32>(ip - src);
}
