import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { Rollout } from '../agent/rollout.js';
import { appendCheckpoints, readCheckpoints } from './checkpoints.js';
import { readJsonl } from './jsonl.js';
import { runPath } from './layout.js';
import { writeFileAtomic } from '../files/atomic.js';
import { appendMetrics, appendRollouts, sealJsonlTail } from './store.js';

/**
 * A training run's bookkeeping in its run directory (layout.ts): which step it may resume from,
 * what a cut step left behind, which steps were evaluated, and the order in which a finished step
 * is written. The trainer decides what to compute; this module decides how it is kept.
 *
 * A step's rollouts and metrics are appended before its checkpoint record, so after a crash the
 * last checkpoint is the truth: resuming drops the records of later steps and runs them again.
 */

export interface CheckpointRecord {
  step: number;
  /** Weights and optimiser state (saveState). */
  path: string;
  /** Weights for sampling (saveWeightsForSampler). */
  samplerPath: string | null;
  /** Queries of the data order consumed. */
  cursor: number;
  time: string;
}

const isRemote = (path: string) => path.startsWith('tinker://');

/** The last checkpoint of a run directory whose files exist (a resume point), if any. */
export function lastCheckpoint(dir: string): CheckpointRecord | undefined {
  const records = readCheckpoints<CheckpointRecord>(dir);
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    if (typeof r.step === 'number' && typeof r.path === 'string' && (isRemote(r.path) || existsSync(r.path))) return r;
  }
  return undefined;
}

/**
 * Drop records of steps after `step` from a JSONL file (the work of a step that was cut before its
 * checkpoint): rewritten whole through a temporary file and a rename, so a crash here loses nothing.
 */
export function truncateAfterStep(path: string, step: number): number {
  if (!existsSync(path)) return 0;
  sealJsonlTail(path);
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const keep: string[] = [];
  let dropped = 0;
  for (const line of lines) {
    let v: { step?: unknown };
    try {
      v = JSON.parse(line) as { step?: unknown };
    } catch {
      dropped++; // a line cut by the crash
      continue;
    }
    if (typeof v.step === 'number' && v.step > step) dropped++;
    else keep.push(line);
  }
  if (dropped > 0) writeFileAtomic(path, keep.length ? keep.join('\n') + '\n' : '');
  return dropped;
}

/** Make a run directory continue after `step`: the metrics and rollouts of later steps are dropped. */
export function truncateRunAfter(dir: string, step: number): { metrics: number; rollouts: number } {
  return { metrics: truncateAfterStep(runPath(dir, 'metrics'), step), rollouts: truncateAfterStep(runPath(dir, 'rollouts'), step) };
}

/** Steps that have an eval record in metrics.jsonl. */
export function evaluatedSteps(dir: string): Set<number> {
  const { records } = readJsonl<{ step?: number; kind?: string }>(runPath(dir, 'metrics'));
  return new Set(records.filter((r) => r.kind === 'eval' && typeof r.step === 'number').map((r) => r.step!));
}

/**
 * What a step's eval record is taken from: an eval summary (`Summary` of eval/metrics.ts, which sits
 * below runs/ and is not named here) by its plain means, the reward's interval and the end reasons.
 */
export interface EvalNumbers {
  readonly [metric: string]: unknown;
  readonly intervals: Readonly<Record<string, { lo: number; hi: number }>>;
  readonly end_reasons: Readonly<Record<string, number>>;
}

/** The eval numbers that go into metrics.jsonl (plain means; the full summary stays in evals/step-N/). */
export function evalRecord(step: number, summary: EvalNumbers): Record<string, unknown> {
  const keep = ['reward', 'recall', 'precision', 'f1', 'fbeta', 'trajectory_recall', 'exact_match', 'f1_format', 'valid', 'curated_size', 'turns', 'tokens', 'offform_episode_share', 'offform_call_share', 'pass_at_1', 'pass_at_k', 'best_of_n', 'best_of_1', 'tasks', 'rollouts', 'samples'];
  const out: Record<string, unknown> = { step, kind: 'eval' };
  for (const k of keep) if (summary[k] !== undefined) out[k] = summary[k];
  const ci = summary.intervals['reward'];
  if (ci) out['reward_ci'] = [ci.lo, ci.hi];
  out['end_reasons'] = summary.end_reasons;
  return out;
}

/** A finished step's rollouts and its metrics record, before its checkpoint (which makes the step count). */
export function recordStep(dir: string, rollouts: readonly Rollout[], metrics: Record<string, unknown>): void {
  appendRollouts(dir, rollouts);
  appendMetrics(dir, [metrics]);
}

/**
 * Append a checkpoint record. Optimiser state is three times the weights: it is kept for the newest
 * checkpoint only (the records stay, and every step's sampler weights stay for evaluation and the
 * explorer), so the previous checkpoint's state file is removed once the new record is written.
 */
export function recordCheckpoint(dir: string, record: CheckpointRecord, previous: CheckpointRecord | undefined): void {
  appendCheckpoints(dir, [record]);
  if (previous && previous.path !== record.path && !isRemote(previous.path)) rmSync(previous.path, { force: true });
}
