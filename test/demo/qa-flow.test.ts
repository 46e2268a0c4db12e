import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { QA_ROWS } from '../../src/demo/qa.js';

/** bench:qa's whole flow on a tiny model (--plan qa-quick: checks the pipeline, not the gain). Drives the built bench (dist/). */
const ROOT = join(import.meta.dirname, '..', '..');
const BENCH = join(ROOT, 'dist', 'bench', 'qa.js');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-qa-flow-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const bench = (args: string[]) => spawnSync(process.execPath, [BENCH, '--allow-loaded', '--plan', 'qa-quick', '--seeds', '0', ...args], { cwd: ROOT, encoding: 'utf8' });
const rollouts = (dir: string) => readFileSync(join(dir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
type Call = { name: string; result: { chunkIds: string[]; errorKind?: string } };
const calls = (r: { turns: { calls: Call[] }[] }) => r.turns.flatMap((t) => t.calls);

describe('bench:qa, the tutorial\'s flow', () => {
  it('runs closed book, the best script, base, SFT, GRPO and the ablations on test, and records the test split\'s hash', () => {
    const out = join(tmp, 'qa.json');
    const runs = join(tmp, 'runs');
    const r = bench(['--out', out, '--runs', runs]);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(readFileSync(out, 'utf8'));
    expect(j.split).toBe('test');
    expect(j.test_sha256).toMatch(/^[0-9a-f]{64}$/u);
    expect(r.stderr).toContain(`sha256 ${j.test_sha256}`);
    expect(Object.keys(j.rows)).toEqual([...QA_ROWS]);
    for (const row of QA_ROWS) {
      expect(j.rows[row].exact_match).toBeGreaterThanOrEqual(0);
      expect(j.rows[row].seeds).toHaveLength(1);
      expect(j.rows[row].usd_per_question).toBe(0);
    }
    expect(j.rows.oracle.exact_match).toBe(1);
    for (const name of ['grpo_vs_best_script', 'grpo_vs_closed_book', 'grpo_vs_base', 'top1_vs_grpo', 'budget2_vs_grpo']) {
      expect(j.comparisons[name].exact_match).toMatchObject({ metric: 'exact_match', seeds: 1 });
      expect(j.comparisons[name].exact_match.ci_low).toBeLessThanOrEqual(j.comparisons[name].exact_match.ci_high);
    }
    // Each ablation ran in the environment it names.
    const seed = join(runs, 'seed-0');
    for (const x of rollouts(join(seed, 'closed-book'))) for (const c of calls(x)) expect(c.name === 'search' ? c.result.errorKind : 'ok').toBe(c.name === 'search' ? 'closed_book' : 'ok');
    for (const x of rollouts(join(seed, 'grpo-top1'))) for (const c of calls(x).filter((c) => c.name === 'search')) expect(c.result.chunkIds.length).toBeLessThanOrEqual(1);
    for (const x of rollouts(join(seed, 'grpo-budget2'))) expect(calls(x).filter((c) => c.name === 'search' && !c.result.errorKind).length).toBeLessThanOrEqual(2);
    expect(JSON.parse(readFileSync(join(seed, 'grpo-budget2', 'config.json'), 'utf8')).searchBudget).toBe(2);
    // Every test episode of every row, committed beside the result.
    const episodes = gunzipSync(readFileSync(join(tmp, 'qa-episodes', 'seed-0.jsonl.gz'))).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(new Set(episodes.map((e) => e.row))).toEqual(new Set(QA_ROWS));
    expect(episodes.filter((e) => e.row === 'oracle').every((e) => e.exact_match === 1)).toBe(true);
  }, 300_000);

  it('refuses to overwrite a result whose test split hashed otherwise (exit 2), and bad flags name themselves', () => {
    const out = join(tmp, 'old.json');
    writeFileSync(out, JSON.stringify({ test_sha256: '0'.repeat(64) }));
    const r = bench(['--out', out, '--runs', join(tmp, 'never')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('the test split changed under that result');
    expect(existsSync(join(tmp, 'never'))).toBe(false);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual({ test_sha256: '0'.repeat(64) });
    // A file bench:qa did not write is left as it is.
    for (const [text, message] of [['not json', 'is not JSON'], ['{"mine": true}', 'records no test_sha256']] as const) {
      const foreign = join(tmp, 'foreign.json');
      writeFileSync(foreign, text);
      const r2 = bench(['--out', foreign, '--runs', join(tmp, 'never')]);
      expect(r2.status).toBe(2);
      expect(r2.stderr).toContain(message);
      expect(readFileSync(foreign, 'utf8')).toBe(text);
    }
    for (const [flags, message] of [[['--rubric', 'f4'], '--rubric f4'], [['--rubrics', 'qa-em'], '--rubrics qa-em'], [['--seeds', '0,x'], '--seeds 0,x']] as const) {
      const bad = bench([...flags, '--out', join(tmp, 'bad.json')]);
      expect(bad.status, bad.stderr).toBe(2);
      expect(bad.stderr).toContain(message);
    }
  }, 120_000);
});
