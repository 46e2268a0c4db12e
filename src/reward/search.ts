import { InputError } from '../errors.js';
import type { Task } from '../tasks/task.js';
import type { Rollout } from '../agent/rollout.js';

/**
 * Retrieval scores of one curated set against a task's facts.
 * A fact is covered when any of its supporting chunks is in the set; a curated chunk is
 * relevant when it supports any fact. Duplicates in the curated list count once: it is a set.
 * Ids that are in no fact (including ids outside the corpus) are simply irrelevant.
 */
export interface SetScores {
  /** Covered facts / all facts. */
  recall: number;
  /** Relevant curated chunks / curated chunks; 0 for an empty set. */
  precision: number;
  /** Distinct curated chunks. */
  size: number;
  /** Facts covered. */
  covered: number;
}

function factsOf(task: Task): Task['facts'] {
  // The task schema forbids this, but rewards are also called on hand-built tasks: a task without
  // facts has no recall to measure, and a silent 0 or 1 would skew every mean it joins.
  if (task.facts.length === 0) throw new InputError(`task '${task.id}' has no facts: recall and precision are undefined for it`);
  return task.facts;
}

/** Every chunk id that supports some fact of the task. */
export function supportingIds(task: Task): Set<string> {
  return new Set(factsOf(task).flatMap((f) => f.chunkIds));
}

/** Recall of facts whose support is among `ids` (any order, duplicates allowed). */
export function factRecall(task: Task, ids: Iterable<string>): number {
  const facts = factsOf(task);
  const have = new Set(ids);
  const covered = facts.filter((f) => f.chunkIds.some((id) => have.has(id))).length;
  return covered / facts.length;
}

export function scoreSet(task: Task, curated: Iterable<string>): SetScores {
  const facts = factsOf(task);
  const set = new Set(curated);
  const support = supportingIds(task);
  let relevant = 0;
  for (const id of set) if (support.has(id)) relevant++;
  const covered = facts.filter((f) => f.chunkIds.some((id) => set.has(id))).length;
  return {
    recall: covered / facts.length,
    precision: set.size === 0 ? 0 : relevant / set.size,
    size: set.size,
    covered,
  };
}

/**
 * F-beta: (1 + b^2) P R / (b^2 P + R). beta > 1 weighs recall beta^2 times precision
 * (beta 4: sixteen times). 0 when both are 0.
 */
export function fBeta(precision: number, recall: number, beta: number): number {
  if (!(beta > 0) || !Number.isFinite(beta)) throw new InputError(`beta must be a positive number, got ${beta}`);
  const b2 = beta * beta;
  const denom = b2 * precision + recall;
  return denom === 0 ? 0 : ((1 + b2) * precision * recall) / denom;
}

/** Calls of the episode, across turns. */
export function allCalls(rollout: Rollout): Rollout['turns'][number]['calls'] {
  return rollout.turns.flatMap((t) => t.calls);
}

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
