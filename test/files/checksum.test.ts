import { describe, expect, it } from 'vitest';
import { checksumOf, xxh32 } from '../../src/files/checksum.js';

describe('xxh32', () => {
  it('matches the reference implementation\'s published values', () => {
    const utf8 = (s: string) => new TextEncoder().encode(s);
    expect(xxh32(utf8(''))).toBe(0x02cc5d05);
    expect(xxh32(utf8('abc'))).toBe(0x32d153ff);
    expect(xxh32(utf8('Nobody inspects the spammish repetition'))).toBe(0xe2293b2f);
    expect(xxh32(utf8('abc'), 0, 3, 1)).not.toBe(0x32d153ff);
  });

  it('hashes a range the same as a copy of it, at every alignment and length', () => {
    const bytes = new Uint8Array(300).map((_, i) => (i * 2654435761) >>> 24);
    for (const from of [0, 1, 3, 7]) {
      for (const length of [0, 1, 4, 15, 16, 17, 31, 64, 257]) {
        expect(xxh32(bytes, from, from + length)).toBe(xxh32(bytes.slice(from, from + length)));
      }
    }
  });

  it('changes with any one flipped bit', () => {
    const bytes = new Uint8Array(4096).map((_, i) => i & 0xff);
    const clean = xxh32(bytes);
    for (const at of [0, 1, 2047, 4095]) {
      for (let bit = 0; bit < 8; bit++) {
        bytes[at]! ^= 1 << bit;
        expect(xxh32(bytes)).not.toBe(clean);
        bytes[at]! ^= 1 << bit;
      }
    }
    expect(checksumOf(bytes)).toMatch(/^[0-9a-f]{8}$/);
    expect(checksumOf('abc')).toBe('32d153ff');
  });
});
