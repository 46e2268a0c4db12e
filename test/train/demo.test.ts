import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** Drives the built CLI (dist/): run `npx tsc -p tsconfig.json` first (npm test does). */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-demo-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('sleuth demo --quick', () => {
  it('runs the whole pipeline: baseline, base model, SFT, GRPO, evals and the paired comparison', () => {
    const dir = join(tmp, 'demo');
    const r = spawnSync(process.execPath, [BIN, 'demo', '--quick', '--json', '--out', dir], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).not.toMatch(/Error:/);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    for (const k of ['baseline', 'base', 'sft', 'grpo']) expect(typeof out[k].reward).toBe('number');
    expect(out.grpo_vs_sft).toMatchObject({ metric: 'reward' });
    for (const k of ['delta', 'ci_low', 'ci_high']) expect(Number.isFinite(out.grpo_vs_sft[k])).toBe(true);
    expect(out.grpo_vs_sft.ci_low).toBeLessThanOrEqual(out.grpo_vs_sft.ci_high);
    // The scripted baseline curates its top 10 hits on every task.
    expect(out.baseline.valid).toBe(1);
    expect(out.sft_data.kept).toBeGreaterThan(0);
    // Every stage left a run directory the explorer and `sleuth compare` can read.
    for (const sub of ['baseline', 'base', 'sft', 'grpo']) expect(existsSync(join(dir, sub, 'config.json'))).toBe(true);
    const metrics = readFileSync(join(dir, 'grpo', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(metrics.filter((m) => m.kind === 'train').map((m) => m.step)).toEqual([1, 2]);
    expect(metrics.some((m) => m.kind === 'eval')).toBe(true);
    // Every agent is reported on test; GRPO's curves are on dev (its evals/), which test never enters.
    expect(out.split).toBe('test');
    for (const k of ['grpo_vs_base', 'grpo_vs_baseline']) expect(out[k]).toMatchObject({ metric: 'reward', tasks: 4, seeds: 1 });
    const config = (sub: string) => JSON.parse(readFileSync(join(dir, sub, 'config.json'), 'utf8'));
    for (const sub of ['baseline', 'base', join('sft', 'test'), join('grpo', 'test')]) expect(config(sub).split).toBe('test');
    expect(config('grpo').evalSplit).toBe('dev');
    const cmp = spawnSync(process.execPath, [BIN, 'compare', join(dir, 'baseline'), join(dir, 'grpo', 'test')], { cwd: ROOT, encoding: 'utf8' });
    expect(cmp.status).toBe(0);
  }, 300_000);

  it('--tasks musique: the best fixed script on dev as the baseline, the hop oracle beside it, per-hop recall of every agent', () => {
    const dir = join(tmp, 'demo-musique');
    const r = spawnSync(process.execPath, [BIN, 'demo', '--quick', '--tasks', 'musique', '--json', '--out', dir], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).not.toMatch(/Error:/);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.best_script).toMatchObject({ split: 'dev' });
    expect(out.best_script.candidates.map((c: { spec: string }) => c.spec)).toContain(out.best_script.spec);
    expect(JSON.parse(readFileSync(join(dir, 'baseline', 'config.json'), 'utf8')).agent).toBe(out.best_script.spec);
    expect(out.oracle.spec).toBe('hop-oracle');
    for (const a of ['baseline', 'base', 'sft', 'grpo', 'oracle']) expect(Object.keys(out.hop_recall[a])).toEqual(expect.arrayContaining(['hop1_recall', 'hop2_recall', 'last_hop_recall', 'last_hop_found']));
    const bad = spawnSync(process.execPath, [BIN, 'demo', '--tasks', 'nope'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--tasks nope');
  }, 300_000);

  it('explains its reward and what --quick checks, and points compare from a training run to its evals (exit 2)', () => {
    const dir = join(tmp, 'demo-text');
    const r = spawnSync(process.execPath, [BIN, 'demo', '--quick', '--out', dir], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('reward = F4 of the curated set - 0.2 when nothing is curated + 0.2 x trajectory recall - 0.1 when any call was off-form (so the scripted baseline can score above 1)');
    expect(r.stdout).toContain('--quick checks that every phase runs, not that anything learns');
    const cmp = spawnSync(process.execPath, [BIN, 'compare', join(dir, 'grpo'), join(dir, 'baseline')], { cwd: ROOT, encoding: 'utf8' });
    expect(cmp.status).toBe(2);
    expect(cmp.stderr).toContain(`run ${join(dir, 'grpo')} is a train run: its rollouts are training samples, not an eval; compare one of its evals: ${join(dir, 'grpo', 'evals', 'step-2')} (the last of 3 in ${join(dir, 'grpo', 'evals')}: step-0, step-1, step-2); ${join(dir, 'grpo', 'test')}`);
    const fromEvals = spawnSync(process.execPath, [BIN, 'compare', join(dir, 'baseline'), join(dir, 'grpo', 'test')], { cwd: ROOT, encoding: 'utf8' });
    expect(fromEvals.status).toBe(0);
  }, 300_000);
});
