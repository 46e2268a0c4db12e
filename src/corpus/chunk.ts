import { createHash } from 'node:crypto';

/** One retrievable unit of a corpus: a paragraph, a filing chunk, a passage. */
export interface Chunk {
  id: string;
  title: string;
  text: string;
  /** Any other columns of the source (company, date, form, ...), kept as they came. */
  meta?: Record<string, unknown>;
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
