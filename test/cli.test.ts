import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const run = (...args: string[]) => spawnSync(process.execPath, ['bin/sleuth.js', ...args], { encoding: 'utf8' });

describe('sleuth command', () => {
  it('lists its commands with --help and exits 0', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: sleuth COMMAND');
  });

  it('rejects an unknown command with exit status 2, naming it', () => {
    const r = run('frobnicate');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });
});
