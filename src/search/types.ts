import type { Chunk } from '../corpus/chunk.js';

export interface SearchHit {
  id: string;
  title: string;
  score: number;
  snippet: string;
}

export interface GrepHit {
  id: string;
  title: string;
  snippet: string;
}

export interface GrepOptions {
  /** Most hits to return (default 10). */
  k?: number;
  /** Wall-clock cap for one call, in ms (default 1000). */
  timeLimitMs?: number;
  /** Approximate length of each hit's snippet, in characters (default 200). */
  snippetChars?: number;
}

export interface GrepResult {
  hits: GrepHit[];
  /** True when the call stopped at the time cap before scanning every candidate. */
  timedOut: boolean;
  /** Chunks whose text was actually run through the regex (after the literal/trigram prefilter). */
  scanned: number;
}

/**
 * What the environment and the CLI need of a built index. Search and grep throw InputError for
 * bad queries (empty, only stopwords, invalid or unsupported regex) with a message naming them.
 */
export interface Searcher {
  readonly size: number;
  search(query: string, k?: number): SearchHit[];
  grep(pattern: string, options?: GrepOptions): GrepResult;
  read(id: string): Chunk | undefined;
  has(id: string): boolean;
}

/**
 * The chunk store of a built index, addressed by dense document number 0..size-1 (the order
 * chunks were indexed in). textBytes returns the UTF-8 bytes of the text without copying, for grep.
 */
export interface ChunkStore {
  readonly size: number;
  id(doc: number): string;
  title(doc: number): string;
  text(doc: number): string;
  textBytes(doc: number): Uint8Array;
  /** Document number of an id, or -1. */
  docOf(id: string): number;
}
