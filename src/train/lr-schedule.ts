import { z } from 'zod';

/**
 * The learning rate per optimiser step: a linear warmup from 0 over `warmupSteps`, then constant,
 * linear or cosine decay to `minLrRatio` x the base rate at the last step (the Tinker cookbook's
 * `lr_schedule`; verl's / prime-rl's `warmup_steps` and `min_lr_ratio`).
 */
export const LrScheduleSchema = z
  .object({
    kind: z.enum(['constant', 'linear', 'cosine']).default('constant'),
    warmupSteps: z.number().int().min(0).default(0),
    minLrRatio: z.number().min(0).max(1).default(0),
  })
  .strict();

export type LrSchedule = z.infer<typeof LrScheduleSchema>;

export const CONSTANT_LR: LrSchedule = { kind: 'constant', warmupSteps: 0, minLrRatio: 0 };

/** The rate of optimiser step `step` (1-based) of `totalSteps`. */
export function learningRateAt(base: number, step: number, totalSteps: number, s: LrSchedule): number {
  if (s.warmupSteps > 0 && step <= s.warmupSteps) return (base * step) / s.warmupSteps;
  if (s.kind === 'constant') return base;
  const decaySteps = totalSteps - s.warmupSteps;
  // Progress through the decay: 0 at the first step after warmup, 1 at the last step.
  const progress = decaySteps > 1 ? Math.min(1, (step - s.warmupSteps - 1) / (decaySteps - 1)) : 1;
  const shape = s.kind === 'linear' ? 1 - progress : 0.5 * (1 + Math.cos(Math.PI * progress));
  return base * (s.minLrRatio + (1 - s.minLrRatio) * shape);
}
