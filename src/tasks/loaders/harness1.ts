import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet';
import { z } from 'zod';
import { InputError } from '../../errors.js';
import { finishTasks, type DraftTask } from '../check.js';
import { describeZodError } from '../records.js';
import type { Fact } from '../task.js';
import type { LoadedTasks } from './types.js';

/** The columns of `pat-jj/harness-1-train-data` that a task needs. */
const TASK_COLUMNS = ['stage', 'source', 'dataset_name', 'query_id', 'query', 'answer', 'document_ids_json'] as const;

/** One entry of `document_ids_json`: a fact and the chunks that support it (any one suffices). */
const DocumentIds = z.array(
  z.object({
    fact: z.string(),
    chunk_ids: z.array(z.union([z.string(), z.number()]).transform(String)),
    is_final_answer: z.boolean().nullish(),
  }),
);

export interface Harness1Options {
  /** Which `stage` rows to load (default 'rl': the 3,453 SEC queries; 'sft' rows are trajectories). */
  stage?: string;
}

/** The parquet files of a download directory (or the one file given), sorted; `corpora/` is left out. */
export function harness1TaskFiles(path: string): string[] {
  if (!existsSync(path)) throw new InputError(`${path}: no such file or directory (point --tasks at your local download of pat-jj/harness-1-train-data)`);
  if (!statSync(path).isDirectory()) return [path];
  const files = parquetFiles(path).filter((f) => !relative(path, f).split(sep).includes('corpora'));
  if (files.length === 0) throw new InputError(`${path}: no task parquet files found (expected e.g. data/train-*.parquet outside corpora/)`);
  return files;
}

/** The chunk-corpus parquet files of a download directory: everything under `corpora/<domain>/`. */
export function harness1CorpusFiles(dir: string, domain?: string): string[] {
  const root = join(dir, 'corpora', ...(domain ? [domain] : []));
  if (!existsSync(root)) return [];
  return parquetFiles(root);
}

function parquetFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...parquetFiles(full));
    else if (entry.name.endsWith('.parquet')) out.push(full);
  }
  return out;
}

/** Read some columns of a parquet file as objects; a missing column is an error naming file and column. */
async function readColumns(file: string, wanted: readonly string[], required: readonly string[]): Promise<Record<string, unknown>[]> {
  let buffer;
  let metadata;
  try {
    buffer = await asyncBufferFromFile(file);
    metadata = await parquetMetadataAsync(buffer);
  } catch (err) {
    throw new InputError(`${file}: not a readable parquet file (${(err as Error).message})`);
  }
  const present = new Set(parquetSchema(metadata).children.map((c) => c.element.name));
  for (const column of required) {
    if (!present.has(column)) throw new InputError(`${file}: missing column '${column}' (has: ${[...present].join(', ')})`);
  }
  const columns = wanted.filter((c) => present.has(c));
  try {
    return await parquetReadObjects({ file: buffer, metadata, columns, rowFormat: 'object' });
  } catch (err) {
    throw new InputError(`${file}: could not read columns ${columns.join(', ')} (${(err as Error).message})`);
  }
}

/**
 * Load the Harness-1 training queries from a local download: the rows of the chosen stage become
 * tasks, each `document_ids_json` entry a fact. The chunks stay in the corpora (harness1CorpusFiles),
 * which src/corpus reads.
 */
export async function loadHarness1(path: string, options: Harness1Options = {}): Promise<LoadedTasks> {
  const stage = options.stage ?? 'rl';
  const drafts: DraftTask[] = [];
  const stagesSeen = new Set<string>();
  for (const file of harness1TaskFiles(path)) {
    const rows = await readColumns(file, TASK_COLUMNS, TASK_COLUMNS);
    rows.forEach((row, i) => {
      const where = `${file} row ${i + 1}`;
      stagesSeen.add(String(row['stage']));
      if (row['stage'] !== stage) return;
      drafts.push({ where, task: taskFromRow(row, where) });
    });
  }
  if (drafts.length === 0) {
    throw new InputError(`${path}: no rows with stage '${stage}' (stages found: ${[...stagesSeen].join(', ') || 'none'})`);
  }
  return { tasks: finishTasks(drafts), chunks: [], skipped: [] };
}

function taskFromRow(row: Record<string, unknown>, where: string): DraftTask['task'] {
  const id = row['query_id'];
  if ((typeof id !== 'string' && typeof id !== 'number' && typeof id !== 'bigint') || String(id) === '') {
    throw new InputError(`${where}: malformed record (query_id: expected a string or number, got ${JSON.stringify(id ?? null)})`);
  }
  const query = row['query'];
  if (typeof query !== 'string') throw new InputError(`${where}: malformed record (query: expected a string)`);
  let documentIds: unknown;
  try {
    documentIds = JSON.parse(String(row['document_ids_json'] ?? ''));
  } catch (err) {
    throw new InputError(`${where}: document_ids_json is not valid JSON (${(err as Error).message})`);
  }
  const parsed = DocumentIds.safeParse(documentIds);
  if (!parsed.success) throw new InputError(`${where}: malformed document_ids_json (${describeZodError(parsed.error)})`);
  const facts: Fact[] = parsed.data.map((d) => ({
    text: d.fact,
    chunkIds: d.chunk_ids,
    ...(typeof d.is_final_answer === 'boolean' ? { isFinalAnswer: d.is_final_answer } : {}),
  }));
  const answer = row['answer'];
  const meta: Record<string, unknown> = { source: 'harness1' };
  if (typeof row['dataset_name'] === 'string') meta['dataset'] = row['dataset_name'];
  if (typeof row['source'] === 'string') meta['origin'] = row['source'];
  return {
    id: String(id),
    query: query.trim(),
    facts,
    ...(typeof answer === 'string' && answer.trim() !== '' ? { answers: [answer] } : {}),
    meta,
  };
}
