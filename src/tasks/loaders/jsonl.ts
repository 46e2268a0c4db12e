import { z } from 'zod';
import { finishTasks, type DraftTask } from '../check.js';
import { parseRecord, streamRecords } from '../records.js';
import { FactSchema } from '../task.js';
import type { LoadedTasks } from './types.js';

/**
 * A line of the plain task format. Parsed loosely first (an empty query or fact list is allowed
 * here) so that finishTasks can say precisely what is wrong; `split` is optional.
 */
const JsonlTaskRecord = z.object({
  id: z.string().min(1),
  query: z.string(),
  facts: z.array(FactSchema),
  answers: z.array(z.string()).optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
  split: z.string().min(1).optional(),
});

/** Load tasks in sleuth's own format, one JSON object per line (`.jsonl` or `.jsonl.gz`). */
export async function loadJsonlTasks(path: string): Promise<LoadedTasks> {
  const splits = new Map<string, string>();
  const drafts: DraftTask[] = [];
  for await (const record of streamRecords(path)) {
    const { split, ...task } = parseRecord(JsonlTaskRecord, record);
    if (split !== undefined) splits.set(task.id, split);
    drafts.push({ where: record.where, task });
  }
  return { tasks: finishTasks(drafts), chunks: [], skipped: [], splits };
}
