import { closeSync, openSync, readSync, writeSync, fstatSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { AnalyzerConfig } from './analyzer.js';
import { CHECKSUM_ALGORITHM, BLOCK_BYTES, checkSeal, SUMS_FILE, warnUnchecked } from './checksums.js';

/**
 * The index directory, version 3. Every array is a flat little-endian typed array in its own file,
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
 *   post.off (u32, T+1)                   each term's first posting (its document frequency is the difference)
 *   post.data (u32 words)                 the postings, each term's in blocks of 128 (block-postings.ts):
 *                                         document gaps and term frequencies in whole-byte widths
 *   block.at (u32, B+1)                   each block's first word in post.data; a term's blocks follow
 *                                         one another, ceil(df/128) of them (block-postings.ts's blockOffsets)
 *   block.last (u32, B)                   each block's last document number
 *   block.max (f32, B)                    per block, at least its largest tf/(tf + k1(1-b+b·dl/avgdl))
 *   term.maxtf (f64, T)                   per term, the largest tf/(tf + k1(1-b+b·dl/avgdl)): MaxScore bounds
 *
 * manifest.json records the format version, analyzer, BM25 parameters, counts and every file's
 * size, so an index from another version, or one truncated on disk, is refused with a clear error.
 * It also records the checksum of sums.bin, which holds every other file's checksums per 4 KiB
 * block, and it is sealed with a checksum of its own (checksums.ts): damage that keeps a file's
 * size is found when the damaged bytes are read, before they are used. An index without them
 * (built before they were added) is read with a warning.
 *
 * Version 4 is version 3 with the texts compressed (textCodec 'lz4', compressed-texts.ts): each
 * text.<k>.bin is text.<k>.lz4 and text.<k>.blocks. Versions 1 and 2 were 3 and 4 with raw
 * postings (post.docs u32 and post.tfs u16 per posting, no blocks); this sleuth refuses them with
 * an error that says to rebuild.
 *
 * A corpus too large for one index's memory is built as several (segments), each a directory
 * seg-<k> holding an index as above; the directory's own manifest.json (SegmentsManifest, format
 * 'sleuth-segmented-index') lists them with the collection's counts, and they are queried as one
 * (segments.ts).
 */
export const INDEX_FORMAT = 'sleuth-index';
export const INDEX_VERSION = 3;
export const COMPRESSED_INDEX_VERSION = 4;
/** The versions before block-compressed postings (plain and compressed texts). */
const RAW_POSTINGS_VERSIONS = [1, 2];
export const SEGMENTS_FORMAT = 'sleuth-segmented-index';
export const SEGMENTS_VERSION = 1;
/** Texts are split into files of at most this many bytes (Node reads at most 2 GiB at once). */
export const TEXT_SHARD_BYTES = 1 << 30;

const Hex8 = z.string().regex(/^[0-9a-f]{8}$/u);

/** Where an index's block checksums are, and the checksum of that file (checksums.ts). */
const Checksums = z.object({
  algorithm: z.literal(CHECKSUM_ALGORITHM),
  blockBytes: z.literal(BLOCK_BYTES),
  file: z.literal(SUMS_FILE),
  sum: Hex8,
  /** Per file, the checksum of its blocks' checksums: one value per file, to compare a file alone. */
  files: z.record(z.string(), Hex8).optional(),
});

export const Manifest = z.object({
  format: z.literal(INDEX_FORMAT),
  version: z.number().int(),
  endianness: z.literal('LE'),
  /** Absent from an index built before checksums; placed first, far from `checksum`, so that one run of damage cannot remove both. */
  checksums: Checksums.optional(),
  analyzer: AnalyzerConfig,
  bm25: z.object({ k1: z.number(), b: z.number() }),
  counts: z.object({ docs: z.number().int(), terms: z.number().int(), postings: z.number().int(), tokens: z.number().int() }),
  avgdl: z.number(),
  textShards: z.array(z.object({ file: z.string(), firstDoc: z.number().int(), start: z.number().int(), bytes: z.number().int() })),
  /** How the texts are stored: absent for plain UTF-8, 'lz4' for compressed blocks (version 2). */
  textCodec: z.literal('lz4').optional(),
  /** What the index was built from, when the builder was told (e.g. the embedded corpus's hash). */
  source: z.string().optional(),
  /** File name -> size in bytes, for every file of the index (the grep files included). */
  files: z.record(z.string(), z.number().int()),
  /** The manifest's own checksum, last (sealJson). */
  checksum: Hex8.optional(),
});
export type Manifest = z.infer<typeof Manifest>;

export const SegmentsManifest = z.object({
  format: z.literal(SEGMENTS_FORMAT),
  version: z.literal(SEGMENTS_VERSION),
  analyzer: AnalyzerConfig,
  bm25: z.object({ k1: z.number(), b: z.number() }),
  /** The whole collection's: BM25 is scored with these, so the segments rank as one index would. */
  counts: z.object({ docs: z.number().int(), postings: z.number().int(), tokens: z.number().int() }),
  avgdl: z.number(),
  /** In document order: segment k holds documents firstDoc .. firstDoc + docs - 1. */
  segments: z.array(z.object({ dir: z.string(), firstDoc: z.number().int(), docs: z.number().int(), tokens: z.number().int() })).min(2),
  source: z.string().optional(),
  /** The manifest's own checksum (sealJson); absent before checksums. */
  checksum: Hex8.optional(),
});
export type SegmentsManifest = z.infer<typeof SegmentsManifest>;

/** The parsed manifest.json of an index directory and its text, or an InputError naming what is wrong. */
function readManifestJson(dir: string): { path: string; json: unknown; raw: string } {
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
  return { path, json, raw };
}

/** Whether a directory holds one index or segments (its manifest's format); an InputError if neither. */
export function indexKind(dir: string): 'index' | 'segments' {
  const { json } = readManifestJson(dir);
  const format = (json as { format?: unknown })?.format;
  if (format === SEGMENTS_FORMAT) return 'segments';
  if (format === INDEX_FORMAT) return 'index';
  throw new InputError(`${dir} is not a sleuth index (format ${JSON.stringify(format)}); rebuild with \`sleuth index\``);
}

/** Read and check the manifest.json of a segmented index (its segments' are read as they open). */
export function readSegmentsManifest(dir: string): SegmentsManifest {
  const { path, json, raw } = readManifestJson(dir);
  const head = json as { format?: unknown; version?: unknown };
  if (head?.format !== SEGMENTS_FORMAT) throw new InputError(`${dir} is not a segmented sleuth index (format ${JSON.stringify(head?.format)})`);
  if (head.version !== SEGMENTS_VERSION) throw new InputError(`${dir} is a segmented sleuth index of version ${String(head.version)}, this sleuth reads version ${SEGMENTS_VERSION}; rebuild with \`sleuth index\``);
  // After the version: another version's manifest is refused as such, whatever its seal.
  const sealed = checkSeal(dir, 'manifest.json', raw, json);
  const parsed = SegmentsManifest.safeParse(json);
  if (!parsed.success) throw new InputError(`${path}: invalid manifest (${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}); rebuild with \`sleuth index\``);
  if (!sealed) warnUnchecked(dir);
  return parsed.data;
}

/**
 * Read and check manifest.json (of one index, not of segments). `quiet`: no warning for an index
 * without checksums (for a caller that rebuilds such an index instead).
 */
export function readManifest(dir: string, quiet = false): Manifest {
  const { path, json, raw } = readManifestJson(dir);
  const head = json as { format?: unknown; version?: unknown; segments?: unknown[] };
  if (head?.format === SEGMENTS_FORMAT) throw new InputError(`${dir} is an index of ${head.segments?.length ?? 'several'} segments, which this use of it does not read (it reads an index of one segment)`);
  if (head?.format !== INDEX_FORMAT) throw new InputError(`${dir} is not a sleuth index (format ${JSON.stringify(head?.format)}); rebuild with \`sleuth index\``);
  if (RAW_POSTINGS_VERSIONS.includes(head.version as number)) {
    throw new InputError(`${dir} is a sleuth index of format version ${String(head.version)}, with raw postings, which this sleuth no longer reads: it reads version ${INDEX_VERSION} (and ${COMPRESSED_INDEX_VERSION}, with compressed texts), whose postings are block-compressed; rebuild with \`sleuth index\``);
  }
  if (head.version !== INDEX_VERSION && head.version !== COMPRESSED_INDEX_VERSION) throw new InputError(`${dir} is a sleuth index of format version ${String(head.version)}, this sleuth reads version ${INDEX_VERSION} (and ${COMPRESSED_INDEX_VERSION}, with compressed texts); rebuild with \`sleuth index\``);
  // After the version: another version's manifest is refused as such, whatever its seal.
  const sealed = checkSeal(dir, 'manifest.json', raw, json);
  const parsed = Manifest.safeParse(json);
  if (!parsed.success) throw new InputError(`${path}: invalid manifest (${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}); rebuild with \`sleuth index\``);
  if ((parsed.data.textCodec !== undefined) !== (parsed.data.version === COMPRESSED_INDEX_VERSION)) {
    throw new InputError(`${path}: version ${parsed.data.version} with text codec ${parsed.data.textCodec ?? 'none'}: compressed texts are version ${COMPRESSED_INDEX_VERSION} and only they; rebuild with \`sleuth index\``);
  }
  if (!sealed) {
    if (!quiet) warnUnchecked(dir);
  } else if (!parsed.data.checksums || parsed.data.files[SUMS_FILE] === undefined) throw new InputError(`${path}: sealed, but it lists no ${SUMS_FILE}; rebuild with \`sleuth index\``);
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
