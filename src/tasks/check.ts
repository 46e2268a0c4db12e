import { InputError } from '../errors.js';
import { describeZodError } from './records.js';
import { TaskSchema, type Task } from './task.js';

/** A task as a loader built it, before the checks every task set gets, with the record it came from. */
export interface DraftTask {
  task: Task;
  where: string;
}

/**
 * The checks every loader's output goes through: a task needs an id, a non-empty query and at
 * least one fact, ids are unique within the set, and the whole task matches the Task schema.
 * Each error names the record the task came from.
 */
export function finishTasks(drafts: DraftTask[]): Task[] {
  const firstSeen = new Map<string, string>();
  return drafts.map(({ task, where }) => {
    const label = task.id ? `task '${task.id}'` : 'task';
    if (typeof task.query !== 'string' || task.query.trim() === '') throw new InputError(`${where}: ${label} has an empty query`);
    if (!Array.isArray(task.facts) || task.facts.length === 0) throw new InputError(`${where}: ${label} has no facts`);
    const parsed = TaskSchema.safeParse(task);
    if (!parsed.success) throw new InputError(`${where}: ${label} is malformed (${describeZodError(parsed.error)})`);
    const earlier = firstSeen.get(parsed.data.id);
    if (earlier !== undefined) throw new InputError(`${where}: duplicate task id '${parsed.data.id}' (first seen at ${earlier})`);
    firstSeen.set(parsed.data.id, where);
    return parsed.data;
  });
}

/** Facts none of whose chunk ids are in the corpus: such a fact can never be covered. */
export interface CoverageReport {
  tasks: number;
  facts: number;
  /** Distinct chunk ids named by facts. */
  chunkIds: number;
  /** Distinct fact chunk ids the corpus lacks. */
  missingChunkIds: number;
  /** Facts whose chunk ids are all absent. */
  uncoverableFacts: number;
  /** A few of them, as "taskId: fact text [ids]". */
  examples: string[];
}

export function coverageReport(tasks: Task[], has: (chunkId: string) => boolean, maxExamples = 5): CoverageReport {
  const named = new Set<string>();
  const missing = new Set<string>();
  let facts = 0;
  let uncoverable = 0;
  const examples: string[] = [];
  for (const task of tasks) {
    for (const fact of task.facts) {
      facts += 1;
      let present = false;
      for (const id of fact.chunkIds) {
        named.add(id);
        if (has(id)) present = true;
        else missing.add(id);
      }
      if (!present) {
        uncoverable += 1;
        if (examples.length < maxExamples) examples.push(`${task.id}: ${truncate(fact.text, 60)} [${fact.chunkIds.join(', ')}]`);
      }
    }
  }
  return { tasks: tasks.length, facts, chunkIds: named.size, missingChunkIds: missing.size, uncoverableFacts: uncoverable, examples };
}

/**
 * Stop the load when some facts cannot be covered by any chunk of the corpus, unless the user said
 * that is fine: such tasks silently cap recall below 1 and make every score look worse than it is.
 */
export function requireCoverage(report: CoverageReport, source: string, allowMissing: boolean): void {
  if (report.uncoverableFacts === 0 || allowMissing) return;
  throw new InputError(
    `${source}: ${report.uncoverableFacts} of ${report.facts} facts have none of their chunk ids in the corpus ` +
      `(${report.missingChunkIds} missing chunk ids), e.g. ${report.examples.join('; ')}. ` +
      'Check that the corpus matches the tasks, or pass --allow-missing to load them anyway.',
  );
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}
