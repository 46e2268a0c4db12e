import { InputError } from '../errors.js';
import type { Qrels } from '../ir/qrels.js';
import type { Task } from './task.js';

/**
 * Qrels of a task set's tasks: the graded judgements a BEIR import keeps in `meta.qrels`, or else
 * every chunk id of every fact at grade 1 (any of a fact's chunks supports it).
 */
export function qrelsOfTasks(tasks: Task[]): Qrels {
  const qrels: Qrels = new Map();
  for (const task of tasks) {
    const graded = gradedJudgements(task);
    const judged = new Map<string, number>(graded ?? task.facts.flatMap((f) => f.chunkIds.map((id) => [id, 1] as const)));
    qrels.set(task.id, judged);
  }
  return qrels;
}

/** The `meta.qrels` of a task imported from BEIR ({doc id: grade}), if it has them. */
export function gradedJudgements(task: Task): [string, number][] | undefined {
  const raw = task.meta?.['qrels'];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const out: [string, number][] = [];
  for (const [doc, grade] of Object.entries(raw)) {
    if (typeof grade !== 'number' || !Number.isInteger(grade)) throw new InputError(`task '${task.id}': meta.qrels['${doc}'] must be a whole number, got ${JSON.stringify(grade)}`);
    out.push([doc, grade]);
  }
  return out;
}
