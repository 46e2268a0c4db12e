import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// These tests run the built CLI (`npm test` builds first) over the embedded default corpus.
const bin = resolve('bin/sleuth.js');
const root = mkdtempSync(join(tmpdir(), 'sleuth-grep-cli-'));
const idx = join(root, 'idx');
afterAll(() => rmSync(root, { recursive: true, force: true }));

function sleuth(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, error: r.error };
}

describe('sleuth grep', () => {
  beforeAll(() => {
    if (!existsSync(resolve('dist/src/cli/main.js'))) throw new Error('build first: npx tsc -p tsconfig.json');
    const r = sleuth('index', '--out', idx);
    expect(r.status).toBe(0);
  });

  it('finds Corliss Archer case-insensitively (--json)', () => {
    const r = sleuth('grep', '--index', idx, '--json', '(?i)corliss\\s+archer');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { pattern: string; hits: { id: string; title: string; snippet: string }[]; timedOut: boolean };
    expect(out.pattern).toBe('(?i)corliss\\s+archer');
    expect(out.timedOut).toBe(false);
    expect(out.hits.length).toBeGreaterThan(0);
    expect(out.hits.map((h) => h.title)).toContain('Kiss and Tell (1945 film)');
    for (const h of out.hits) expect(h.snippet).toMatch(/corliss\s+archer/i);
  });

  it('prints readable hits and honours -k', () => {
    const r = sleuth('grep', '--index', idx, '-k', '2', 'Shirley Temple');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ 1\. .+ {2}\[[0-9a-f]+\]\n {4}.*Shirley Temple/);
    expect(r.stdout).toMatch(/\n 2\. /);
    expect(r.stdout).not.toMatch(/\n 3\. /);
  });

  it('returns from (a+)+$ (the 2-second bound is the spawn timeout, not an assertion on speed)', () => {
    const r = spawnSync(process.execPath, [bin, 'grep', '--index', idx, '(a+)+$'], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect(r.error).toBeUndefined();
    expect(r.status).toBe(0);
  });

  it('exits 2 naming lookbehind for (?<=a)b', () => {
    const r = sleuth('grep', '--index', idx, '(?<=a)b');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('lookbehind');
    expect(r.stderr).toContain('(?<=a)b');
  });

  it('exits 2 naming the problem for an invalid pattern, a missing pattern, a bad -k', () => {
    const bad = sleuth('grep', '--index', idx, 'a(b');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("invalid regex 'a(b': missing ), unterminated subpattern at position 1");
    const none = sleuth('grep', '--index', idx);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('PATTERN');
    const k = sleuth('grep', '--index', idx, '-k', 'lots', 'x');
    expect(k.status).toBe(2);
    expect(k.stderr).toContain('--k');
  });
});
