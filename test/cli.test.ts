import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SUITE_KINDS } from '../src/suites/registry.js';

const run = (...args: string[]) => spawnSync(process.execPath, ['bin/sleuth.js', ...args], { encoding: 'utf8' });

describe('sleuth command', () => {
  it('lists its commands with --help and exits 0', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: sleuth COMMAND');
  });

  it('every command --help lists runs, and prints that command\'s usage', () => {
    const names = [...run('--help').stdout.matchAll(/^ {2}([a-z-]+) {2,}\S/gm)].map((m) => m[1]!);
    expect(names).toContain('serve-tinker');
    expect(names.length).toBeGreaterThanOrEqual(16);
    for (const name of names) {
      const r = run(name, '--help');
      expect(r.status, name).toBe(0);
      expect(r.stdout, name).toMatch(new RegExp(`^usage:\\s+sleuth ${name}\\b`));
    }
  });

  it('names every environment wherever a usage line offers --env', () => {
    const names = [...run('--help').stdout.matchAll(/^ {2}([a-z-]+) {2,}\S/gm)].map((m) => m[1]!);
    let offered = 0;
    for (const name of names) {
      const usageLines = run(name, '--help').stdout.split('\n\n')[0]!;
      for (const m of usageLines.matchAll(/\[--env ([^\]]+)\]/g)) {
        offered++;
        expect(m[1]!.split('|'), name).toEqual([...SUITE_KINDS]);
      }
    }
    expect(offered).toBeGreaterThanOrEqual(2);
    expect(SUITE_KINDS).toContain('invoices');
  });

  it('prints all of a large --json document into a pipe before it exits', () => {
    // 465 tasks with their decompositions: several times a pipe's 64 KiB buffer.
    const r = run('tasks', 'show', 'musique', '--json');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(65536);
    expect(JSON.parse(r.stdout)).toHaveLength(465);
  });

  it('rejects an unknown command with exit status 2, naming it', () => {
    const r = run('frobnicate');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });

  it('reads a negative flag value as a value, and names the flag once when it is out of range', () => {
    for (const args of [['index', '--k1', '-3'], ['index', '--k1=-3']]) {
      const r = run(...args);
      expect(r.status).toBe(2);
      expect(r.stderr.trim()).toBe("sleuth index: --k1 must be at least 0, got '-3'");
    }
    for (const args of [['search', '-k', '-1', 'q'], ['search', '-k=-1', 'q'], ['search', '--k', '-1', 'q']]) {
      const r = run(...args);
      expect(r.status).toBe(2);
      expect(r.stderr.trim()).toBe("sleuth search: --k must be a whole number from 1 to 10000, got '-1'");
    }
  });

  it('says which flag lacks a value or is unknown, in one line with the command named once', () => {
    const missing = run('search', '--k');
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim()).toBe('sleuth search: option --k needs a value');
    const flagNext = run('search', '--k', '--json', 'q');
    expect(flagNext.stderr.trim()).toMatch(/^sleuth search: option --k needs a value, and the next argument is a flag/);
    const unknown = run('tasks', 'list', '--frob');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.trim()).toBe("sleuth tasks: unknown option '--frob' (sleuth tasks list --help lists the options)");
  });

  it('headroom documents its own sample default and a run directory that sleuth explore shows', () => {
    const r = run('headroom', '--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/--samples N\s+rollouts per task \(default: 4\)/);
    expect(r.stdout).toContain('(default: runs/headroom-');
    expect(run('eval', '--help').stdout).toMatch(/--samples N\s+rollouts per task \(default: 1\)/);
  });
});
