import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checksumOf } from '../../src/files/checksum.js';
import { fileChecksums, sealJson, sumFiles } from '../../src/search/checksums.js';
import { rng } from './bm25-reference.js';

/** Make an index as sleuth built it before checksums: no sums.bin, no checksums in its manifest. */
export function unseal(dir: string): void {
  const path = join(dir, 'manifest.json');
  const m = JSON.parse(readFileSync(path, 'utf8')) as { checksums?: unknown; checksum?: unknown; files: Record<string, number> };
  delete m.checksums;
  delete m.checksum;
  delete m.files['sums.bin'];
  writeFileSync(path, JSON.stringify(m, null, 2) + '\n');
  rmSync(join(dir, 'sums.bin'));
}

/** The kinds of damage that keep a file's size (bit rot, a bad copy, a disk that lied, two writers). */
export const DAMAGES = ['flip-first', 'flip-middle', 'flip-last', 'ff-run', 'random-16', 'zeroed'] as const;
export type Damage = (typeof DAMAGES)[number];

/**
 * Damage file `path` in place, keeping its size; `seed` places the random bytes. Returns false
 * when the damage left the bytes as they were (0xFF over 0xFF, zeros over zeros): not a case.
 */
export function damageFile(path: string, damage: Damage, seed = 1): boolean {
  const before = readFileSync(path);
  const bytes = Buffer.from(before);
  const n = bytes.length;
  if (n === 0) return false;
  const random = rng(seed);
  switch (damage) {
    case 'flip-first': bytes[0]! ^= 0x01; break;
    case 'flip-middle': bytes[n >> 1]! ^= 0x10; break;
    case 'flip-last': bytes[n - 1]! ^= 0x80; break;
    case 'ff-run': bytes.fill(0xff, n >> 2, Math.min(n, (n >> 2) + 64)); break;
    case 'random-16': {
      const at = Math.floor(random() * Math.max(1, n - 16));
      for (let i = at; i < Math.min(n, at + 16); i++) bytes[i] = Math.floor(random() * 256);
      break;
    }
    case 'zeroed': bytes.fill(0); break;
  }
  if (bytes.equals(before)) return false;
  writeFileSync(path, bytes);
  return true;
}

/** Write an index's checksums and seal again over its files as they are now (a second writer's). */
export function reseal(dir: string): void {
  const path = join(dir, 'manifest.json');
  const m = JSON.parse(readFileSync(path, 'utf8')) as { checksums: { sum: string; files?: Record<string, string> }; checksum?: string; files: Record<string, number> };
  const sums = sumFiles(dir, m.files);
  writeFileSync(join(dir, 'sums.bin'), sums);
  m.checksums.sum = checksumOf(new Uint8Array(sums.buffer, sums.byteOffset, sums.byteLength));
  m.checksums.files = fileChecksums(m.files, sums);
  delete m.checksum;
  writeFileSync(path, sealJson(m));
}
