import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.js';
import { latestRollouts, readRollouts, readRunConfig } from '../runs/store.js';
import type { Price } from './cost.js';
import { suiteOfRun } from '../suites/registry.js';
import { canonicalRows, MEAN_METRICS, rolloutRow, taskMeans, type RolloutRow } from './metrics.js';
import { bootstrapMean, pairedBootstrap, type BootstrapOptions, type Interval } from './stats.js';

/** A run directory's scored rollouts as metric rows. */
export interface RunRows {
  dir: string;
  agent: string;
  /** The suite the run's rollouts belong to. */
  kind: string;
  rows: RolloutRow[];
}

/** A training run's eval folders (evals/step-N, evals/epoch-N), in numeric order. */
function evalStepsOf(dir: string): string[] {
  const evalsDir = join(dir, 'evals');
  if (!existsSync(evalsDir)) return [];
  const number = (name: string) => Number(/(\d+)$/.exec(name)?.[1] ?? Number.NaN);
  return readdirSync(evalsDir).filter((name) => /^(step|epoch)-\d+$/.test(name) && existsSync(join(evalsDir, name, 'rollouts.jsonl'))).sort((a, b) => number(a) - number(b));
}

/**
 * Refuse a training run (sft, train) where an eval is wanted, naming its evals: its own rollouts
 * are training samples on the train split, which share no task with an eval of another split.
 */
export function refuseTrainingRun(dir: string): void {
  const config = readRunConfig(dir);
  if (config['kind'] !== 'eval') {
    // A training run's own rollouts are its training samples (train split): its evals are beside them.
    const steps = evalStepsOf(dir);
    const others = readdirSync(dir).filter((name) => name !== 'evals' && existsSync(join(dir, name, 'rollouts.jsonl')) && existsSync(join(dir, name, 'summary.json')));
    const evals = [...(steps.length ? [`${join(dir, 'evals', steps.at(-1)!)} (the last of ${steps.length} in ${join(dir, 'evals')}: ${steps.join(', ')})`] : []), ...others.map((o) => join(dir, o))];
    if (evals.length) throw new InputError(`run ${dir} is a ${String(config['kind'])} run: its rollouts are training samples, not an eval; compare one of its evals: ${evals.join('; ')}`);
  }
}

/** Read a run's rollouts (the latest record per task and sample) with the kind and price it was run with. */
export function loadRunRows(dir: string): RunRows {
  const config = readRunConfig(dir);
  const price = (config['price'] ?? undefined) as Price | undefined;
  const { rollouts } = readRollouts(dir);
  if (rollouts.length === 0) throw new InputError(`run ${dir}: rollouts.jsonl holds no rollouts`);
  const suite = suiteOfRun(config, rollouts);
  const rows = canonicalRows(
    latestRollouts(rollouts).map((r) => {
      if (!r.reward) throw new InputError(`run ${dir}: rollout ${r.id} has no reward; was it written by sleuth eval?`);
      return rolloutRow(r, suite.kind, price);
    }),
  );
  return { dir, agent: String(config['agent'] ?? rollouts[0]!.agent), kind: suite.kind, rows };
}

export interface RunComparison {
  dir: string;
  agent: string;
  /** Mean over the shared tasks, with a bootstrap interval. */
  values: Record<string, Interval>;
  /** This run minus the first, paired per task (absent for the first run). */
  diffs: Record<string, Interval & { shown: boolean }>;
}

export interface Comparison {
  /** Tasks every run has rollouts for; the comparison uses only these. */
  sharedTasks: string[];
  metrics: string[];
  runs: RunComparison[];
}

/**
 * Compare runs on the tasks they all share: each metric's mean per run, and each run against the
 * first with a paired bootstrap interval over tasks (per-task means, so runs with different sample
 * counts still pair). A difference whose interval holds 0 is not shown to be real.
 */
export function compareRuns(runs: readonly RunRows[], bootstrap: BootstrapOptions = {}): Comparison {
  if (runs.length < 2) throw new InputError('compare needs at least two run directories');
  const taskSets = runs.map((r) => new Set(r.rows.map((row) => row.taskId)));
  const sharedTasks = [...taskSets[0]!].filter((t) => taskSets.every((s) => s.has(t))).sort();
  if (sharedTasks.length === 0) throw new InputError(`the runs share no task: ${runs.map((r) => r.dir).join(', ')}`);
  const metrics: string[] = MEAN_METRICS.filter((m) => runs.every((r) => r.rows.some((row) => row.values[m] !== undefined)));
  const perRun = runs.map((run) => new Map(metrics.map((m) => [m, taskMeans(run.rows, m)])));
  const aligned = (i: number, m: string) => sharedTasks.map((t) => perRun[i]!.get(m)!.get(t) ?? Number.NaN);
  // Only tasks where every run has a value for this metric take part in its numbers.
  const complete = (m: string) => sharedTasks.map((_, j) => runs.every((__, i) => !Number.isNaN(aligned(i, m)[j]!)));
  const out: RunComparison[] = runs.map((run, i) => {
    const values: Record<string, Interval> = {};
    const diffs: Record<string, Interval & { shown: boolean }> = {};
    for (const m of metrics) {
      const keep = complete(m);
      const mine = aligned(i, m).filter((_, j) => keep[j]);
      values[m] = bootstrapMean(mine, bootstrap);
      if (i > 0) diffs[m] = pairedBootstrap(aligned(0, m).filter((_, j) => keep[j]), mine, bootstrap);
    }
    return { dir: run.dir, agent: run.agent, values, diffs };
  });
  return { sharedTasks, metrics, runs: out };
}
