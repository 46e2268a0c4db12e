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
 * support appeared anywhere in the episode's tool results), offform (1 when any call was off-form),
 * and on multi-hop tasks the per-hop parts of hopParts.
 */
export function searchParts(task: Task, rollout: Rollout, beta: number): Record<string, number> {
  const s = scoreSet(task, rollout.curated);
  return {
    recall: s.recall,
    precision: s.precision,
    f1: fBeta(s.precision, s.recall, 1),
    fbeta: fBeta(s.precision, s.recall, beta),
    empty: s.size === 0 ? 1 : 0,
    trajectory_recall: factRecall(task, [...rollout.trajectory, ...rollout.curated]),
    offform: offFormCalls(rollout) > 0 ? 1 : 0,
    ...hopParts(task, rollout.curated, rollout.trajectory),
  };
}

/** Stored parts recomputed for another beta, without the task (the explorer's lab). */
export function searchPartsAtBeta(parts: Record<string, number>, beta: number): Record<string, number> {
  if (typeof parts['precision'] !== 'number' || typeof parts['recall'] !== 'number') return parts;
  return { ...parts, fbeta: fBeta(parts['precision'], parts['recall'], beta) };
}
