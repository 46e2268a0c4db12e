import { mkdtempSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { PAGE_BYTES, PagedFile } from '../../src/search/lazy.js';

const root = mkdtempSync(join(tmpdir(), 'sleuth-lazy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A file of pseudo-random bytes spanning several pages and a partial last page. */
function fileOf(name: string, size: number, seed: number): { path: string; bytes: Uint8Array } {
  const bytes = new Uint8Array(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1103515245) + 12345) | 0;
    bytes[i] = (x >>> 16) & 0xff;
  }
  const path = join(root, name);
  writeFileSync(path, bytes);
  return { path, bytes };
}

describe('PagedFile', () => {
  it('returns the file bytes of any range, reading only the pages asked for', () => {
    const size = 3 * PAGE_BYTES + 123;
    const { path, bytes } = fileOf('a.bin', size, 1);
    const f = new PagedFile(path, size);
    // Nothing read yet: the array is all zeros.
    expect(f.bytes.subarray(PAGE_BYTES, PAGE_BYTES + 16).every((b) => b === 0)).toBe(true);
    // A range across the first page boundary reads pages 0 and 1 only.
    expect(Buffer.from(f.range(PAGE_BYTES - 5, PAGE_BYTES + 7)).equals(Buffer.from(bytes.subarray(PAGE_BYTES - 5, PAGE_BYTES + 7)))).toBe(true);
    expect(Buffer.from(f.bytes.subarray(0, 2 * PAGE_BYTES)).equals(Buffer.from(bytes.subarray(0, 2 * PAGE_BYTES)))).toBe(true);
    expect(f.bytes.subarray(2 * PAGE_BYTES, 2 * PAGE_BYTES + 64).every((b) => b === 0)).toBe(true);
    // The partial last page, then everything.
    expect(Buffer.from(f.range(size - 10, size)).equals(Buffer.from(bytes.subarray(size - 10)))).toBe(true);
    f.loadAll();
    expect(Buffer.from(f.bytes).equals(Buffer.from(bytes))).toBe(true);
    expect(f.range(5, 5).length).toBe(0);
    f.close();
    f.close();
  });

  it('refuses a file whose size is not the expected one, naming it', () => {
    const { path } = fileOf('short.bin', 100, 2);
    expect(() => new PagedFile(path, 101)).toThrow(InputError);
    expect(() => new PagedFile(path, 101)).toThrow(/short\.bin is 100 bytes, the manifest says 101: the index is truncated/);
  });

  it('keeps reading the file it opened when another is renamed over its path', () => {
    const size = 2 * PAGE_BYTES;
    const { path, bytes } = fileOf('b.bin', size, 3);
    const f = new PagedFile(path, size);
    const other = fileOf('c.bin', size, 4);
    renameSync(other.path, path);
    expect(Buffer.from(f.range(PAGE_BYTES, PAGE_BYTES + 100)).equals(Buffer.from(bytes.subarray(PAGE_BYTES, PAGE_BYTES + 100)))).toBe(true);
    f.close();
    expect(() => f.range(0, 10)).toThrow(/was closed/);
  });
});
