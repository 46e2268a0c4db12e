/**
 * The statistics of evaluation: seeded bootstrap intervals (over tasks, the unit that was sampled),
 * paired differences between runs, unbiased pass@k, best-of-N.
 */

import { seededRandom } from '../random.js';

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let s = 0;
  for (const v of values) s += v;
  return s / values.length;
}

export interface Interval {
  mean: number;
  /** Lower and upper bounds of the percentile bootstrap interval. */
  lo: number;
  hi: number;
  /** Number of units (tasks) resampled. */
  n: number;
}

export interface BootstrapOptions {
  /** Resamples (default 2,000; at least 1,000 for a 95% interval worth printing). */
  resamples?: number;
  /** Confidence level (default 0.95). */
  level?: number;
  seed?: number;
}

function quantile(sorted: Float64Array, q: number): number {
  // Linear interpolation between order statistics (numpy's default).
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * Percentile bootstrap interval of the mean. With fewer than two values there is nothing to
 * resample: the interval collapses to the mean (and NaN for no values).
 */
export function bootstrapMean(values: readonly number[], options: BootstrapOptions = {}): Interval {
  const { resamples = 2000, level = 0.95, seed = 0 } = options;
  const n = values.length;
  const m = mean(values);
  if (n < 2) return { mean: m, lo: m, hi: m, n };
  const rand = seededRandom(seed);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += values[Math.floor(rand() * n)]!;
    means[r] = s / n;
  }
  means.sort();
  const tail = (1 - level) / 2;
  return { mean: m, lo: quantile(means, tail), hi: quantile(means, 1 - tail), n };
}

/**
 * Paired bootstrap of mean(b - a) over shared units: both runs' values for a unit move together,
 * so task difficulty cancels. `a` and `b` must be aligned (same unit at the same index).
 */
export function pairedBootstrap(a: readonly number[], b: readonly number[], options: BootstrapOptions = {}): Interval & { shown: boolean } {
  if (a.length !== b.length) throw new Error(`paired bootstrap needs aligned samples, got ${a.length} and ${b.length}`);
  // Equal scores reached by different float paths (a max vs a mean of equal values) differ by
  // ~1e-16; that is not a difference, and must not be "shown" as one.
  const diffs = a.map((x, i) => {
    const d = b[i]! - x;
    return Math.abs(d) < 1e-12 ? 0 : d;
  });
  const ci = bootstrapMean(diffs, options);
  // A difference is shown only when its interval excludes 0; a degenerate interval (n < 2) shows nothing.
  const shown = ci.n >= 2 && (ci.lo > 0 || ci.hi < 0);
  return { ...ci, shown };
}

/**
 * Paired bootstrap of mean(b - a) over a grid of training seeds x tasks: each resample draws seeds
 * and tasks with replacement (the same tasks for every seed drawn), so the interval holds both the
 * spread between training runs and the spread between tasks. a[s][t] and b[s][t] are aligned: seed
 * s, task t. With one seed it is the paired bootstrap over tasks.
 */
export function pairedBootstrapGrid(a: readonly (readonly number[])[], b: readonly (readonly number[])[], options: BootstrapOptions = {}): Interval & { shown: boolean; seeds: number } {
  const { resamples = 2000, level = 0.95, seed = 0 } = options;
  const seeds = a.length;
  if (seeds === 0 || b.length !== seeds) throw new Error(`paired grid bootstrap needs the same seeds on both sides, got ${a.length} and ${b.length}`);
  const tasks = a[0]!.length;
  const diffs = a.map((row, s) => {
    if (row.length !== tasks || b[s]!.length !== tasks) throw new Error(`paired grid bootstrap: seed ${s} has ${row.length} and ${b[s]!.length} tasks, expected ${tasks}`);
    return row.map((x, t) => b[s]![t]! - x);
  });
  const m = mean(diffs.flat());
  const n = seeds * tasks;
  if (tasks < 2) return { mean: m, lo: m, hi: m, n, shown: false, seeds };
  const rand = seededRandom(seed);
  const means = new Float64Array(resamples);
  const pickedTasks = new Int32Array(tasks);
  for (let r = 0; r < resamples; r++) {
    for (let t = 0; t < tasks; t++) pickedTasks[t] = Math.floor(rand() * tasks);
    let sum = 0;
    for (let s = 0; s < seeds; s++) {
      const row = diffs[seeds === 1 ? 0 : Math.floor(rand() * seeds)]!;
      for (let t = 0; t < tasks; t++) sum += row[pickedTasks[t]!]!;
    }
    means[r] = sum / n;
  }
  means.sort();
  const tail = (1 - level) / 2;
  const lo = quantile(means, tail), hi = quantile(means, 1 - tail);
  return { mean: m, lo, hi, n, shown: lo > 0 || hi < 0, seeds };
}

/**
 * Unbiased pass@k from n samples of which c succeeded: the chance that at least one of k samples
 * drawn without replacement succeeds. The product form avoids huge binomials.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 1 || c < 0 || c > n || k < 1 || k > n) {
    throw new Error(`pass@k needs whole numbers with 0 <= c <= n and 1 <= k <= n, got n=${n} c=${c} k=${k}`);
  }
  // Chen et al. (2021): 1 - C(n-c, k) / C(n, k), computed as a running product.
  if (n - c < k) return 1;
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

/** Group values by key, keeping insertion order of keys. */
export function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = out.get(k);
    if (list) list.push(it);
    else out.set(k, [it]);
  }
  return out;
}

/**
 * Best-of-N and best-of-1 per task: the highest score among its samples, and the mean score
 * (the expected value of a single try, which uses every sample rather than just the first).
 */
export function bestOf(scoresByTask: ReadonlyMap<string, readonly number[]>): { tasks: string[]; best: number[]; single: number[] } {
  const tasks: string[] = [];
  const best: number[] = [];
  const single: number[] = [];
  for (const [task, scores] of scoresByTask) {
    if (scores.length === 0) continue;
    tasks.push(task);
    best.push(Math.max(...scores));
    single.push(mean(scores));
  }
  return { tasks, best, single };
}
