import { closeSync, openSync, readSync, writeSync, fstatSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { AnalyzerConfig } from './analyzer.js';

/**
 * The index directory, version 1. Every array is a flat little-endian typed array in its own file,
 * so loading is a typed-array view over the file's bytes (no parsing): small arrays are read
 * whole at open, large ones (texts, postings, ids, titles) page by page on first use (lazy.ts):
 *
 *   ids.bin / ids.off (u32, N+1)          chunk ids, UTF-8, with offsets
 *   ids.order (u32, N)                    doc numbers sorted by id (docOf is a binary search)
 *   titles.bin / titles.off (u32, N+1)    titles
 *   text.<k>.bin / text.off (f64, N+1)    texts; global byte offsets, shards of at most 1 GiB
 *   meta.bin / meta.off (u32, N+1)        each chunk's meta as JSON ('' when none), parsed on read
 *   doclen (u32, N)                       exact document lengths in terms (title + text)
 *   terms.bin / terms.off (u32, T+1)      the vocabulary, sorted by UTF-8 bytes
 *   post.off (u32, T+1)                   postings range of each term
 *   post.docs (u32, P) / post.tfs (u16, P) doc numbers (ascending within a term) and term frequencies
 *   term.maxtf (f64, T)                   per term, the largest tf/(tf + k1(1-b+b·dl/avgdl)): MaxScore bounds
 *
 * manifest.json records the format version, analyzer, BM25 parameters, counts and every file's
 * size, so an index from another version, or one truncated on disk, is refused with a clear error.
 */
export const INDEX_FORMAT = 'sleuth-index';
export const INDEX_VERSION = 1;
/** Texts are split into files of at most this many bytes (Node reads at most 2 GiB at once). */
export const TEXT_SHARD_BYTES = 1 << 30;

export const Manifest = z.object({
  format: z.literal(INDEX_FORMAT),
  version: z.number().int(),
  endianness: z.literal('LE'),
  analyzer: AnalyzerConfig,
  bm25: z.object({ k1: z.number(), b: z.number() }),
  counts: z.object({ docs: z.number().int(), terms: z.number().int(), postings: z.number().int(), tokens: z.number().int() }),
  avgdl: z.number(),
  textShards: z.array(z.object({ file: z.string(), firstDoc: z.number().int(), start: z.number().int(), bytes: z.number().int() })),
  /** What the index was built from, when the builder was told (e.g. the embedded corpus's hash). */
  source: z.string().optional(),
  /** File name -> size in bytes, for every file of the index (the grep files included). */
  files: z.record(z.string(), z.number().int()),
});
export type Manifest = z.infer<typeof Manifest>;

/** Read and check manifest.json and the sizes of the files it lists. */
export function readManifest(dir: string): Manifest {
  let raw: string;
  const path = join(dir, 'manifest.json');
  try {
    raw = readFileUtf8(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new InputError(`no search index at ${dir} (missing manifest.json): run \`sleuth index\` first`);
    throw new InputError(`cannot read ${path}: ${code ?? (err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    throw new InputError(`${path}: malformed JSON (${(err as Error).message}); rebuild with \`sleuth index\``);
  }
  const head = json as { format?: unknown; version?: unknown };
  if (head?.format !== INDEX_FORMAT) throw new InputError(`${dir} is not a sleuth index (format ${JSON.stringify(head?.format)}); rebuild with \`sleuth index\``);
  if (head.version !== INDEX_VERSION) throw new InputError(`${dir} is a sleuth index of format version ${String(head.version)}, this sleuth reads version ${INDEX_VERSION}; rebuild with \`sleuth index\``);
  const parsed = Manifest.safeParse(json);
  if (!parsed.success) throw new InputError(`${path}: invalid manifest (${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}); rebuild with \`sleuth index\``);
  return parsed.data;
}

function readFileUtf8(path: string): string {
  return new TextDecoder().decode(readWhole(path));
}

/**
 * A whole file into a fresh, aligned ArrayBuffer (typed-array views need alignment), read in
 * pieces because one read call is limited to 2 GiB. When `expected` is given, a file of any
 * other size is an InputError (truncated or foreign index). `shared`: into a SharedArrayBuffer.
 */
export function readWhole(path: string, expected?: number, shared = false): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (expected !== undefined && size !== expected) {
      throw new InputError(`index file ${path} is ${size} bytes, the manifest says ${expected}: the index is truncated or damaged; rebuild with \`sleuth index\``);
    }
    // Shared: memory that worker threads can view without a copy of their own.
    const out = new Uint8Array(shared ? new SharedArrayBuffer(size) : new ArrayBuffer(size));
    let at = 0;
    while (at < size) {
      const n = readSync(fd, out, at, Math.min(size - at, 1 << 30), at);
      if (n === 0) throw new InputError(`index file ${path} ended early at byte ${at} of ${size}; rebuild with \`sleuth index\``);
      at += n;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/** Write bytes to a new file, in pieces of at most 1 GiB. Returns the size. */
export function writeWhole(path: string, bytes: ArrayBufferView): number {
  const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fd = openSync(path, 'w');
  try {
    let at = 0;
    while (at < view.length) at += writeSync(fd, view, at, Math.min(view.length - at, 1 << 30));
  } finally {
    closeSync(fd);
  }
  return view.length;
}
