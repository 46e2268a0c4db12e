import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { DamagedIndexError } from '../errors.js';
import { checksumHex, checksumOf, xxh32 } from '../files/checksum.js';

/**
 * An index's checksums. Every file of the index is cut into blocks of BLOCK_BYTES, and
 * SUMS_FILE holds each block's xxHash32 (u32), file after file in the sorted order of their names:
 * a read checks exactly the blocks it reads, so a query pays for the pages it touches and no more
 * (4 KiB is the smallest page any file is read in, lazy.ts). The manifest records SUMS_FILE's own
 * checksum, and its own (sealJson); so every byte of an index is covered by one checksum, and
 * every checksum by the manifest's.
 */
export const BLOCK_BYTES = 4096;
export const SUMS_FILE = 'sums.bin';
export const CHECKSUM_ALGORITHM = 'xxh32';

/** The blocks of a file of `size` bytes. */
export function blocksIn(size: number): number {
  return Math.ceil(size / BLOCK_BYTES);
}

/** The files SUMS_FILE covers, in its order: every file of the index but itself (the manifest is not in `files`). */
export function summedFiles(files: Record<string, number>): string[] {
  return Object.keys(files)
    .filter((name) => name !== SUMS_FILE)
    .sort();
}

/** Each block's checksum of bytes held in memory (a whole file). */
export function blockSums(bytes: Uint8Array): Uint32Array {
  const sums = new Uint32Array(blocksIn(bytes.length));
  for (let b = 0; b < sums.length; b++) sums[b] = xxh32(bytes, b * BLOCK_BYTES, Math.min(bytes.length, (b + 1) * BLOCK_BYTES));
  return sums;
}

/** Bytes read at a time when a file is summed from disk (a whole number of blocks). */
const STREAM_BYTES = 1 << 24;

/** Each block's checksum of the file at `path`, read a piece at a time (a text shard is up to 1 GiB). */
export function fileBlockSums(path: string, size: number): Uint32Array {
  const sums = new Uint32Array(blocksIn(size));
  const piece = new Uint8Array(Math.min(STREAM_BYTES, Math.max(size, 1)));
  const fd = openSync(path, 'r');
  try {
    for (let at = 0; at < size; ) {
      const want = Math.min(piece.length, size - at);
      let got = 0;
      while (got < want) {
        const n = readSync(fd, piece, got, want - got, at + got);
        if (n === 0) break;
        got += n;
      }
      const bytes = piece.subarray(0, got);
      sums.set(blockSums(bytes), at / BLOCK_BYTES);
      if (got < want) return sums.subarray(0, blocksIn(at + got));
      at += got;
    }
  } finally {
    closeSync(fd);
  }
  return sums;
}

/** The checksums of one file of an index: its blocks' entries in SUMS_FILE. */
export class FileSums {
  constructor(
    readonly dir: string,
    readonly name: string,
    readonly size: number,
    /** Its blocks' checksums (a view of SUMS_FILE's table). */
    readonly sums: Uint32Array,
  ) {}

  /**
   * Check bytes [from, to) of the file, held in `bytes` at the file's own offsets: from at a block's
   * start, to at one or at the file's end. A DamagedIndexError names the first bad block.
   */
  check(bytes: Uint8Array, from: number, to: number): void {
    for (let at = from; at < to; at += BLOCK_BYTES) {
      const end = Math.min(this.size, at + BLOCK_BYTES);
      const sum = xxh32(bytes, at, end);
      if (sum !== this.sums[at / BLOCK_BYTES]) throw this.damaged(at, end, sum);
    }
  }

  /** Check the whole file, read into `bytes` (a file of another size is damaged too). */
  checkWhole(bytes: Uint8Array): void {
    if (bytes.length !== this.size) throw new DamagedIndexError(this.dir, this.name, `it is ${bytes.length} bytes, the manifest says ${this.size}`);
    this.check(bytes, 0, bytes.length);
  }

  /** The error for block [from, to), whose bytes sum to `sum`. */
  private damaged(from: number, to: number, sum: number): DamagedIndexError {
    return new DamagedIndexError(this.dir, this.name, `bytes ${from}..${to} have checksum ${checksumHex(sum)}, the index recorded ${checksumHex(this.sums[from / BLOCK_BYTES]!)}`);
  }
}

/** The block checksums of every file of an index (its SUMS_FILE, checked whole against the manifest). */
export class IndexSums {
  private readonly byName = new Map<string, FileSums>();

  constructor(dir: string, files: Record<string, number>, table: Uint32Array) {
    let first = 0;
    for (const name of summedFiles(files)) {
      const size = files[name]!;
      this.byName.set(name, new FileSums(dir, name, size, table.subarray(first, first + blocksIn(size))));
      first += blocksIn(size);
    }
    if (first !== table.length) throw new DamagedIndexError(dir, SUMS_FILE, `it holds ${table.length} checksums, the index's files have ${first} blocks`);
  }

  /** A file's checksums; an error for a file the manifest does not list (a caller's mistake). */
  of(name: string): FileSums {
    const sums = this.byName.get(name);
    if (!sums) throw new Error(`no checksums for ${name}: the manifest does not list it`);
    return sums;
  }
}

/** Each file's one checksum: the xxHash32 of its blocks' checksums in `table` (SUMS_FILE's order). */
export function fileChecksums(files: Record<string, number>, table: Uint32Array): Record<string, string> {
  const out: Record<string, string> = {};
  let first = 0;
  for (const name of summedFiles(files)) {
    const blocks = table.subarray(first, first + blocksIn(files[name]!));
    out[name] = checksumOf(new Uint8Array(blocks.buffer, blocks.byteOffset, blocks.byteLength));
    first += blocks.length;
  }
  return out;
}

/**
 * Build SUMS_FILE's table for the files of dir (sorted, all but SUMS_FILE; `files` gives their
 * sizes), by reading them back from disk.
 */
export function sumFiles(dir: string, files: Record<string, number>): Uint32Array {
  const names = summedFiles(files);
  const parts = names.map((name) => fileBlockSums(join(dir, name), files[name]!));
  const table = new Uint32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    table.set(p, at);
    at += p.length;
  }
  return table;
}

const SEAL_PLACEHOLDER = '00000000';
const SEAL = /"checksum": "([^"]*)"/gu;

/**
 * JSON text (two-space indent, final newline) of `value` with a last field `checksum`: the
 * xxHash32 of the text as written with that field's value zeroed. A manifest damaged anywhere,
 * a changed number or name included, no longer matches its seal.
 */
export function sealJson(value: object): string {
  const text = JSON.stringify({ ...value, checksum: SEAL_PLACEHOLDER }, null, 2) + '\n';
  const at = text.lastIndexOf(`"checksum": "${SEAL_PLACEHOLDER}"`);
  const sum = checksumOf(text);
  return text.slice(0, at) + `"checksum": "${sum}"` + text.slice(at + `"checksum": "${SEAL_PLACEHOLDER}"`.length);
}

/**
 * Whether `raw` (a manifest's text, parsed as `json`) is sealed and intact: true when its seal
 * matches, false when it has none (an index written before checksums); a DamagedIndexError when
 * the seal does not match, or is missing from a manifest that records block checksums.
 */
export function checkSeal(dir: string, file: string, raw: string, json: unknown): boolean {
  const fields = json as { checksum?: unknown; checksums?: unknown };
  if (fields.checksum === undefined) {
    if (fields.checksums !== undefined) throw new DamagedIndexError(dir, file, 'it records block checksums but has no checksum of its own');
    return false;
  }
  const matches = [...raw.matchAll(SEAL)];
  const last = matches[matches.length - 1];
  if (!last || last[1] !== fields.checksum) throw new DamagedIndexError(dir, file, 'its checksum field is unreadable');
  const at = last.index;
  const zeroed = raw.slice(0, at) + `"checksum": "${SEAL_PLACEHOLDER}"` + raw.slice(at + last[0].length);
  const sum = checksumOf(zeroed);
  if (sum !== last[1]) throw new DamagedIndexError(dir, file, `its text has checksum ${sum}, it records ${last[1]}`);
  return true;
}

const warned = new Set<string>();

/** Once per directory: an index without checksums is read, but its damage cannot be detected. */
export function warnUnchecked(dir: string): void {
  if (warned.has(dir)) return;
  warned.add(dir);
  process.stderr.write(`sleuth: index ${dir} has no checksums (it was built before sleuth checked its indexes), so damage to it cannot be detected; rebuild it with \`sleuth index\` to enable checks\n`);
}
