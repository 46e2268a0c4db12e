import type { Rollout } from '../../agent/rollout.js';
import { InputError } from '../../errors.js';
import { exactMatch } from '../../reward/answers.js';
import { factRecall } from '../../reward/sets.js';
import type { Task } from '../../tasks/task.js';

/**
 * The reward parts of a rollout, every one computed whatever its weight: exact_match (the answer
 * against the task's answers), looked_up (the task's rows the agent looked up), answered.
 */
export function templateParts(task: Task, rollout: Pick<Rollout, 'answer' | 'trajectory'>): Record<string, number> {
  if (!task.answers?.length) throw new InputError(`task '${task.id}' has no answers: env template cannot score it`);
  const answer = rollout.answer?.trim() ?? '';
  return {
    exact_match: answer === '' ? 0 : exactMatch(answer, task.answers),
    looked_up: factRecall(task, rollout.trajectory),
    answered: answer === '' ? 0 : 1,
  };
}

/** Failure buckets, checked in this order: correct (exact match), wrong (answered), no_answer. */
export const TEMPLATE_BUCKETS = ['correct', 'wrong', 'no_answer'] as const;

export function templateBucket(parts: Record<string, number>): (typeof TEMPLATE_BUCKETS)[number] {
  if (parts['exact_match'] === 1) return 'correct';
  return parts['answered'] === 1 ? 'wrong' : 'no_answer';
}
