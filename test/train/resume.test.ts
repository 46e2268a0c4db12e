import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** These tests drive the built CLI (dist/): run `npx tsc -p tsconfig.json` first (npm test does). */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-train-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A tiny model and short episodes: the pipeline, not the learning, is under test. */
const TINY = ['--config', 'configs/local-demo.json', '--model', 'base', '--local.d-model', '16', '--local.n-layers', '1', '--local.n-heads', '2', '--local.context', '512',
  '--context-tokens', '512', '--max-turns', '2', '--max-tokens-per-turn', '12', '--groups-per-step', '2', '--group-size', '3', '--eval-limit', '2', '--concurrency', '4'];

function sleuth(args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8' });
}

function records(path: string): any[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).flatMap((l) => {
    try {
      return [JSON.parse(l)];
    } catch {
      return [];
    }
  });
}

const trainSteps = (dir: string) => records(join(dir, 'metrics.jsonl')).filter((m) => m.kind === 'train').map((m) => m.step);

function rolloutsPerStep(dir: string): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of records(join(dir, 'rollouts.jsonl'))) out[r.step] = (out[r.step] ?? 0) + 1;
  return out;
}

describe('sleuth train: resume', () => {
  it('--steps 2 then --resume --steps 4 gives steps 1..4 once each', () => {
    const dir = join(tmp, 'ext');
    const a = sleuth(['train', ...TINY, '--steps', '2', '--out', dir]);
    expect(a.stderr).not.toMatch(/Error:/);
    expect(a.status).toBe(0);
    expect(trainSteps(dir)).toEqual([1, 2]);
    const b = sleuth(['train', '--resume', dir, '--steps', '4']);
    expect(b.status).toBe(0);
    expect(trainSteps(dir)).toEqual([1, 2, 3, 4]);
    expect(rolloutsPerStep(dir)).toEqual({ 1: 6, 2: 6, 3: 6, 4: 6 });
    const ckpts = records(join(dir, 'checkpoints.jsonl'));
    expect(ckpts.map((c) => c.step)).toEqual([0, 1, 2, 3, 4]);
    // Every rollout carries its step, group and advantage; a group's advantages sum to 0.
    const rs = records(join(dir, 'rollouts.jsonl'));
    for (const r of rs) expect(typeof r.advantage).toBe('number');
    const sums = new Map<string, number>();
    for (const r of rs) sums.set(`${r.step}/${r.group}`, (sums.get(`${r.step}/${r.group}`) ?? 0) + r.advantage);
    for (const s of sums.values()) expect(Math.abs(s)).toBeLessThan(1e-9);
    // The resolved config is in the run directory.
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ kind: 'train', backend: 'local', groupSize: 3, groupsPerStep: 2, advantage: 'dr-grpo', budgets: { maxTurns: 2 } });
  }, 240_000);

  it('a run directory moved after a step resumes from its new place', () => {
    const from = join(tmp, 'before-move');
    const to = join(tmp, 'after-move');
    const a = sleuth(['train', ...TINY, '--steps', '1', '--out', from]);
    expect(a.status).toBe(0);
    // checkpoints.jsonl names its files relative to the run directory.
    for (const c of records(join(from, 'checkpoints.jsonl'))) expect(c.path).toMatch(/^checkpoints\//);
    renameSync(from, to);
    const b = sleuth(['train', '--resume', to, '--steps', '2']);
    expect(b.stderr).not.toMatch(/no checkpoint/);
    expect(b.status).toBe(0);
    expect(trainSteps(to)).toEqual([1, 2]);
    expect(records(join(to, 'checkpoints.jsonl')).map((c) => c.step)).toEqual([0, 1, 2]);
  }, 240_000);

  it('a run killed with SIGKILL mid-step resumes with no step lost or repeated', async () => {
    const dir = join(tmp, 'kill');
    const child = spawn(process.execPath, [BIN, 'train', ...TINY, '--steps', '6', '--out', dir], { cwd: ROOT, stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    // Kill as soon as step 2's metrics are written: step 3 is under way.
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 200_000;
      const poll = setInterval(() => {
        if (trainSteps(dir).includes(2)) {
          clearInterval(poll);
          child.kill('SIGKILL');
          resolve();
        } else if (Date.now() > deadline || child.exitCode !== null) {
          clearInterval(poll);
          reject(new Error(`the run ended or stalled before step 2 (exit ${child.exitCode})`));
        }
      }, 20);
    });
    expect(await exited).toBe('SIGKILL');
    const before = trainSteps(dir);
    expect(before.length).toBeLessThan(6);
    const r = sleuth(['train', '--resume', dir]);
    expect(r.stderr).not.toMatch(/Error:/);
    expect(r.status).toBe(0);
    expect(trainSteps(dir)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(rolloutsPerStep(dir)).toEqual({ 1: 6, 2: 6, 3: 6, 4: 6, 5: 6, 6: 6 });
    // The data order continues: 2 queries per step, 12 in all, none sampled twice in a step's place.
    const ckpts = records(join(dir, 'checkpoints.jsonl'));
    expect(ckpts[ckpts.length - 1]).toMatchObject({ step: 6, cursor: 12 });
  }, 300_000);

  it('Ctrl-C (SIGINT) stops after the current step with a checkpoint of it', async () => {
    const dir = join(tmp, 'int');
    const child = spawn(process.execPath, [BIN, 'train', ...TINY, '--steps', '100000', '--out', dir], { cwd: ROOT, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const poll = setInterval(() => {
        if (trainSteps(dir).includes(1)) {
          clearInterval(poll);
          child.kill('SIGINT');
          resolve();
        } else if (child.exitCode !== null) {
          clearInterval(poll);
          reject(new Error('the run ended before step 1'));
        }
      }, 20);
    });
    expect(await exited).toBe(130);
    const steps = trainSteps(dir);
    expect(steps.length).toBeLessThan(100000);
    const ckpts = records(join(dir, 'checkpoints.jsonl'));
    // The last step written is the last step checkpointed: nothing to redo on resume.
    expect(ckpts[ckpts.length - 1].step).toBe(steps[steps.length - 1]);
    // Its path is relative to the run directory.
    expect(existsSync(join(dir, ckpts[ckpts.length - 1].path))).toBe(true);
  }, 300_000);

  it('bad config input is a usage error naming the field', () => {
    const r = sleuth(['train', '--config', 'configs/local-demo.json', '--group-size', 'x', '--out', join(tmp, 'bad')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--group-size must be a whole number/);
    const s = sleuth(['train', '--config', 'configs/local-demo.json', '--advantage', 'ppo', '--out', join(tmp, 'bad')]);
    expect(s.status).toBe(2);
    expect(s.stderr).toMatch(/advantage/);
    const t = sleuth(['train', '--resume', join(tmp, 'nothing-here')]);
    expect(t.status).toBe(2);
    expect(t.stderr).toMatch(/not a run directory/);
  });
});
