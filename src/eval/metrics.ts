import type { Rollout } from '../agent/rollout.js';
import { allCalls } from '../reward/search.js';
import { suiteOf } from '../suites/registry.js';

import { costUsd, type Price } from './cost.js';
import { bestOf, bootstrapMean, groupBy, mean, pairedBootstrap, passAtK, type BootstrapOptions, type Interval } from './stats.js';

/**
 * One rollout's numbers under plain names: every reward part, plus the episode's shape.
 * cost_usd is null when the price table lacks a price the rollout needs.
 */
export interface RolloutRow {
  taskId: string;
  sample: number;
  endReason: string;
  bucket: string;
  success: boolean;
  values: Record<string, number>;
  costUsd: number | null;
  calls: number;
  offformCalls: number;
}

/** A rollout must have been scored (rollout.reward) before it becomes a row. */
/** The suite of `kind` decides the row's failure bucket and success, and whether it has a curated set. */
export function rolloutRow(rollout: Rollout, kind: string, price: Price | undefined): RolloutRow {
  const suite = suiteOf(kind);
  if (!rollout.reward) throw new Error(`rollout ${rollout.id} (task ${rollout.taskId}) has not been scored`);
  const parts = rollout.reward.parts;
  const calls = allCalls(rollout);
  const offformCalls = calls.filter((c) => c.status === 'off_form').length;
  const curatedSize = new Set(rollout.curated).size;
  const costUsdValue = costUsd({ promptTokens: rollout.promptTokens, completionTokens: rollout.completionTokens }, price);
  const values: Record<string, number> = {
    reward: rollout.reward.total,
    ...parts,
    // Only an episode that returns a curated set has one to measure.
    ...(suite.result === 'curated set' ? { valid: curatedSize > 0 ? 1 : 0, curated_size: curatedSize } : {}),
    turns: rollout.turns.length,
    tokens: rollout.promptTokens + rollout.completionTokens,
    prompt_tokens: rollout.promptTokens,
    completion_tokens: rollout.completionTokens,
    calls: calls.length,
    offform_episode: offformCalls > 0 ? 1 : 0,
    wall_s: rollout.wallMs / 1000,
  };
  if (costUsdValue !== null) values['cost_usd'] = costUsdValue;
  return { taskId: rollout.taskId, sample: rollout.sample, endReason: rollout.endReason, bucket: suite.bucket(parts, curatedSize), success: suite.success(parts), values, costUsd: costUsdValue, calls: calls.length, offformCalls };
}

/** Per task, the mean of a metric over its samples (tasks are the unit a bootstrap resamples). */
export function taskMeans(rows: readonly RolloutRow[], metric: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const [task, list] of groupBy(rows, (r) => r.taskId)) {
    const vals = list.map((r) => r.values[metric]).filter((v): v is number => v !== undefined);
    if (vals.length > 0) out.set(task, mean(vals));
  }
  return out;
}

export interface Summary {
  /** The suite whose rubric scored the rollouts (its kind). */
  scoring: string;
  tasks: number;
  rollouts: number;
  /** Most samples of any task (the N of best-of-N and the k of pass_at_k). */
  samples: number;
  errors: number;
  /** Means under plain names (reward, recall, precision, f1, fbeta, ...). */
  [metric: string]: unknown;
  intervals: Record<string, Interval>;
  end_reasons: Record<string, number>;
  buckets: Record<string, number>;
}

/** Metrics averaged per rollout (then per task) and shown in the table, in this order when present. */
export const MEAN_METRICS = [
  'reward', 'recall', 'precision', 'f1', 'fbeta', 'trajectory_recall', 'hop1_recall', 'hop2_recall', 'hop3_recall', 'hop4_recall', 'last_hop_recall', 'last_hop_found', 'exact_match', 'f1_format', 'partial_credit', 'gold_share', 'pass', 'answered',
  'valid', 'curated_size', 'turns', 'tokens', 'offform_episode', 'wall_s', 'cost_usd',
] as const;

/**
 * Rows by task id, then sample. Episodes run concurrently and finish in an order that depends on
 * the machine's load, and rollouts.jsonl is in that order: every sum and every bootstrap resample is
 * taken in this order instead, so that the same rollouts give the same numbers to the last digit.
 */
export function canonicalRows<T extends Pick<RolloutRow, 'taskId' | 'sample'>>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : a.sample - b.sample));
}

export function summarize(unordered: readonly RolloutRow[], kind: string, bootstrap: BootstrapOptions = {}): Summary {
  const suite = suiteOf(kind);
  const rows = canonicalRows(unordered);
  const byTask = groupBy(rows, (r) => r.taskId);
  const samples = Math.max(0, ...[...byTask.values()].map((l) => l.length));
  const summary: Summary = {
    scoring: suite.kind,
    tasks: byTask.size,
    rollouts: rows.length,
    samples,
    errors: rows.filter((r) => r.endReason === 'error').length,
    intervals: {},
    end_reasons: {},
    buckets: {},
  };
  for (const metric of MEAN_METRICS) {
    const perTask = taskMeans(rows, metric);
    if (perTask.size === 0) continue;
    const ci = bootstrapMean([...perTask.values()], bootstrap);
    const name = metric === 'offform_episode' ? 'offform_episode_share' : metric === 'cost_usd' ? 'cost_per_question' : metric === 'pass' ? 'pass_rate' : metric;
    summary[name] = ci.mean;
    summary.intervals[name] = ci;
  }
  // Costs are unknown as a whole when any rollout's cost is unknown: a partial sum would understate.
  if (rows.some((r) => r.costUsd === null)) {
    summary['cost_per_question'] = null;
    delete summary.intervals['cost_per_question'];
    summary['total_cost_usd'] = null;
  } else {
    summary['total_cost_usd'] = rows.reduce((s, r) => s + (r.costUsd ?? 0), 0);
  }
  const calls = rows.reduce((s, r) => s + r.calls, 0);
  summary['offform_call_share'] = calls === 0 ? 0 : rows.reduce((s, r) => s + r.offformCalls, 0) / calls;

  for (const r of rows) summary.end_reasons[r.endReason] = (summary.end_reasons[r.endReason] ?? 0) + 1;
  for (const b of suite.buckets) summary.buckets[b] = rows.length === 0 ? 0 : rows.filter((r) => r.bucket === b).length / rows.length;

  if (samples > 0) {
    const passAt = (k: number) => mean([...byTask.values()].map((list) => passAtK(list.length, list.filter((r) => r.success).length, Math.min(k, list.length))));
    summary['pass_at_1'] = passAt(1);
    summary['pass_at_k'] = passAt(samples);
    summary['pass_k'] = samples;
    Object.assign(summary, headroomNumbers(rows, 'reward', bootstrap, 'best_of_n', 'best_of_1'));
    Object.assign(summary, headroomNumbers(rows, 'f1', bootstrap, 'best_of_n_f1', 'best_of_1_f1'));
  }
  // Plain means first, the detail after, so summary.json reads top-down.
  const { intervals, end_reasons, buckets, ...means } = summary;
  return { ...means, end_reasons, buckets, intervals } as Summary;
}

export interface Headroom {
  metric: string;
  tasks: number;
  samples: number;
  bestOfN: Interval;
  bestOf1: Interval;
  /** Paired over tasks: best-of-N minus best-of-1. */
  gain: Interval & { shown: boolean };
}

/** Best-of-N vs best-of-1 (the mean of the samples) on one metric, with intervals over tasks. */
export function headroom(rows: readonly RolloutRow[], metric: string, bootstrap: BootstrapOptions = {}): Headroom | undefined {
  const scores = new Map<string, number[]>();
  for (const r of rows) {
    const v = r.values[metric];
    if (v === undefined) continue;
    const list = scores.get(r.taskId);
    if (list) list.push(v);
    else scores.set(r.taskId, [v]);
  }
  if (scores.size === 0) return undefined;
  const { best, single } = bestOf(scores);
  return {
    metric,
    tasks: best.length,
    samples: Math.max(...[...scores.values()].map((l) => l.length)),
    bestOfN: bootstrapMean(best, bootstrap),
    bestOf1: bootstrapMean(single, bootstrap),
    gain: pairedBootstrap(single, best, bootstrap),
  };
}

function headroomNumbers(rows: readonly RolloutRow[], metric: string, bootstrap: BootstrapOptions, nName: string, oneName: string): Record<string, unknown> {
  const h = headroom(rows, metric, bootstrap);
  return h ? { [nName]: h.bestOfN.mean, [oneName]: h.bestOf1.mean, [`${nName}_gain`]: h.gain.mean } : {};
}
