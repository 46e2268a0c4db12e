import { allCalls, type Rollout } from '../../agent/rollout.js';
import { factRecall, fBeta, scoreSet } from '../../reward/sets.js';
import type { Task } from '../../tasks/task.js';

/** The search suite's reward parts: set scores of the curated set, per-hop recall, format. */

/** Number of calls the parser accepted only leniently (e.g. a malformed Harmony header). */
export function offFormCalls(rollout: Rollout): number {
  return allCalls(rollout).filter((c) => c.status === 'off_form').length;
}

/** Most hops a per-hop part is named for (MuSiQue questions have 2 to 4). */
export const MAX_HOPS = 4;

/**
 * Per-hop recall of a multi-hop task (one whose meta.hops says its facts are hops, in order):
 * hopN_recall is 1 when hop N's gold is curated, last_hop_recall the same for the final hop, and
 * last_hop_found 1 when the final hop's gold appeared anywhere in the episode (a result or the
 * set). Empty for other tasks: their facts are not a chain.
 */
export function hopParts(task: Task, curated: Iterable<string>, trajectory: Iterable<string>): Record<string, number> {
  const hops = task.meta?.['hops'];
  if (typeof hops !== 'number' || hops !== task.facts.length) return {};
  const set = new Set(curated);
  const seen = new Set([...trajectory, ...set]);
  const covered = (i: number, ids: Set<string>) => (task.facts[i]!.chunkIds.some((id) => ids.has(id)) ? 1 : 0);
  const parts: Record<string, number> = {};
  for (let i = 0; i < Math.min(hops, MAX_HOPS); i++) parts[`hop${i + 1}_recall`] = covered(i, set);
  parts['last_hop_recall'] = covered(hops - 1, set);
  parts['last_hop_found'] = covered(hops - 1, seen);
  return parts;
}

/**
 * The named parts of a search rollout, every one computed whatever its weight:
 * recall, precision, f1, fbeta, empty (1 when nothing was curated), trajectory_recall (facts whose
 * support appeared anywhere in the episode's tool results), trajectory_recall_if_curated (the same,
 * but 0 when nothing was curated: what the `-traj` rubrics weigh), offform (1 when any call was
 * off-form), and on multi-hop tasks the per-hop parts of hopParts.
 */
export function searchParts(task: Task, rollout: Rollout, beta: number): Record<string, number> {
  const s = scoreSet(task, rollout.curated);
  const trajectoryRecall = factRecall(task, [...rollout.trajectory, ...rollout.curated]);
  return {
    recall: s.recall,
    precision: s.precision,
    f1: fBeta(s.precision, s.recall, 1),
    fbeta: fBeta(s.precision, s.recall, beta),
    empty: s.size === 0 ? 1 : 0,
    trajectory_recall: trajectoryRecall,
    trajectory_recall_if_curated: ifCurated(s.size, trajectoryRecall),
    offform: offFormCalls(rollout) > 0 ? 1 : 0,
    ...hopParts(task, rollout.curated, rollout.trajectory),
  };
}

/**
 * The seed's shaped reward (grpo-search-agent-blog, "Rewarding discovery") is -0.2 for an empty set
 * and F4 + 0.2 x trajectory recall otherwise: the bonus is for a set's episode only, so an empty
 * set that saw every gold chunk still scores the flat -0.2, not -0.2 + 0.2 = 0.
 */
function ifCurated(curatedSize: number, value: number): number {
  return curatedSize === 0 ? 0 : value;
}

/**
 * Stored parts recomputed for another beta, without the task (the explorer's lab); parts that runs
 * from before trajectory_recall_if_curated lack are derived from the ones they logged.
 */
export function searchPartsAtBeta(parts: Record<string, number>, beta: number): Record<string, number> {
  if (typeof parts['precision'] !== 'number' || typeof parts['recall'] !== 'number') return parts;
  const out: Record<string, number> = { ...parts, fbeta: fBeta(parts['precision'], parts['recall'], beta) };
  const { trajectory_recall: seen, empty } = parts;
  if (out['trajectory_recall_if_curated'] === undefined && seen !== undefined && empty !== undefined) out['trajectory_recall_if_curated'] = empty === 1 ? 0 : seen;
  return out;
}
