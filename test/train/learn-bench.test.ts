import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** Drives the built bench (dist/): `npm test` builds first. */
const ROOT = join(import.meta.dirname, '..', '..');
const BENCH = join(ROOT, 'dist', 'bench', 'learn.js');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-learn-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('bench:learn --plan quick', () => {
  it('runs every seed through baseline, base, SFT and GRPO and writes learn.json with paired intervals over seeds x tasks', () => {
    const out = join(tmp, 'learn.json');
    const r = spawnSync(process.execPath, [BENCH, '--allow-loaded', '--plan', 'quick', '--seeds', '3,4', '--out', out, '--runs', join(tmp, 'runs')], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).not.toMatch(/Error:/);
    expect(r.status).toBe(0);
    const j = JSON.parse(readFileSync(out, 'utf8'));
    expect(j).toMatchObject({ plan: 'quick', split: 'test' });
    expect(j.seeds.map((s: { seed: number }) => s.seed)).toEqual([3, 4]);
    for (const s of j.seeds) {
      expect(s.wall_s).toBeGreaterThan(0);
      for (const agent of ['baseline', 'base', 'sft', 'grpo']) {
        expect(typeof s[agent].reward).toBe('number');
        expect(typeof s[agent].searches_per_episode).toBe('number');
      }
    }
    for (const key of ['grpo_vs_baseline', 'grpo_vs_base', 'grpo_vs_sft']) {
      expect(j[key]).toMatchObject({ metric: 'reward', seeds: 2, tasks: 4 });
      expect(j[key].ci_low).toBeLessThanOrEqual(j[key].delta);
      expect(j[key].delta).toBeLessThanOrEqual(j[key].ci_high);
    }
    // The mean over seeds of GRPO minus baseline is the mean of the per-seed differences.
    const perSeed = j.seeds.map((s: { grpo: { reward: number }; baseline: { reward: number } }) => s.grpo.reward - s.baseline.reward);
    expect(j.grpo_vs_baseline.delta).toBeCloseTo(perSeed.reduce((a: number, b: number) => a + b, 0) / perSeed.length, 9);
    expect(j.own_search_share).toBeGreaterThanOrEqual(0);
    expect(j.own_search_share).toBeLessThanOrEqual(1);
    expect(typeof j.searches_per_episode).toBe('number');
  }, 300_000);

  it('on the MuSiQue set: chooses the best fixed script on dev, reports it, the hop oracle and per-hop recall on test', () => {
    const out = join(tmp, 'learn-musique.json');
    const r = spawnSync(process.execPath, [BENCH, '--allow-loaded', '--plan', 'musique-quick', '--seeds', '0', '--out', out, '--runs', join(tmp, 'runs-musique')], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).not.toMatch(/Error:/);
    expect(r.status).toBe(0);
    const j = JSON.parse(readFileSync(out, 'utf8'));
    expect(j).toMatchObject({ plan: 'musique-quick', split: 'test' });
    // The best script is the candidate with the highest dev reward, and it is the baseline on test.
    const best = j.best_script;
    expect(best.split).toBe('dev');
    expect(best.candidates.map((c: { spec: string }) => c.spec)).toEqual(['baseline', 'hit-text:10,1,5,10']);
    expect(best.reward).toBe(Math.max(...best.candidates.map((c: { reward: number }) => c.reward)));
    expect(j.grpo_vs_best_script).toEqual(j.grpo_vs_baseline);
    expect(j.oracle.spec).toBe('hop-oracle');
    expect(j.oracle.reward).toBeGreaterThan(j.seeds[0].baseline.reward);
    for (const agent of ['baseline', 'base', 'sft', 'grpo', 'oracle']) {
      const h = j.hop_recall[agent];
      for (const key of ['hop1_recall', 'hop2_recall', 'last_hop_recall', 'last_hop_found']) expect(h[key], `${agent} ${key}`).toBeGreaterThanOrEqual(0);
      expect(h.last_hop_found).toBeGreaterThanOrEqual(h.last_hop_recall);
    }
    expect(j.hop_recall.oracle.last_hop_recall).toBeGreaterThan(j.hop_recall.baseline.last_hop_recall - 1e-9);
  }, 300_000);

  it('refuses a bad flag value with exit status 2 and a message naming it', () => {
    const r = spawnSync(process.execPath, [BENCH, '--seeds', '1,x'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--seeds 1,x');
    const p = spawnSync(process.execPath, [BENCH, '--plan', 'huge'], { cwd: ROOT, encoding: 'utf8' });
    expect(p.status).toBe(2);
    expect(p.stderr).toContain('--plan huge');
  });
});
