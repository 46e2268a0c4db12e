import type { Rollout } from '../agent/rollout.js';
import type { Rubric } from '../reward/rubric.js';
import { scoreRollout, suiteOf } from '../suites/registry.js';
import type { Task } from '../tasks/task.js';
import { allEqual, groupAdvantages, type AdvantageKind } from '../train/advantages.js';

export type { AdvantageKind };

/**
 * The reward-shape lab: a group's rollouts scored again under another rubric (weights, beta) and
 * their group-relative advantages recomputed, without sampling anything. With the run's tasks at
 * hand the rollouts go through scoreRollout itself; without them the stored parts are reweighed
 * (every part is logged even at weight 0, and F-beta is recomputed from precision and recall).
 * Advantages come from the trainer's own function, so the lab shows what training would have used.
 */
export interface LabSettings {
  weights: Record<string, number>;
  beta: number;
  advantage: AdvantageKind;
}

export interface LabRow {
  id: string;
  sample: number;
  reward: number;
  advantage: number;
  parts: Record<string, number>;
  /** As recorded by the run. */
  recordedReward: number | null;
  recordedAdvantage: number | null;
}

export interface LabResult {
  settings: LabSettings;
  /** 'scoreRollout' when the tasks were found, 'stored parts' otherwise. */
  source: 'scoreRollout' | 'stored parts';
  rows: LabRow[];
  /** All rewards equal: the group carries no gradient under these settings. */
  allEqual: boolean;
}

/** `kind`: the suite the rollouts belong to. */
export function rescoreGroup(rollouts: readonly Rollout[], settings: LabSettings, kind: string, tasks: ReadonlyMap<string, Task> | undefined): LabResult {
  const suite = suiteOf(kind);
  const rubric: Rubric = { name: 'lab', kind, weights: settings.weights, beta: { kind: 'constant', beta: settings.beta } };
  const useTasks = tasks !== undefined && rollouts.every((r) => tasks.has(r.taskId));
  const scored = rollouts.map((r) => {
    if (useTasks) {
      const b = scoreRollout(tasks.get(r.taskId)!, r, rubric, r.step ?? 0);
      return { total: b.total, parts: b.parts };
    }
    const stored = { ...(r.reward?.parts ?? {}) };
    const parts = suite.partsAtBeta?.(stored, settings.beta) ?? stored;
    let total = 0;
    for (const [name, w] of Object.entries(settings.weights)) total += w * (parts[name] ?? 0);
    return { total, parts };
  });
  const advantages = groupAdvantages(scored.map((s) => s.total), settings.advantage);
  return {
    settings,
    source: useTasks ? 'scoreRollout' : 'stored parts',
    allEqual: allEqual(scored.map((s) => s.total)),
    rows: rollouts.map((r, i) => ({
      id: r.id,
      sample: r.sample,
      reward: scored[i]!.total,
      advantage: advantages[i]!,
      parts: scored[i]!.parts,
      recordedReward: r.reward?.total ?? null,
      recordedAdvantage: r.advantage ?? null,
    })),
  };
}
