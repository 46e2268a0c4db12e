import type { Rollout } from '../agent/rollout.js';

/**
 * Process metrics of answer episodes (the QA benchmarks' table): how often an episode ends without
 * an answer, how often the model's writing was cut, and how many searches episodes make. Pure
 * functions over rollout records; an empty list gives 0 rates and an empty profile.
 */

/**
 * An episode aborted: it ended without an answer, that is for any end reason but `answer`: out of
 * turns (`turns`), a turn cut at the per-turn token limit (`tokens`) or at the context (`context`),
 * a turn with no action and no answer in it (`finish`), or an agent or backend error (`error`).
 * An answer that is wrong, or blank, is not an abort: the episode answered and is scored.
 */
export function aborted(rollout: Pick<Rollout, 'endReason'>): boolean {
  return rollout.endReason !== 'answer';
}

/**
 * Some model turn of the episode was cut at the per-turn token limit or at the context
 * (TurnRecord.cut). Records written before `cut` existed are read by their end reason: `tokens`
 * can only come from a cut turn; `context` there may also be a context filled between turns, so
 * those count only when a turn says so.
 */
export function lengthClipped(rollout: Pick<Rollout, 'endReason' | 'turns'>): boolean {
  return rollout.endReason === 'tokens' || rollout.turns.some((t) => t.cut !== undefined);
}

/** Searches an episode ran: calls of a lookup tool (`search` in qa) that the environment carried out (not refused, e.g. past the search budget). */
export function searchCount(rollout: Pick<Rollout, 'turns'>, lookupTools: ReadonlySet<string>): number {
  let n = 0;
  for (const turn of rollout.turns) for (const call of turn.calls) if (lookupTools.has(call.name) && call.result.outcome === 'ok') n++;
  return n;
}

/** How many episodes made each number of searches: `{"0": 2, "1": 40, "3": 7}`, keys in increasing order. */
export function searchCountProfile(rollouts: readonly Pick<Rollout, 'turns'>[], lookupTools: ReadonlySet<string>): Record<string, number> {
  const counts = new Map<number, number>();
  for (const r of rollouts) {
    const n = searchCount(r, lookupTools);
    counts.set(n, (counts.get(n) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].sort((a, b) => a[0] - b[0]).map(([n, c]) => [String(n), c]));
}

export interface ProcessMetrics {
  episodes: number;
  /** Share of episodes that aborted (see aborted()). */
  abort_rate: number;
  /** Share of episodes with a turn cut at a length limit (see lengthClipped()). */
  length_clip_ratio: number;
  /** Mean searches per episode (see searchCount()). */
  searches_per_episode: number;
  search_count_profile: Record<string, number>;
}

export function processMetrics(rollouts: readonly Pick<Rollout, 'endReason' | 'turns'>[], lookupTools: ReadonlySet<string>): ProcessMetrics {
  const n = rollouts.length;
  const share = (test: (r: Pick<Rollout, 'endReason' | 'turns'>) => boolean) => (n === 0 ? 0 : rollouts.filter(test).length / n);
  return {
    episodes: n,
    abort_rate: share(aborted),
    length_clip_ratio: share(lengthClipped),
    searches_per_episode: n === 0 ? 0 : rollouts.reduce((s, r) => s + searchCount(r, lookupTools), 0) / n,
    search_count_profile: searchCountProfile(rollouts, lookupTools),
  };
}
