/** Measuring helpers shared by the benchmarks (bench/search.ts, bench/scale.ts; loadNow also bench/local.ts). */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

/** Grep patterns with a literal of 3+ characters (the prefilter narrows the scan), words of the embedded corpus. */
export const GREP_LITERAL = ['Shirley Temple', '(?i)corliss', 'American (comedy|drama) film', '(?i)kiss\\s+and\\s+tell', 'Protocol of the United'];

export const now = () => performance.now();
export const mb = (bytes: number) => bytes / 1e6;
export const round = (x: number | null, digits = 3) => (x === null ? null : Number(x.toFixed(digits)));
export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
export const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

/** The load average now (1, 5, 15 minutes). */
export const loadNow = () => loadavg().map((x) => Number(x.toFixed(2)));
/**
 * The machine a result was measured on, with its load average (1, 5, 15 minutes) when the run
 * started and when it ended: on a shared 2-core VM, whether anything else ran is what tells two
 * measurements of the same code apart.
 */
export function machineOf(loadAtStart: number[]) {
  return { cores: cpus().length, memory_gb: Number((totalmem() / 2 ** 30).toFixed(1)), node: process.version, load_average_at_start: loadAtStart, load_average_at_end: loadNow() };
}

export function dirBytes(path: string): number {
  if (!statSync(path).isDirectory()) return statSync(path).size;
  return readdirSync(path).reduce((s, f) => s + dirBytes(join(path, f)), 0);
}

/** Wall-clock budget for one engine's queries: a slow engine is measured on the queries it finished. */
export const QUERY_BUDGET_MS = 60_000;

/**
 * Run queries one after another, after one warm-up pass over them (at most WARM_MS), the same for
 * every engine; latency stats in ms. The measure is steady-state throughput, what an RL run that
 * queries an index hundreds of thousands of times sees: a just-opened sleuth index reads each
 * term's postings from disk on first use, SQLite fills its page cache, JIT compilers warm up.
 */
export const WARM_MS = 30_000;
export async function timeQueries(queries: string[], run: (q: string) => unknown, measured?: (result: unknown) => void): Promise<{ qps: number; p50_ms: number; p99_ms: number; first_pass_qps: number }> {
  const warm = now();
  let warmed = 0;
  for (const q of queries) {
    await run(q);
    warmed++;
    if (now() - warm > WARM_MS) break;
  }
  // The warm-up pass reads (and checks) the pages the queries need: the cost a cold index pays once.
  const first_pass_qps = warmed / ((now() - warm) / 1000);
  const lat: number[] = [];
  const start = now();
  for (const q of queries) {
    const t = now();
    const result = await run(q);
    lat.push(now() - t);
    measured?.(result);
    if (now() - start > QUERY_BUDGET_MS) break;
  }
  const total = (now() - start) / 1000;
  return { qps: lat.length / total, p50_ms: percentile(lat, 50), p99_ms: percentile(lat, 99), first_pass_qps };
}

/**
 * Write back what earlier runs left dirty in the page cache (`sync`), so that one run's files are
 * not flushed to disk during the next run's timing (seen before this: three back-to-back 1M
 * builds, each writing 1.75 GB, took 24.1, 27.3 and 27.4 s).
 */
export function settleDisk(): void {
  spawnSync('sync', { stdio: 'ignore' });
}

