import { z } from 'zod';

/**
 * Beta over training steps: constant, or annealed linearly or along a half cosine from `from` at
 * step 0 to `to` at step `steps`, and held at `to` after. Annealing beta down late in training
 * counters the "curate everything" drift that a recall-heavy F4 invites (as Chroma's Context-1 does).
 */
export const BetaScheduleSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('constant'), beta: z.number().positive() }),
  z.object({ kind: z.enum(['linear', 'cosine']), from: z.number().positive(), to: z.number().positive(), steps: z.number().int().positive() }),
]);
export type BetaSchedule = z.infer<typeof BetaScheduleSchema>;

export function betaAt(schedule: BetaSchedule, step: number): number {
  if (schedule.kind === 'constant') return schedule.beta;
  const t = Math.min(1, Math.max(0, step / schedule.steps));
  const mix = schedule.kind === 'linear' ? t : (1 - Math.cos(Math.PI * t)) / 2;
  return schedule.from + (schedule.to - schedule.from) * mix;
}
