import { z } from 'zod';
import { InputError } from '../errors.js';
import { BetaScheduleSchema } from './schedule.js';

/**
 * A rubric: the suite whose reward parts it weighs (`kind`, a suite of src/suites/) and the weight
 * of each part. The total is the weighted sum; every part is logged, even at weight 0, so a run can
 * be re-read under another rubric. The named rubrics belong to their suites (src/suites/registry.ts).
 */
export const RubricSchema = z.object({
  name: z.string().min(1),
  kind: z.string().min(1),
  weights: z.record(z.string(), z.number()),
  /** F-beta's beta (search), constant or scheduled over training steps. */
  beta: BetaScheduleSchema.default({ kind: 'constant', beta: 4 }),
});
export type Rubric = z.infer<typeof RubricSchema>;
export type RubricInput = z.input<typeof RubricSchema>;

/** A rollout's reward: the weighted total, with every part (even those at weight 0) and its weight. */
export interface RewardBreakdown {
  total: number;
  /** Every part, even those at weight 0. */
  parts: Record<string, number>;
  weights: Record<string, number>;
}

/** F4, constant: the beta of every named rubric. */
export const F4 = { kind: 'constant', beta: 4 } as const;

/** A suite's named rubrics, by name: their weights, all at F4 (suites that take no beta ignore it). */
export function namedRubrics(kind: string, weightsByName: Record<string, Record<string, number>>): Rubric[] {
  return Object.entries(weightsByName).map(([name, weights]) => ({ name, kind, beta: F4, weights }));
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
 * Weigh a rollout's reward parts: the weighted total, with every part and its weight. A rubric that
 * weighs a part the rollout does not have is an error (a typo would silently weigh 0).
 */
export function weighParts(rubric: Rubric, parts: Record<string, number>): RewardBreakdown {
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
