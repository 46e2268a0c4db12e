import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { checkSplitHash, openRunDir } from '../../src/runs/store.js';
import { readTaskSet, taskSetOf } from '../../src/tasks/registry.js';
import { splitSha256 } from '../../src/tasks/split.js';

/**
 * Runs record the SHA-256 of the tasks they evaluated, and refuse to resume over changed tasks
 * (issue 50, point 2). Drives the built CLI (dist/). A changed task set is simulated by writing
 * another hash into config.json: the check compares the two either way.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-split-hash-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sleuth = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, SLEUTH_HOME: join(tmp, 'home') } });
const configOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
const rewrite = (dir: string, key: string, value: string) => writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...configOf(dir), [key]: value }));
const splitOf = (split: string, limit?: number) => taskSetOf('default', readTaskSet('default').tasks, '').tasks(split).slice(0, limit);
const OTHER = 'f'.repeat(64);

describe("a run's tasks, by hash", () => {
  it('eval records the hash of the tasks it evaluated, resumes over the same, and refuses changed ones (exit 2)', () => {
    const out = join(tmp, 'eval');
    const args = ['eval', '--agent', 'baseline', '--split', 'eval', '--limit', '3', '--out', out];
    expect(sleuth(args).status).toBe(0);
    const sha = splitSha256(splitOf('eval', 3));
    expect(configOf(out).splitSha256).toBe(sha);
    // Without --limit the hash is the one `sleuth tasks` prints for the split.
    const whole = join(tmp, 'eval-whole');
    expect(sleuth(['eval', '--agent', 'baseline', '--split', 'eval', '--out', whole]).status).toBe(0);
    expect(configOf(whole).splitSha256).toBe(splitSha256(splitOf('eval')));
    expect(configOf(whole).splitSha256).toMatch(/^3924cb1f0d30/);
    expect(sleuth(args).status).toBe(0);
    rewrite(out, 'splitSha256', OTHER);
    const r = sleuth(args);
    expect(r.status).toBe(2);
    for (const word of [out, "split 'eval'", OTHER, sha]) expect(r.stderr).toContain(word);
  });

  it('lets a run from before the hash was recorded be resumed', () => {
    const dir = join(tmp, 'old-run');
    openRunDir(dir, { kind: 'eval', split: 'eval' }, []);
    expect(() => checkSplitHash(dir, 'splitSha256', 'eval', 'a'.repeat(64))).not.toThrow();
    rewrite(dir, 'splitSha256', OTHER);
    expect(() => checkSplitHash(dir, 'splitSha256', 'eval', 'a'.repeat(64))).toThrow(InputError);
  });

  it("a training run records its eval split's hash, and --resume refuses changed eval tasks (exit 2)", () => {
    const dir = join(tmp, 'train');
    const tiny = ['--config', 'configs/local-demo.json', '--model', 'base', '--local.d-model', '16', '--local.n-layers', '1', '--local.n-heads', '2', '--local.context', '512',
      '--context-tokens', '512', '--max-turns', '2', '--max-tokens-per-turn', '12', '--groups-per-step', '2', '--group-size', '2', '--eval-limit', '2', '--concurrency', '4'];
    const a = sleuth(['train', ...tiny, '--steps', '1', '--out', dir]);
    expect(a.status, a.stderr).toBe(0);
    const config = configOf(dir);
    const sha = splitSha256(splitOf(config.evalSplit, 2));
    expect(config.evalSplitSha256).toBe(sha);
    rewrite(dir, 'evalSplitSha256', OTHER);
    const b = sleuth(['train', '--resume', dir, '--steps', '2']);
    expect(b.status).toBe(2);
    for (const word of [dir, `split '${config.evalSplit}'`, OTHER, sha]) expect(b.stderr).toContain(word);
  }, 240_000);
});
