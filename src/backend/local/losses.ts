import type { LossConfig, LossFn } from '../types.js';

/**
 * Tinker's per-token losses (TINKER_API.md §9) and their derivative with respect to the learner
 * logprob lp_t, which is all the model's backward pass needs: every loss depends on the weights
 * only through lp_t. Losses are summed over tokens and datums, never averaged (hosted Tinker's
 * reduction); normalise through the weights or advantages if you want a mean.
 *
 * Masking: each token's loss is multiplied by its weight. cross_entropy uses weights as Tinker does;
 * for the RL losses Tinker masks through zero advantages, and with the 0/1 weights of
 * src/backend/types.ts (0 exactly where the advantage is 0) the two agree.
 */
export interface TokenLoss {
  loss: number;
  /** dLoss / dlp. */
  grad: number;
  /** The ratio was clipped (ppo, cispo). */
  clipped: boolean;
}

export interface TokenInputs {
  lp: number;
  weight: number;
  samplerLogprob: number;
  advantage: number;
}

export function clipRange(lossFn: LossFn, config: LossConfig = {}): [number, number] {
  const [lo, hi] = lossFn === 'cispo' ? [0, 4] : [0.8, 1.2];
  return [config.clipLowThreshold ?? lo, config.clipHighThreshold ?? hi];
}

export function tokenLoss(lossFn: LossFn, x: TokenInputs, lo: number, hi: number): TokenLoss {
  const { lp, weight: w } = x;
  if (w === 0) return { loss: 0, grad: 0, clipped: false };
  if (lossFn === 'cross_entropy') return { loss: -w * lp, grad: -w, clipped: false };
  const A = x.advantage;
  const r = Math.exp(lp - x.samplerLogprob);
  switch (lossFn) {
    case 'importance_sampling':
      // L = -r A, dr/dlp = r.
      return { loss: -w * r * A, grad: -w * r * A, clipped: false };
    case 'ppo': {
      // L = -min(r A, clip(r) A). The clipped branch is constant in lp, so it has no gradient.
      const rc = Math.min(Math.max(r, lo), hi);
      const unclipped = r * A, clippedTerm = rc * A;
      if (unclipped <= clippedTerm) return { loss: -w * unclipped, grad: -w * r * A, clipped: false };
      return { loss: -w * clippedTerm, grad: 0, clipped: true };
    }
    case 'cispo': {
      // L = -sg(clip(r)) lp A: the clipped ratio is a constant weight on the logprob's gradient.
      const rc = Math.min(Math.max(r, lo), hi);
      return { loss: -w * rc * lp * A, grad: -w * rc * A, clipped: rc !== r };
    }
    default:
      throw new Error(`unknown loss function '${lossFn as string}'`);
  }
}
