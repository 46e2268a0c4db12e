import type { Rollout } from '../../agent/rollout.js';
import type { AgentContext } from '../../agent/types.js';
import { InputError } from '../../errors.js';
import type { Task } from '../../tasks/task.js';
import { SEARCH_TOOL } from './tools.js';

/**
 * An opening turn that searches the whole question for its top k hits (TrainConfig.openingSearch):
 * a model too small to copy the question into a query (sleuth's local model) still starts from the
 * question's own results, and learns what to curate and what to search next. The harness writes it
 * (TokenSampling.opening): its tokens are inserted, not sampled.
 */
export function openingSearch(k: number): (ctx: AgentContext) => { name: string; arguments: unknown }[] {
  return (ctx) => [{ name: SEARCH_TOOL.bm25_search, arguments: { query: ctx.task.query, k } }];
}

/** A teacher's first turn must be the opening search the student will be given (SFT with openingSearch k). */
export function checkOpening(teacher: string, task: Task, r: Rollout, k: number): void {
  const first = r.turns[0]?.calls ?? [];
  const args = first[0]?.arguments as { query?: unknown; k?: unknown } | undefined;
  if (first.length !== 1 || first[0]!.name !== SEARCH_TOOL.bm25_search || args?.query !== task.query || args?.k !== k) {
    throw new InputError(`teacher ${teacher}: with openingSearch ${k} the teacher's first turn must be ${SEARCH_TOOL.bm25_search} {query: the question, k: ${k}} (baseline-sweep does this); task ${task.id} opened with ${JSON.stringify(first.map((c) => ({ name: c.name, arguments: c.arguments })))}`);
  }
}
