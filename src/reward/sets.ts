/**
 * Set scores of a curated set against a task's facts: recall, precision, F-beta. Suites weigh them
 * into reward parts (suites/search/reward.ts); this is the math alone.
 */
import { InputError } from '../errors.js';
import type { Task } from '../tasks/task.js';

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
