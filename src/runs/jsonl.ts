import { appendFileSync, existsSync, readFileSync } from 'node:fs';

export interface JsonlRead<T> {
  records: T[];
  /** Lines that did not parse (a half-written last line after a crash, or a corrupt line), with their 1-based numbers. */
  skipped: { line: number; reason: string }[];
}

/** Read a JSONL file; a missing file is empty, a malformed line is skipped and reported, never thrown. */
export function readJsonl<T = unknown>(path: string): JsonlRead<T> {
  if (!existsSync(path)) return { records: [], skipped: [] };
  return parseJsonl<T>(readFileSync(path, 'utf8'));
}

/** The records of JSONL text (readJsonl's parsing, for text read another way). */
export function parseJsonl<T = unknown>(text: string): JsonlRead<T> {
  const records: T[] = [];
  const skipped: { line: number; reason: string }[] = [];
  const lines = text.split('\n');
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    try {
      records.push(JSON.parse(text) as T);
    } catch (err) {
      skipped.push({ line: i + 1, reason: (err as Error).message });
    }
  });
  return { records, skipped };
}

/**
 * Append records as whole lines. One write call per batch, each line ending in a newline, so a
 * crash loses at most the line being written and earlier lines are never touched.
 */
export function appendJsonl(path: string, records: unknown[]): void {
  if (records.length === 0) return;
  appendFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
}
