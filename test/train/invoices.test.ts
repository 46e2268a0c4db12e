import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('sleuth train --env invoices', () => {
  it('runs GRPO steps on the invoice environment with the local preset, scored by the invoice reward', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sleuth-train-inv-')), 'run');
    const r = spawnSync(
      process.execPath,
      ['bin/sleuth.js', 'train', '--env', 'invoices', '--config', 'configs/local-demo.json', '--steps', '2', '--groups-per-step', '2', '--group-size', '2', '--eval-limit', '2', '--out', out],
      { encoding: 'utf8', timeout: 240_000 },
    );
    expect(r.stderr + r.stdout).toMatch(/done: 2\/2 steps/);
    expect(r.status).toBe(0);
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as { env: string; reward: { rubric: string } };
    expect(config.env).toBe('invoices');
    expect(config.reward.rubric).toBe('invoices');
    const steps = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; step: number; reward: number; end_reasons: Record<string, number> }).filter((m) => m.kind === 'train');
    expect(steps.map((m) => m.step)).toEqual([1, 2]);
    // A step that earned nothing says how its episodes ended (issue 33: it printed reward 0.000 and no why).
    for (const m of steps) {
      const line = r.stderr.split('\n').find((l) => l.startsWith(`step ${m.step}/2`))!;
      if (m.reward === 0) expect(line).toMatch(/\(no reward this step: \d+ of 4 episodes (ran out of context|ran out of turns|ran out of tokens in a turn|finished|answered)/);
      else expect(line).not.toContain('no reward');
    }
    const rollouts = readFileSync(join(out, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { env: string; reward: { parts: Record<string, number> } });
    expect(rollouts.length).toBe(2 * 2 * 2);
    for (const ro of rollouts) {
      expect(ro.env).toBe('invoices');
      expect(Object.keys(ro.reward.parts).sort()).toEqual(['answered', 'gold_share', 'pass']);
    }
  }, 300_000);

  it('without --out, writes the run to its own new directory under runs/ (the issue command as written)', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'sleuth-train-inv-cwd-'));
    const r = spawnSync(
      process.execPath,
      [resolve('bin/sleuth.js'), 'train', '--env', 'invoices', '--config', resolve('configs/local-demo.json'), '--steps', '1', '--groups-per-step', '1', '--group-size', '2', '--eval-limit', '1'],
      { encoding: 'utf8', timeout: 240_000, cwd },
    );
    expect(r.status).toBe(0);
    const runs = readdirSync(join(cwd, 'runs'));
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatch(/^train-invoices-/);
    expect(readFileSync(join(cwd, 'runs', runs[0]!, 'metrics.jsonl'), 'utf8')).toContain('"step":1');
  }, 300_000);
});
