import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** Drives the built CLI (dist/): run `npx tsc -p tsconfig.json` first (npm test does). */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-options-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The shipped model (it earns rewards that differ inside a group), small batches, three tasks in turn. */
const SMALL = ['--config', 'configs/local-demo.json', '--groups-per-step', '2', '--group-size', '4', '--train-limit', '3', '--eval-limit', '1', '--eval-at-start', 'false', '--concurrency', '8'];

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, any>);

describe('sleuth train: trainer options', () => {
  it('lr schedule, ppo epochs x minibatches, KL penalty, staleness, keep-N and the difficulty filter do what they say', () => {
    const dir = join(tmp, 'run');
    const r = spawnSync(process.execPath, [BIN, 'train', ...SMALL, '--steps', '4', '--out', dir, '--loss', 'ppo', '--lr', '0.01', '--lr-schedule', 'linear', '--warmup-steps', '1', '--min-lr-ratio', '0.5',
      '--ppo-epochs', '2', '--minibatches', '2', '--kl-penalty-coef', '0.1', '--kl-estimator', 'k3', '--max-staleness', '1', '--keep-checkpoints', '2', '--difficulty-filter', '1'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).not.toMatch(/Error:/);
    expect(r.status).toBe(0);
    const train = lines(join(dir, 'metrics.jsonl')).filter((m) => m.kind === 'train');
    expect(train.map((m) => m.step)).toEqual([1, 2, 3, 4]);
    // Warmup over step 1, then linear from 0.01 to 0.005 at the last step.
    train.map((m) => m.learning_rate).forEach((lr, i) => expect(lr).toBeCloseTo([0.01, 0.01, 0.0075, 0.005][i]!, 12));
    // Two minibatches (of whole groups) twice over: up to four optimiser steps per step that trained, and
    // from the second on the learner has left the sampler: the ratio moves and ppo clips.
    const rollouts = lines(join(dir, 'rollouts.jsonl'));
    const trainedGroups = (step: number) => new Set(rollouts.filter((x) => x.step === step && x.advantage !== 0).map((x) => x.group)).size;
    for (const m of train) expect(m.updates).toBe(m.datums ? 2 * Math.min(2, trainedGroups(m.step)) : 1);
    expect(train[0]!.datums).toBeGreaterThan(0);
    expect(train[0]!.ratio_mean).not.toBe(1);
    expect(train[0]!.clip_fraction).toBeGreaterThan(0);
    // Batches 1 and 2 were sampled by the starting weights (the reference) themselves: KL exactly 0.
    expect(train[0]!.kl_reference).toBe(0);
    if (train[1]!.datums) expect(train[1]!.kl_reference).toBe(0);
    // Step 1 samples with the starting weights; then each batch is sampled one step behind.
    expect(train.map((m) => m.sampler_staleness)).toEqual([0, 1, 1, 1]);
    for (const m of train) expect(typeof m.tasks_skipped).toBe('number');
    // Keep 2: only the newest two state checkpoints stay; every sampler file stays.
    const files = readdirSync(join(dir, 'checkpoints'));
    expect(files.filter((f) => f.endsWith('.state.ckpt')).sort()).toEqual(['step-3.state.ckpt', 'step-4.state.ckpt']);
    expect(files.filter((f) => /^sampler-\d+\.sampler\.ckpt$/.test(f)).length).toBe(5);
    expect(existsSync(join(dir, 'summary.json'))).toBe(true);
  });

  it('rejects bad option values with the field named', () => {
    const r = spawnSync(process.execPath, [BIN, 'train', ...SMALL, '--steps', '1', '--out', join(tmp, 'bad'), '--lr-schedule', 'exponential'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/lrSchedule\.kind/);
    const k = spawnSync(process.execPath, [BIN, 'train', ...SMALL, '--steps', '1', '--out', join(tmp, 'bad2'), '--kl-estimator', 'k2'], { cwd: ROOT, encoding: 'utf8' });
    expect(k.status).toBe(2);
    expect(k.stderr).toMatch(/klEstimator/);
  });
});
