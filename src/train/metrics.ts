import { ownSearches, type Rollout } from '../agent/rollout.js';
import { costUsd, type Price } from '../eval/cost.js';
import { allEqual } from './advantages.js';
import type { Group } from './dynamic.js';

/**
 * The per-step numbers of a GRPO run: train reward (mean and per part),
 * valid share (curated at least one chunk), entropy estimate (mean negative sampler logprob per
 * sampled token, nats), groups all-equal / mixed, curated-set size, turns and tokens per episode,
 * off-form calls (share of calls and of episodes), searches the agent wrote per episode (and the
 * share of episodes with a second one), trajectory vs curated recall, end reasons, cost.
 */
export function rolloutMetrics(groups: readonly Group<Rollout>[], price: Price | undefined): Record<string, unknown> {
  const rollouts = groups.flatMap((g) => g.rollouts);
  const n = rollouts.length || 1;
  const mean = (f: (r: Rollout) => number) => rollouts.reduce((s, r) => s + f(r), 0) / n;
  const parts: Record<string, number> = {};
  const have: Record<string, number> = {};
  for (const r of rollouts) {
    for (const [k, v] of Object.entries(r.reward?.parts ?? {})) {
      parts[k] = (parts[k] ?? 0) + v / n;
      have[k] = (have[k] ?? 0) + 1;
    }
  }
  // A part only some rollouts have (a hop that only longer questions have) is their mean, not diluted by the others.
  for (const k of Object.keys(parts)) if (have[k]! < n) parts[k] = (parts[k]! * n) / have[k]!;
  let sampled = 0, nll = 0, calls = 0, offCalls = 0;
  const endReasons: Record<string, number> = {};
  for (const r of rollouts) {
    for (const t of r.turns) {
      sampled += t.sampledTokens.length;
      for (const lp of t.sampledLogprobs) nll -= lp;
      for (const c of t.calls) {
        calls++;
        if (c.status === 'off_form') offCalls++;
      }
    }
    endReasons[r.endReason] = (endReasons[r.endReason] ?? 0) + 1;
  }
  const equal = groups.filter((g) => allEqual(g.rewards)).length;
  const promptTokens = rollouts.reduce((s, r) => s + r.promptTokens, 0);
  const completionTokens = rollouts.reduce((s, r) => s + r.completionTokens, 0);
  const rewards = rollouts.map((r) => r.reward?.total ?? 0);
  const rewardMean = mean((r) => r.reward?.total ?? 0);
  return {
    reward: rewardMean,
    reward_std: Math.sqrt(rewards.reduce((s, x) => s + (x - rewardMean) ** 2, 0) / n),
    parts,
    valid_share: mean((r) => (new Set(r.curated).size > 0 ? 1 : 0)),
    entropy: sampled ? nll / sampled : 0,
    groups: groups.length,
    groups_all_equal_share: groups.length ? equal / groups.length : 0,
    groups_mixed_share: groups.length ? (groups.length - equal) / groups.length : 0,
    curated_size: mean((r) => new Set(r.curated).size),
    turns: mean((r) => r.turns.length),
    searches_per_episode: mean(ownSearches),
    own_search_share: mean((r) => (ownSearches(r) >= 2 ? 1 : 0)),
    tokens_per_episode: mean((r) => r.promptTokens + r.completionTokens),
    sampled_tokens_per_episode: sampled / n,
    offform_call_share: calls ? offCalls / calls : 0,
    offform_episode_share: mean((r) => (r.turns.some((t) => t.calls.some((c) => c.status === 'off_form')) ? 1 : 0)),
    trajectory_recall: parts['trajectory_recall'] ?? null,
    curated_recall: parts['recall'] ?? null,
    end_reasons: endReasons,
    errors: endReasons['error'] ?? 0,
    rollouts: rollouts.length,
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    sampling_cost_usd: costUsd({ promptTokens, completionTokens }, price),
  };
}

/** Sampling time spent in the sampler vs the environment, summed over the episodes' turns. */
export function samplingSplit(groups: readonly Group<Rollout>[]): { sampleMs: number; envMs: number } {
  let sampleMs = 0, envMs = 0;
  for (const g of groups) for (const r of g.rollouts) for (const t of r.turns) {
    sampleMs += t.sampleMs;
    envMs += t.envMs;
  }
  return { sampleMs, envMs };
}
