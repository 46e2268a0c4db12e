import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import type { Rollout } from '../agent/rollout.js';
import { InputError } from '../errors.js';
import { checksumOf } from '../files/checksum.js';
import { appendCheckpoints, readCheckpoints, type CheckpointPaths } from './checkpoints.js';
import { readJsonl } from './jsonl.js';
import { RUN_FILES, runPath } from './layout.js';
import { writeFileAtomic } from '../files/atomic.js';
import { appendMetrics, appendRollouts, sealJsonlTail } from './store.js';

/**
 * A training run's bookkeeping in its run directory (layout.ts): which step it may resume from,
 * what a cut step left behind, which steps were evaluated, and the order in which a finished step
 * is written. The trainer decides what to compute; this module decides how it is kept.
 *
 * A step's rollouts and metrics are appended before its checkpoint record, so after a crash the
 * last checkpoint is the truth: resuming drops the records of later steps and runs them again.
 * Each checkpoint record also vouches for the bytes its step appended to rollouts.jsonl and
 * metrics.jsonl (JsonlSegment), so a resume refuses a run whose records before it have changed.
 */

/**
 * Bytes [from, to) of a run's JSONL file and their xxHash32: what a checkpoint adds to the file
 * since the checkpoint before it (`from` is that one's `to`; 0 for the first). Checksumming only
 * the new bytes keeps a checkpoint's cost independent of the run's length; the segments of the
 * chain of checkpoints up to a resume point cover the file's whole prefix.
 */
export interface JsonlSegment {
  from: number;
  to: number;
  xxh32: string;
}

/** The run files a checkpoint's segments cover. */
const VOUCHED = ['rollouts', 'metrics'] as const;
type Vouched = (typeof VOUCHED)[number];

export interface CheckpointRecord {
  step: number;
  /** Weights and optimiser state (saveState). */
  path: string;
  /** Weights for sampling (saveWeightsForSampler). */
  samplerPath: string | null;
  /** Queries of the data order consumed. */
  cursor: number;
  time: string;
  /** File checksums (checkpoints.ts), filled in when the record is written. */
  checksums?: CheckpointPaths['checksums'];
  /** The bytes of rollouts.jsonl and metrics.jsonl since the previous checkpoint; absent in records written before they were kept. */
  jsonl?: Partial<Record<Vouched, JsonlSegment>>;
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

/**
 * Make a run directory continue after `step`: the metrics and rollouts of later steps are dropped,
 * once the records up to its checkpoint are verified (verifyRunFiles): dropping first would hide
 * a damaged line inside them.
 */
export function truncateRunAfter(dir: string, step: number): { metrics: number; rollouts: number } {
  verifyRunFiles(dir, step);
  return { metrics: truncateAfterStep(runPath(dir, 'metrics'), step), rollouts: truncateAfterStep(runPath(dir, 'rollouts'), step) };
}

/** Bytes [from, to) of a file. */
function readRange(fd: number, from: number, to: number): Uint8Array {
  const buf = Buffer.alloc(to - from);
  for (let off = 0; off < buf.length; ) {
    const n = readSync(fd, buf, off, buf.length - off, from + off);
    if (n === 0) break;
    off += n;
  }
  return buf;
}

/** The segments a new checkpoint vouches for: each file's bytes since `after`'s segment (from 0 without one). */
function segmentsSince(dir: string, after: CheckpointRecord | undefined): Partial<Record<Vouched, JsonlSegment>> {
  const out: Partial<Record<Vouched, JsonlSegment>> = {};
  for (const f of VOUCHED) {
    const path = runPath(dir, f);
    const to = existsSync(path) ? statSync(path).size : 0;
    // A file shorter than the previous segment's end was replaced: vouch for all of it.
    const prev = after?.jsonl?.[f]?.to ?? 0;
    const from = prev <= to ? prev : 0;
    const fd = to > from ? openSync(path, 'r') : undefined;
    try {
      out[f] = { from, to, xxh32: checksumOf(fd === undefined ? new Uint8Array(0) : readRange(fd, from, to)) };
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
  return out;
}

/**
 * The chain of checkpoints whose segments make up the prefix `point` vouches for: from `point`
 * back, each one the earlier record of a lower step whose segment ends where the later one's
 * starts. Records of an abandoned branch (steps after an earlier resume point, run again) are not
 * on it.
 */
function chainTo(records: readonly CheckpointRecord[], point: CheckpointRecord): CheckpointRecord[] {
  const chain = [point];
  let at = records.lastIndexOf(point);
  for (let cur = point; ; ) {
    const from = cur.jsonl?.rollouts?.from ?? 0;
    if (from === 0) break;
    let i = at - 1;
    while (i >= 0 && !(records[i]!.step < cur.step && records[i]!.jsonl?.rollouts?.to === from)) i--;
    if (i < 0) break;
    cur = records[i]!;
    at = i;
    chain.unshift(cur);
  }
  return chain;
}

/**
 * Refuse to continue a run whose rollouts.jsonl or metrics.jsonl changed inside the prefix its
 * checkpoints vouch for (a flipped digit in a reward, a line edited or cut): an InputError naming
 * the file, the byte range and the checkpoint that wrote it. Records from before segments were
 * kept are not checked. `step`: the resume point (the last record of that step). Reads the prefix once.
 */
export function verifyRunFiles(dir: string, step: number): void {
  const records = readCheckpoints<CheckpointRecord>(dir);
  const point = records.filter((r) => r.step === step).at(-1);
  if (!point) return;
  const chain = chainTo(records, point);
  for (const f of VOUCHED) {
    const path = runPath(dir, f);
    const segments = chain.flatMap((r) => (r.jsonl?.[f] ? [{ step: r.step, ...r.jsonl[f] }] : []));
    if (!segments.length) continue;
    const size = existsSync(path) ? statSync(path).size : 0;
    const fd = size > 0 ? openSync(path, 'r') : undefined;
    try {
      for (const s of segments) {
        const what = `${path}: bytes ${s.from}-${s.to} (written up to the checkpoint of step ${s.step})`;
        const fix = `restore ${RUN_FILES[f]} from a copy, or start a new run: resuming would train on and report records the run did not write`;
        if (size < s.to) throw new InputError(`${what} are cut: the file has ${size} bytes; ${fix}`);
        const got = checksumOf(fd === undefined ? new Uint8Array(0) : readRange(fd, s.from, s.to));
        if (got !== s.xxh32) throw new InputError(`${what} changed since then (xxh32 ${got}, recorded ${s.xxh32}); ${fix}`);
      }
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
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
 * Append a checkpoint record, with the checksums of its files (appendCheckpoints) and the segments
 * of the run's JSONL files since `after`, the checkpoint it follows (none for a run's first).
 * Returns the record as written.
 */
export function recordCheckpoint(dir: string, record: CheckpointRecord, after: CheckpointRecord | undefined): CheckpointRecord {
  const full: CheckpointRecord = { ...record, jsonl: segmentsSince(dir, after) };
  appendCheckpoints(dir, [full]);
  return full;
}
