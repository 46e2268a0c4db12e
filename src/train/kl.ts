import type { Datum, Sampler } from '../backend/types.js';

/**
 * The KL penalty to a frozen reference model, in the reward (the Tinker cookbook's
 * `kl_penalty_coef`, verl's `use_kl_in_reward`): every model-written token's advantage loses
 * coef x an estimate of KL(sampler || reference) at that token, from the sampler's logprob q and
 * the reference's p (SkyRL's `kl_estimator_type`):
 *   k1 = q - p                       (unbiased, either sign)
 *   k3 = exp(p - q) - 1 - (p - q)    (unbiased, never negative, lower variance)
 */
export type KlEstimator = 'k1' | 'k3';

export function klEstimate(q: number, p: number, estimator: KlEstimator): number {
  if (estimator === 'k1') return q - p;
  const logRatio = p - q;
  return Math.exp(logRatio) - 1 - logRatio;
}

/**
 * Apply the penalty to the datums' advantages in place; returns the mean estimate over the
 * model-written tokens (what the trainer logs as kl_reference). The reference scores each datum's
 * whole sequence (computeLogprobs).
 */
export async function applyKlPenalty(datums: Datum[], reference: Sampler, coef: number, estimator: KlEstimator): Promise<number> {
  let sum = 0, n = 0;
  for (const d of datums) {
    const ref = await reference.computeLogprobs([d.inputTokens[0]!, ...d.targetTokens]);
    d.advantages = d.advantages!.map((a, t) => {
      if (d.weights[t] === 0) return a;
      const k = klEstimate(d.logprobs![t]!, ref[t + 1]!, estimator);
      sum += k;
      n += 1;
      return a - coef * k;
    });
  }
  return n ? sum / n : 0;
}
