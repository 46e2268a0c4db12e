import { z } from 'zod';
import { InputError } from '../errors.js';
import type { Task } from '../tasks/task.js';
import type { RewardBreakdown, Rollout } from '../agent/rollout.js';
import { searchParts } from './search.js';
import { qaParts } from './qa.js';
import { invoiceParts } from '../env/invoices/env.js';
import { BetaScheduleSchema, betaAt } from './schedule.js';

/**
 * A rubric: which parts to compute (search or QA) and the weight of each. The total is the weighted
 * sum; every part is logged, even at weight 0, so a run can be re-read under another rubric.
 */
export const RubricSchema = z.object({
  name: z.string().min(1),
  kind: z.enum(['search', 'qa', 'invoices']),
  weights: z.record(z.string(), z.number()),
  /** F-beta's beta (search), constant or scheduled over training steps. */
  beta: BetaScheduleSchema.default({ kind: 'constant', beta: 4 }),
});
export type Rubric = z.infer<typeof RubricSchema>;
export type RubricInput = z.input<typeof RubricSchema>;

const F4 = { kind: 'constant', beta: 4 } as const;

/**
 * Named rubrics. Search: the seeds' reward is F4, with -0.2 flat when nothing was curated (the
 * `empty` part is 1 then and F4 is 0); `-traj` adds +0.2 x trajectory recall; `-format` subtracts
 * 0.1 when any call was off-form. QA: exact match (Search-R1), token F1, F1 with the 0.1 format
 * floor (ReSearch), and exact match + 0.3 x partial credit.
 */
export const RUBRICS: Record<string, Rubric> = {
  f4: { name: 'f4', kind: 'search', beta: F4, weights: { fbeta: 1, empty: -0.2 } },
  'f4-traj': { name: 'f4-traj', kind: 'search', beta: F4, weights: { fbeta: 1, empty: -0.2, trajectory_recall: 0.2 } },
  'f4-format': { name: 'f4-format', kind: 'search', beta: F4, weights: { fbeta: 1, empty: -0.2, offform: -0.1 } },
  'f4-traj-format': { name: 'f4-traj-format', kind: 'search', beta: F4, weights: { fbeta: 1, empty: -0.2, trajectory_recall: 0.2, offform: -0.1 } },
  f1: { name: 'f1', kind: 'search', beta: F4, weights: { f1: 1, empty: -0.2 } },
  'qa-em': { name: 'qa-em', kind: 'qa', beta: F4, weights: { exact_match: 1 } },
  'qa-f1': { name: 'qa-f1', kind: 'qa', beta: F4, weights: { f1: 1 } },
  'qa-f1-format': { name: 'qa-f1-format', kind: 'qa', beta: F4, weights: { f1_format: 1 } },
  'qa-partial': { name: 'qa-partial', kind: 'qa', beta: F4, weights: { exact_match: 1, partial_credit: 0.3 } },
  // Invoices (seed: small language models): the share of gold values in the reply.
  invoices: { name: 'invoices', kind: 'invoices', beta: F4, weights: { gold_share: 1 } },
};

/** The seeds' plain F4 reward (with the empty-set value): what every run there started from. */
export const DEFAULT_RUBRIC: Rubric = RUBRICS['f4']!;
/** F1 + format floor: the QA shape the paper found most stable across seeds. */
export const DEFAULT_QA_RUBRIC: Rubric = RUBRICS['qa-f1-format']!;

export function resolveRubric(name: string): Rubric {
  const r = RUBRICS[name];
  if (!r) throw new InputError(`unknown rubric '${name}' (known: ${Object.keys(RUBRICS).join(', ')})`);
  return r;
}

/** Check a rubric from a config file; the message names the source and the bad field. */
export function parseRubric(value: unknown, source: string): Rubric {
  const r = RubricSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new InputError(`${source}: rubric.${issue.path.join('.')}: ${issue.message}`);
  }
  return r.data;
}

/**
 * Score a rollout: every part of the rubric's kind, the weighted total, the weights. `step`
 * (default: the rollout's own training step, else 0) picks beta from the schedule.
 */
export function scoreRollout(task: Task, rollout: Rollout, rubric: Rubric = DEFAULT_RUBRIC, step?: number): RewardBreakdown {
  const beta = betaAt(rubric.beta, step ?? rollout.step ?? 0);
  let parts: Record<string, number>;
  if (rubric.kind === 'search') {
    parts = searchParts(task, rollout, beta);
  } else if (rubric.kind === 'invoices') {
    parts = invoiceParts(task, rollout);
  } else {
    if (!task.answers || task.answers.length === 0) throw new InputError(`task '${task.id}' has no answers: the QA rubric '${rubric.name}' cannot score it`);
    parts = qaParts(rollout.answer, task.answers);
  }
  for (const name of Object.keys(rubric.weights)) {
    if (!(name in parts)) throw new InputError(`rubric '${rubric.name}' weighs '${name}', which is not a ${rubric.kind} reward part (parts: ${Object.keys(parts).join(', ')})`);
  }
  const weights: Record<string, number> = {};
  let total = 0;
  for (const [name, value] of Object.entries(parts)) {
    const w = rubric.weights[name] ?? 0;
    weights[name] = w;
    total += w * value;
  }
  return { total, parts, weights };
}
