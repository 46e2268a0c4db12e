import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { InputError } from '../errors.js';
import { BLOCK_BYTES, type FileSums } from './checksums.js';

/**
 * Bytes read per page by default. A first read of memory costs a page fault per 4 KiB, so files
 * read at random (texts, ids) use small pages and files read in long runs (postings) larger ones.
 */
export const PAGE_BYTES = 1 << 16;

/** Closes the descriptor of a file view that was garbage-collected without close(). */
const closer = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
});

/**
 * A file viewed as one byte array whose pages are read from disk the first time they are asked
 * for, like a memory map: opening costs one fstat, and a page nobody reads costs no memory (a
 * large zero-filled allocation is committed by the OS only where written). Loading an index this
 * way touches only the arrays a query needs; the bytes are the file's bytes, viewed, not parsed.
 *
 * The descriptor stays open so that the view keeps reading the same file even when a rebuilt
 * index is renamed over it.
 */
export class PagedFile {
  /** The whole file; only ranges passed to ensure() hold its bytes. */
  readonly bytes: Uint8Array;
  private fd: number;
  /** Per page: 1 once read. */
  private readonly loaded: Uint8Array;
  private readonly token = {};

  /**
   * Open `path`, which must be exactly `size` bytes (else the index is truncated or damaged).
   * `target`, if given, is where its bytes go (exactly `size` long, zero-filled): memory the caller
   * laid out, such as a WebAssembly memory. `sums`, if given, are its block checksums: each page
   * is checked when read, and a damaged one is never handed out (it stays unread, so every later
   * use of it fails the same way).
   */
  constructor(readonly path: string, size: number, private readonly pageBytes = PAGE_BYTES, target?: Uint8Array, private readonly sums?: FileSums) {
    if (target !== undefined && target.length !== size) throw new Error(`page target for ${path} is ${target.length} bytes, the file ${size}`);
    if (!Number.isInteger(Math.log2(pageBytes))) throw new Error(`page size must be a power of two, got ${pageBytes}`);
    if (sums !== undefined && pageBytes < BLOCK_BYTES) throw new Error(`page size ${pageBytes} is under the checksum block's ${BLOCK_BYTES}`);
    this.fd = openSync(path, 'r');
    const actual = fstatSync(this.fd).size;
    if (actual !== size) {
      closeSync(this.fd);
      throw new InputError(`index file ${path} is ${actual} bytes, the manifest says ${size}: the index is truncated or damaged; rebuild with \`sleuth index\``);
    }
    closer.register(this, this.fd, this.token);
    this.bytes = target ?? new Uint8Array(size);
    this.loaded = new Uint8Array(Math.ceil(size / pageBytes));
  }

  /** Make bytes [from, to) valid, reading the pages not yet read (consecutive ones in one read). */
  ensure(from: number, to: number): void {
    if (to <= from) return;
    const size = this.pageBytes;
    const last = Math.floor((to - 1) / size);
    for (let page = Math.floor(from / size); page <= last; page++) {
      if (this.loaded[page] === 1) continue;
      let end = page + 1;
      while (end <= last && this.loaded[end] === 0) end++;
      const from = page * size;
      const to = Math.min(this.bytes.length, end * size);
      this.read(from, to);
      this.sums?.check(this.bytes, from, to);
      this.loaded.fill(1, page, end);
      page = end - 1;
    }
  }

  /** Bytes [from, to), read first if needed. The view shares memory with `bytes`. */
  range(from: number, to: number): Uint8Array {
    this.ensure(from, to);
    return this.bytes.subarray(from, to);
  }

  private read(from: number, to: number): void {
    if (this.fd < 0) throw new Error(`index file ${this.path} was closed`);
    let at = from;
    while (at < to) {
      const n = readSync(this.fd, this.bytes, at, Math.min(to - at, 1 << 30), at);
      if (n === 0) throw new InputError(`index file ${this.path} ended early at byte ${at}; rebuild with \`sleuth index\``);
      at += n;
    }
  }

  /** Read every page now (for callers that will scan the whole file anyway). */
  loadAll(): void {
    this.ensure(0, this.bytes.length);
  }

  close(): void {
    if (this.fd < 0) return;
    closer.unregister(this.token);
    closeSync(this.fd);
    this.fd = -1;
  }
}
