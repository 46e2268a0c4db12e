import { createHash } from 'node:crypto';

/** One retrievable unit of a corpus: a paragraph, a filing chunk, a passage. */
export interface Chunk {
  id: string;
  title: string;
  text: string;
  /** Any other columns of the source (company, date, form, ...), kept as they came. */
  meta?: Record<string, unknown>;
}

/**
 * A chunk whose text is still the UTF-8 it was read as (the JSONL reader's fast path, for the
 * index builder, which stores and splits UTF-8 and never needs the text as a string).
 */
export interface Utf8Chunk {
  id: string;
  title: string;
  /** The text as UTF-8. */
  utf8: Uint8Array;
  /** The text's length as a string, in UTF-16 code units. */
  units: number;
  meta?: undefined;
}

/** What a corpus reader gives the index builder: chunks with their text as a string or as UTF-8. */
export type SourceChunk = Chunk | Utf8Chunk;

export function isUtf8Chunk(chunk: SourceChunk): chunk is Utf8Chunk {
  return (chunk as Utf8Chunk).utf8 !== undefined;
}

const utf8Decoder = new TextDecoder();

/** A chunk's text as a string (decoded from UTF-8 if need be). */
export function chunkText(chunk: SourceChunk): string {
  return isUtf8Chunk(chunk) ? utf8Decoder.decode(chunk.utf8) : chunk.text;
}

/** Collapse runs of white space and trim, so that one paragraph from two sources compares equal. */
export function normalizeWhitespace(s: string): string {
  return s.replace(/\s+/gu, ' ').trim();
}

/**
 * The stable id of a chunk whose source has none (HotpotQA, MuSiQue paragraphs): a short hash of
 * its normalised title and text. The same paragraph from two datasets gets the same id, and the id
 * does not move when other chunks are added. Short on purpose: agents copy ids into `curate` calls.
 */
export function contentChunkId(title: string, text: string): string {
  const h = createHash('sha256').update(normalizeWhitespace(title)).update('\n').update(normalizeWhitespace(text)).digest('hex');
  return h.slice(0, 10);
}

/** What agents and suites may read of a corpus: a chunk by id, and whether one exists. */
export interface CorpusReader {
  read(id: string): Chunk | undefined;
  has(id: string): boolean;
}
