import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listeningUrl, tempDir } from './helpers.js';

/**
 * Issue 8's acceptance, small: `sleuth train --backend tinker` against `sleuth serve-tinker`
 * completes GRPO steps through the HTTP API, and `--resume` loads the tinker:// checkpoint.
 * The server serves the local base model (built on first use and cached, as `sleuth train` does);
 * the trainer's compact renderer comes from the tokenizer the server hands out.
 */

const train = (args: string[]) =>
  spawnSync(process.execPath, ['bin/sleuth.js', 'train', ...args], { encoding: 'utf8', timeout: 240_000, env: { ...process.env, SLEUTH_TINKER_FAULTS: '' } });

describe('sleuth train --backend tinker against serve-tinker', () => {
  it('runs GRPO steps through the HTTP API and resumes from a tinker:// checkpoint', async () => {
    const child = spawn(process.execPath, ['bin/sleuth.js', 'serve-tinker', '--port', '0', '--dir', tempDir()], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await listeningUrl(child);
      const out = join(tempDir(), 'run');
      const flags = ['--config', 'configs/local-demo.json', '--backend', 'tinker', '--base-url', url, '--groups-per-step', '2', '--group-size', '2', '--max-turns', '2', '--max-tokens-per-turn', '24', '--eval-limit', '1', '--concurrency', '2'];
      const first = train([...flags, '--steps', '1', '--out', out]);
      expect(first.stderr + first.stdout).toMatch(/done: 1\/1 steps/);
      expect(first.status).toBe(0);
      const resumed = train(['--resume', out, '--steps', '2']);
      expect(resumed.stderr + resumed.stdout).toMatch(/done: 2\/2 steps/);
      const checkpoints = readFileSync(join(out, 'checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { step: number; path: string });
      expect(checkpoints.map((c) => c.step)).toEqual([0, 1, 2]);
      for (const c of checkpoints) expect(c.path).toMatch(/^tinker:\/\/.+\/weights\/step-\d$/);
      const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; step: number; errors?: number; rollouts?: number });
      const steps = metrics.filter((m) => m.kind === 'train');
      expect(steps.map((m) => m.step)).toEqual([1, 2]);
      // Every rollout sampled through the API ran (none ended in an error).
      for (const m of steps) expect([m.rollouts, m.errors]).toEqual([4, 0]);
    } finally {
      child.kill('SIGTERM');
    }
  }, 300_000);
});
