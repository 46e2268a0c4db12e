import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLoaded } from '../../bench/load.js';

/** A real bench (the explorer's, on 2,000 rollouts) under a load average given in place of the machine's. */
const BENCH = resolve('dist/bench/explorer.js');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-bench-load-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function bench(load: string, out: string, ...flags: string[]) {
  return spawnSync(process.execPath, [BENCH, '--rollouts', '2000', '--out', out, ...flags], { encoding: 'utf8', env: { ...process.env, SLEUTH_BENCH_LOADAVG: load }, timeout: 120_000 });
}

describe('benchmarks on a busy machine', () => {
  it('count a machine as busy above half its cores', () => {
    expect(isLoaded([1.01, 0, 0], 2)).toBe(true);
    expect(isLoaded([1.0, 9, 9], 2)).toBe(false);
    expect(isLoaded([7.9, 0, 0], 16)).toBe(false);
  });

  it('refuse to run, and write nothing, unless --allow-loaded; then mark the result loaded', () => {
    const out = join(tmp, 'refused.json');
    const refused = bench('3.5,2,1', out);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/^bench:explorer: the machine is busy \(load average 3\.5, 2, 1 on \d+ cores; a quiet machine is at most [\d.]+\), so its timings would mislead: run it when the machine is quiet, or pass --allow-loaded to write results marked "loaded": true\n$/);
    expect(existsSync(out)).toBe(false);

    const allowed = bench('3.5,2,1', out, '--allow-loaded');
    expect(allowed.status).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8')) as { loaded?: boolean; load: { loaded: boolean; load_average_at_start: number[]; wall_s: number; cpu_s: { self: number; children: number | null } } };
    expect(result.loaded).toBe(true);
    expect(result.load.loaded).toBe(true);
    expect(result.load.load_average_at_start).toEqual([3.5, 2, 1]);
    expect(result.load.cpu_s.self).toBeGreaterThan(0);
    expect(result.load.wall_s).toBeGreaterThan(0);
  }, 120_000);

  it('record a quiet run as not loaded, with its CPU time', () => {
    const out = join(tmp, 'quiet.json');
    const quiet = bench('0.2,0.1,0.1', out);
    expect(quiet.status).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8')) as { loaded?: boolean; load: { loaded: boolean; cpu_s: { self: number } } };
    expect(result.loaded).toBeUndefined();
    expect(result.load.loaded).toBe(false);
    expect(result.load.cpu_s.self).toBeGreaterThan(0);
  }, 120_000);
});
