import { InputError } from '../../errors.js';
import { exactMatch, tokenF1, tokenFBeta } from '../../reward/answers.js';
import type { Rollout } from '../../agent/rollout.js';
import type { Task } from '../../tasks/task.js';

/** The score F1 + format floor gives a well-formed answer whose F1 is 0 (it replaces F1, it is not a bonus). */
export const FORMAT_FLOOR = 0.1;

/**
 * The named parts of a QA rollout. No answer (undefined, or blank) scores 0 on every part.
 * exact_match, f1 (token F1, max over aliases), f1_format (f1, or FORMAT_FLOOR when f1 is 0 for
 * an answer that was given), partial_credit (token F-0.5 against the nearest answer, 1 on an
 * exact match: the rubric weighs it 0.3 next to exact_match), answered (1 when an answer was given).
 */
export function qaParts(answer: string | undefined, answers: readonly string[]): Record<string, number> {
  const given = answer !== undefined && answer.trim() !== '';
  if (!given) return { exact_match: 0, f1: 0, f1_format: 0, partial_credit: 0, answered: 0 };
  const em = exactMatch(answer, answers);
  const f1 = tokenF1(answer, answers);
  return {
    exact_match: em,
    f1,
    f1_format: f1 > 0 ? f1 : FORMAT_FLOOR,
    partial_credit: em === 1 ? 1 : tokenFBeta(answer, answers, 0.5),
    answered: 1,
  };
}

/** The reward parts of a QA rollout against its task's answers; InputError for a task without answers. */
export function qaRewardParts(task: Task, rollout: Pick<Rollout, 'answer'>): Record<string, number> {
  if (!task.answers || task.answers.length === 0) throw new InputError(`task '${task.id}' has no answers: a QA rubric cannot score it`);
  return qaParts(rollout.answer, task.answers);
}
