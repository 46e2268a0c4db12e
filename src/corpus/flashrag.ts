import { existsSync, statSync } from 'node:fs';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { parseJsonRecord } from '../json-depth.js';
import type { Chunk } from './chunk.js';
import { readLineBatches } from './lines.js';
import { regularFile } from './regular-file.js';

/**
 * FlashRAG's passage corpora (wiki-18, `wiki18_100w.jsonl`, the corpus Search-R1 searches): one
 * `{id, contents}` per line, `contents` being `"Title"\ntext` (the title on the first line, most
 * often in double quotes). Other fields are allowed and ignored.
 */
const FlashragPassage = z.object({
  id: z.union([z.string().min(1), z.number().int()]),
  contents: z.string(),
});

/** A FlashRAG passage as a chunk: the first line of `contents`, unquoted, is its title; the rest its text. */
export function flashragChunk(id: string, contents: string): Chunk {
  const newline = contents.indexOf('\n');
  const firstLine = (newline === -1 ? contents : contents.slice(0, newline)).trim();
  const title = /^".*"$/su.test(firstLine) && firstLine.length >= 2 ? firstLine.slice(1, -1).trim() : firstLine;
  // A passage with no newline is all text; its title is then its first line, as for any chunk without one.
  const text = newline === -1 ? contents.trim() : contents.slice(newline + 1).trim();
  return { id, title, text };
}

/**
 * The chunks of a FlashRAG corpus file (`.jsonl`, or `.jsonl.gz`), a read buffer's worth at a time.
 * A line that is not JSON or not `{id, contents}` is an InputError naming the file and the line.
 * `onBytes`: how many bytes of the file (as on disk) have been read.
 */
export async function* readFlashragCorpus(path: string, onBytes?: (bytes: number) => void): AsyncGenerator<Chunk[]> {
  if (!existsSync(path)) throw new InputError(`${path}: no such file`);
  regularFile(path, statSync(path));
  let any = false;
  for await (const lines of readLineBatches(path, onBytes)) {
    const batch: Chunk[] = [];
    for (const line of lines) {
      if (line.text.trim() === '') continue;
      const where = `${path} line ${line.number}`;
      const parsed = FlashragPassage.safeParse(parseJsonRecord(line.text, where));
      if (!parsed.success) throw new InputError(`${where}: not a FlashRAG passage {id, contents} (${parsed.error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).slice(0, 2).join('; ')})`);
      batch.push(flashragChunk(String(parsed.data.id), parsed.data.contents));
    }
    if (batch.length > 0) {
      any = true;
      yield batch;
    }
  }
  if (!any) throw new InputError(`${path}: no passages (the file is empty)`);
}
