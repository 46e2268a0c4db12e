import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const train = (...args: string[]) => spawnSync(process.execPath, ['bin/sleuth.js', 'train', ...args], { encoding: 'utf8', timeout: 60_000 });

describe('sleuth train --dry-run', () => {
  it("estimates the blog post's Qwen3 run in tokens and dollars without running or writing anything", () => {
    const r = train('--config', 'configs/tinker-qwen3.json', '--dry-run', '--json');
    expect(r.status).toBe(0);
    const e = JSON.parse(r.stdout) as { steps: number; episodesPerStep: number; total: { usd: number | null; trainTokens: number } };
    expect(e.steps).toBe(24);
    expect(e.episodesPerStep).toBe(64 * 8);
    expect(e.total.trainTokens).toBeGreaterThan(0);
    expect(e.total.usd).toBeGreaterThan(0);
  });

  it('names a bad config field with exit status 2', () => {
    const r = train('--config', 'configs/tinker-qwen3.json', '--group-size', 'many', '--dry-run');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/group-size|groupSize/);
  });
});
