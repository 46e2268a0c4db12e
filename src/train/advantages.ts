/**
 * Group-relative advantages (GRPO). Every rollout of a group answers the same query; its advantage
 * is how much better it did than its group:
 *  - dr-grpo (Dr. GRPO, the default): reward - group mean, no division by the std, so that
 *    groups with small spread are not blown up and the update stays unbiased;
 *  - grpo: (reward - group mean) / (group std + eps), the original GRPO.
 * A group whose rewards are all equal carries no signal: every advantage is 0.
 */
export type AdvantageKind = 'dr-grpo' | 'grpo';

/** Added to the std so that a near-constant group does not divide by ~0. */
export const GRPO_STD_EPS = 1e-6;

/** Spread below this counts as "all equal" (rewards reached by different float paths). */
const EQUAL = 1e-9;

export function groupAdvantages(rewards: readonly number[], kind: AdvantageKind): number[] {
  if (rewards.length === 0) return [];
  const mean = rewards.reduce((s, r) => s + r, 0) / rewards.length;
  if (allEqual(rewards)) return rewards.map(() => 0);
  const centred = rewards.map((r) => r - mean);
  if (kind === 'dr-grpo') return centred;
  // Population std (divide by n), as GRPO implementations do.
  const std = Math.sqrt(centred.reduce((s, d) => s + d * d, 0) / rewards.length);
  return centred.map((d) => d / (std + GRPO_STD_EPS));
}

/** True when the group's rewards do not differ (it would train on nothing). */
export function allEqual(rewards: readonly number[]): boolean {
  if (rewards.length === 0) return true;
  let lo = Infinity, hi = -Infinity;
  for (const r of rewards) {
    lo = Math.min(lo, r);
    hi = Math.max(hi, r);
  }
  return hi - lo <= EQUAL;
}
