import { allEqual } from './advantages.js';

/**
 * Dynamic sampling (DAPO): groups whose rollouts all score the same give zero advantages, so they
 * spend compute and carry no gradient.
 *  - off: keep every group (they are still reported);
 *  - filter: drop them, train on the rest (a smaller batch);
 *  - refill: drop them and sample groups for more queries until the batch has `groupsPerStep`
 *    mixed groups, or `rounds` extra rounds were spent, or the queries ran out.
 */
export type DynamicSampling = 'off' | 'filter' | 'refill';

export interface Group<R> {
  /** Index of the query in the data order (for the record). */
  query: number;
  rewards: number[];
  rollouts: R[];
}

export interface BatchResult<R> {
  /** Groups trained on, in the order they were sampled. */
  kept: Group<R>[];
  /** Every group sampled this step (kept or not), for metrics and rollouts.jsonl. */
  sampled: Group<R>[];
  /** Queries taken from the data order this step (more than groupsPerStep when refilling). */
  consumed: number;
  /** Extra rounds sampled to refill the batch. */
  refillRounds: number;
}

/**
 * Build one step's batch. `sample(n)` samples groups for the next n queries of the data order
 * (fewer when they run out) and is called once for the batch, then once per refill round.
 */
export async function collectBatch<R>(
  groupsPerStep: number,
  mode: DynamicSampling,
  rounds: number,
  sample: (n: number) => Promise<Group<R>[]>,
): Promise<BatchResult<R>> {
  const sampled: Group<R>[] = [];
  const first = await sample(groupsPerStep);
  sampled.push(...first);
  let consumed = first.length;
  const mixed = (gs: Group<R>[]) => gs.filter((g) => !allEqual(g.rewards));
  if (mode === 'off') return { kept: first, sampled, consumed, refillRounds: 0 };
  const kept = mixed(first);
  let refillRounds = 0;
  if (mode === 'refill') {
    while (kept.length < groupsPerStep && refillRounds < rounds) {
      const more = await sample(groupsPerStep - kept.length);
      if (more.length === 0) break;
      refillRounds++;
      consumed += more.length;
      sampled.push(...more);
      kept.push(...mixed(more));
    }
  }
  return { kept, sampled, consumed, refillRounds };
}
