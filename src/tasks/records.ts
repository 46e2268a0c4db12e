import { existsSync, statSync } from 'node:fs';
import type { z } from 'zod';
import { parseJsonRecord } from '../json-depth.js';
import { readLines } from '../corpus/lines.js';
import { regularFile } from '../corpus/regular-file.js';
import { readTextFile } from '../corpus/text-file.js';
import { InputError } from '../errors.js';

/** One raw record of a dataset file, with where it came from so that errors can name it. */
export interface SourceRecord {
  value: unknown;
  /** "train.jsonl line 7" or "train.json record 7": what an error message calls this record. */
  where: string;
}

/**
 * The records of a dataset file, whichever of the two layouts the datasets ship in: one JSON array
 * (HotpotQA's original files, the HippoRAG samples) or one JSON object per line (IRCoT, MuSiQue,
 * our own). JSONL is streamed line by line, so a file of any size fits in memory once parsed; a
 * JSON array is parsed whole. A line that does not parse is an error naming the file and the line.
 */
export async function* streamRecords(path: string): AsyncGenerator<SourceRecord> {
  if (!existsSync(path)) throw new InputError(`${path}: no such file`);
  regularFile(path, statSync(path));
  let first = true;
  for await (const line of readLines(path)) {
    if (line.text.trim() === '') continue;
    if (first && line.text.trimStart().startsWith('[')) {
      yield* readRecords(path);
      return;
    }
    first = false;
    yield { value: parseJsonRecord(line.text, `${path} line ${line.number}`), where: `${path} line ${line.number}` };
  }
}

/** The same records as streamRecords, read at once: for task-set files, which are small. */
export function readRecords(path: string): SourceRecord[] {
  const text = readTextFile(path);
  if (text.trimStart().startsWith('[')) {
    // The array itself is one level: each record may nest as deep as a line may.
    const parsed = parseJsonRecord(text, path, 1);
    return (parsed as unknown[]).map((value, i) => ({ value, where: `${path} record ${i + 1}` }));
  }
  const records: SourceRecord[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() !== '') records.push({ value: parseJsonRecord(line, `${path} line ${i + 1}`), where: `${path} line ${i + 1}` });
  });
  return records;
}

/** Say what is wrong with a value in one line: "facts.0.chunkIds: Too small: ...; query: ...". */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(record)'}: ${issue.message}`)
    .join('; ');
}

/** Validate one record against a schema, or throw an InputError naming the record and the field. */
export function parseRecord<T>(schema: z.ZodType<T>, record: SourceRecord): T {
  const result = schema.safeParse(record.value);
  if (!result.success) throw new InputError(`${record.where}: malformed record (${describeZodError(result.error)})`);
  return result.data;
}
