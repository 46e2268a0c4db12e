import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../../errors.js';
import { parseRecord, streamRecords } from '../records.js';
import type { Task } from '../task.js';

/**
 * The seven QA benchmarks of the RLVR search-agent papers' table (Search-R1 and after), in
 * FlashRAG's layout (huggingface.co/datasets/RUC-NLPIR/FlashRAG_datasets): a folder per benchmark,
 * a JSONL file per split. The split is the one those papers report: `test` where FlashRAG has one,
 * else `dev` (HotpotQA, 2WikiMultiHopQA and MuSiQue ship no test split there).
 */
export const FLASHRAG_BENCHMARKS = [
  { name: 'nq', split: 'test' },
  { name: 'triviaqa', split: 'test' },
  { name: 'popqa', split: 'test' },
  { name: 'hotpotqa', split: 'dev' },
  { name: '2wikimultihopqa', split: 'dev' },
  { name: 'musique', split: 'dev' },
  { name: 'bamboogle', split: 'test' },
] as const;

export type FlashragBenchmark = (typeof FLASHRAG_BENCHMARKS)[number];

/** What one question row of a FlashRAG file holds (the text of `--help` and of the missing-file line). */
export const FLASHRAG_ROW_SHAPE = '{id, question, golden_answers, metadata} per line';

/** Where a benchmark's question file is under a FlashRAG download: DIR/nq/test.jsonl. */
export function flashragQuestionsPath(dir: string, benchmark: FlashragBenchmark): string {
  return join(dir, benchmark.name, `${benchmark.split}.jsonl`);
}

/** One question row. `metadata` differs per benchmark (supporting facts, types, ...) and is not used. */
const FlashragQuestion = z.object({
  id: z.union([z.string().min(1), z.number().int()]),
  question: z.string().trim().min(1, 'question must not be empty'),
  golden_answers: z.array(z.union([z.string(), z.number()]).transform(String)).min(1, 'golden_answers must hold at least one answer'),
  metadata: z.unknown().optional(),
});

/**
 * The questions of a FlashRAG benchmark file as QA tasks: the question, the golden answers (EM and
 * F1 take the best over them) and `meta.source` = the benchmark. FlashRAG names no gold passages of
 * the corpus, so the tasks carry no facts: they are for environments that score answers only (qa).
 * A malformed row, or an id seen before, is an InputError naming the file and the line.
 */
export async function loadFlashragQuestions(path: string, benchmark: string): Promise<Task[]> {
  const tasks: Task[] = [];
  const firstSeen = new Map<string, string>();
  for await (const record of streamRecords(path)) {
    const row = parseRecord(FlashragQuestion, record);
    const id = String(row.id);
    const earlier = firstSeen.get(id);
    if (earlier !== undefined) throw new InputError(`${record.where}: duplicate id '${id}' (first seen at ${earlier})`);
    firstSeen.set(id, record.where);
    tasks.push({ id, query: row.question, facts: [], answers: row.golden_answers, meta: { source: benchmark } });
  }
  if (tasks.length === 0) throw new InputError(`${path}: no questions (the file is empty)`);
  return tasks;
}
