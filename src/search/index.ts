import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Chunk } from '../corpus/chunk.js';
import { embeddedCorpusPath } from '../corpus/embedded.js';
import { readChunks } from '../corpus/read.js';
import { DamagedIndexError, InputError } from '../errors.js';
import { LockHeldError, lockHeld } from '../files/lock.js';
import { buildIndex, type BuildOptions, type ChunkSource } from './build.js';
import { readManifest } from './format.js';
import { GREP_FILE, GREP_FORMAT_VERSION, GREP_MAGIC } from './grep/format.js';

export { Analyzer, AnalyzerConfig, type AnalyzerOptions } from './analyzer.js';
export { porter2 } from './porter2.js';
export { buildIndex, type BuildOptions, type IndexStats } from './build.js';
export { openIndex, SearchIndex, type OpenOptions, type SearchOptions } from './open.js';
export { openSearcher, openSegmentedIndex, SegmentedIndex } from './segments.js';
export { Bm25Scorer, bm25Idf, type ScoredDoc } from './bm25.js';
export { INDEX_VERSION, Manifest, readManifest } from './format.js';
export { IndexChunkStore } from './store.js';
export { makeSnippet, type TermHit } from './snippet.js';
export type { ChunkStore, Searcher, SearchHit, GrepHit, GrepOptions, GrepResult } from './types.js';

/** Where the embedded default corpus is indexed, relative to the working directory. */
export function defaultIndexDir(): string {
  return join('.sleuth', 'index', 'default');
}

/** sha256 of the corpus files, in order: an index built from other bytes is stale. */
function corpusSource(files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const f of files) hash.update(readFileSync(f));
  return 'embedded:' + hash.digest('hex').slice(0, 16);
}

/** Whether the index's grep.bin is of the grep format this sleuth reads (it is versioned apart). */
function grepCurrent(dir: string): boolean {
  const header = Buffer.alloc(12);
  let fd: number;
  try {
    fd = openSync(join(dir, GREP_FILE), 'r');
  } catch {
    return false;
  }
  try {
    return readSync(fd, header, 0, 12, 0) === 12 && header.toString('latin1', 0, 8) === GREP_MAGIC && header.readUInt32LE(8) === GREP_FORMAT_VERSION;
  } finally {
    closeSync(fd);
  }
}

/**
 * The directory of an index over the embedded default corpus, building it first when it is
 * missing, from another format version (of the index or of its grep prefilter), damaged (a file
 * missing or of the wrong size), or built from other corpus bytes.
 */
export async function ensureDefaultIndex(dir: string = defaultIndexDir(), options: Omit<BuildOptions, 'source'> = {}): Promise<string> {
  return ensureCorpusIndex([embeddedCorpusPath()], dir, options);
}

/**
 * The directory of an index over shipped corpus files (JSONL, gzipped or not; no id in two of
 * them), built first when it is missing, stale or damaged, as for the default index.
 */
export async function ensureCorpusIndex(files: readonly string[], dir: string, options: Omit<BuildOptions, 'source'> = {}): Promise<string> {
  return ensureIndexOf(corpusSource(files), () => chunksOf(files), dir, options);
}

/**
 * The directory of an index built from `chunks`, built first unless dir already holds an intact
 * one of the current formats whose manifest records `source` (what the caller says the chunks are:
 * a hash of their files, or a file's path, size and time for a corpus too large to hash each run).
 */
export async function ensureIndexOf(source: string, chunks: () => ChunkSource, dir: string, options: Omit<BuildOptions, 'source'> = {}): Promise<string> {
  const started = Date.now();
  for (;;) {
    if (indexCurrent(dir, source)) return dir;
    try {
      await buildIndex(chunks(), dir, { ...options, source });
      return dir;
    } catch (err) {
      // Another sleuth is building this very index (two commands started at once on a fresh
      // checkout): wait for it to finish, then use what it built if it is the one wanted.
      if (!(err instanceof LockHeldError) || Date.now() - started > LOCK_WAIT_MS) throw err;
      while (lockHeld(dir) && Date.now() - started <= LOCK_WAIT_MS) await new Promise((done) => setTimeout(done, 100));
    }
  }
}

/** How long ensureCorpusIndex waits for another sleuth building the same index. */
const LOCK_WAIT_MS = 10 * 60_000;

/**
 * Whether dir holds an intact index of the current formats built from `source`, with checksums
 * (one built before them is rebuilt: these indexes are sleuth's own, made from shipped corpora).
 */
function indexCurrent(dir: string, source: string): boolean {
  try {
    const m = readManifest(dir, true);
    const intact = Object.entries(m.files).every(([name, bytes]) => existsSync(join(dir, name)) && statSync(join(dir, name)).size === bytes);
    return m.source === source && m.checksum !== undefined && intact && grepCurrent(dir);
  } catch (err) {
    if (!(err instanceof InputError) && !(err instanceof DamagedIndexError)) throw err;
    return false;
  }
}

async function* chunksOf(files: readonly string[]): AsyncGenerator<Chunk> {
  for (const f of files) yield* readChunks(f, 'jsonl');
}
