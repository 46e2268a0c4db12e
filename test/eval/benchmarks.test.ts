import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** These tests drive the built CLI (dist/): run `npx tsc -p tsconfig.json` first (npm test does). */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'flashrag');
const ROW_SHAPE = '(FlashRAG layout: {id, question, golden_answers, metadata} per line)';
let tmp: string;

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sleuth-benchmarks-'));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** The CLI, with the wiki-18 index kept in this test's own sleuth home. */
function sleuth(args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, SLEUTH_HOME: join(tmp, 'home') } });
}

/** A copy of the fixtures, without the named files or folders. */
function fixturesWithout(name: string, ...left: string[]): string {
  const dir = join(tmp, name);
  cpSync(FIXTURES, dir, { recursive: true });
  for (const l of left) rmSync(join(dir, l), { recursive: true, force: true });
  return dir;
}

/** The table's row of a benchmark, split into its columns. */
function row(stdout: string, benchmark: string): string[] {
  const line = stdout.split('\n').find((l) => l.startsWith(`${benchmark} `));
  expect(line, `no row for ${benchmark} in:\n${stdout}`).toBeDefined();
  return line!.trim().split(/\s{2,}/);
}

describe('sleuth eval --benchmarks', () => {
  it('runs every benchmark of the fixtures, HotpotQA and MuSiQue on the shipped data, in one table and benchmarks.json', () => {
    const out = join(tmp, 'baseline');
    const r = sleuth(['eval', '--benchmarks', FIXTURES, '--agent', 'baseline', '--limit', '2', '--out', out]);
    expect(r.stderr).not.toMatch(/Error/);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('baseline on the QA benchmarks (env qa, temperature 0)');
    // The baseline answers with the top hit's title: right where the answer is the title that ranks first.
    expect(row(r.stdout, 'nq')).toEqual(['nq', join(FIXTURES, 'nq', 'test.jsonl'), '2', '0.500', '0.500', '0.000', '0.000', '1.00']);
    expect(row(r.stdout, 'hotpotqa').slice(0, 3)).toEqual(['hotpotqa', 'shipped default/test (its hotpotqa tasks)', '2']);
    expect(row(r.stdout, 'musique').slice(0, 3)).toEqual(['musique', 'shipped default/test (its musique tasks)', '2']);
    for (const b of ['triviaqa', 'popqa', '2wikimultihopqa', 'bamboogle']) expect(row(r.stdout, b)[1]).toContain(join(FIXTURES, b));
    expect(r.stdout).toMatch(/search-count profile[^\n]*\n {2}nq +1: 2\n/);
    expect(r.stdout).not.toContain('missing');

    const report = JSON.parse(readFileSync(join(out, 'benchmarks.json'), 'utf8'));
    expect(report.benchmarks.map((b: { benchmark: string }) => b.benchmark)).toEqual(['nq', 'triviaqa', 'popqa', 'hotpotqa', '2wikimultihopqa', 'musique', 'bamboogle']);
    expect(report.benchmarks[0]).toMatchObject({ benchmark: 'nq', split: 'test', n: 2, exact_match: 0.5, f1: 0.5, abort_rate: 0, length_clip_ratio: 0, searches_per_episode: 1, search_count_profile: { '1': 2 }, run: join(out, 'nq') });
    expect(report.missing).toEqual([]);
    // Each benchmark's rollouts are a run directory of their own, as the explorer reads them.
    for (const b of report.benchmarks) {
      expect(existsSync(join(b.run, 'rollouts.jsonl'))).toBe(true);
      expect(JSON.parse(readFileSync(join(b.run, 'config.json'), 'utf8'))).toMatchObject({ kind: 'eval', env: 'qa', split: b.split, temperature: 0, limit: 2 });
    }
    // The corpus was indexed once, into the sleuth home, and is reused.
    expect(r.stderr).toContain('eval: indexing');
    const again = sleuth(['eval', '--benchmarks', FIXTURES, '--agent', 'baseline', '--limit', '2', '--out', join(tmp, 'again'), '--json']);
    expect(again.status).toBe(0);
    expect(again.stderr).not.toContain('eval: indexing');
    expect(JSON.parse(again.stdout).benchmarks[0]).toMatchObject({ benchmark: 'nq', exact_match: 0.5 });
  });

  it('scores the oracle right on every question: the corpus and the answers line up', () => {
    const r = sleuth(['eval', '--benchmarks', FIXTURES, '--agent', 'oracle', '--out', join(tmp, 'oracle'), '--json']);
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout);
    for (const b of report.benchmarks.filter((x: { data: string }) => !x.data.startsWith('shipped'))) expect(b).toMatchObject({ exact_match: 1, f1: 1, abort_rate: 0 });
  });

  it('says in one line where an absent benchmark goes', () => {
    const dir = fixturesWithout('no-popqa', 'popqa');
    const r = sleuth(['eval', '--benchmarks', dir, '--agent', 'baseline', '--limit', '1', '--out', join(tmp, 'no-popqa-out')]);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')).toContain(`popqa: missing ${join(dir, 'popqa', 'test.jsonl')} ${ROW_SHAPE}`);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('popqa'))).toHaveLength(1);
    expect(row(r.stdout, 'nq')[2]).toBe('1');
  });

  it('says which corpus is missing when questions are there and no wiki-18 is', () => {
    const dir = fixturesWithout('no-corpus', 'wiki-18.jsonl', 'triviaqa', 'popqa', '2wikimultihopqa', 'bamboogle');
    const r = sleuth(['eval', '--benchmarks', dir, '--agent', 'baseline', '--limit', '1', '--out', join(tmp, 'no-corpus-out')]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`nq: ${join(dir, 'nq', 'test.jsonl')} has 3 questions but ${dir} has no corpus: put wiki-18 at ${join(dir, 'wiki-18.jsonl')}`);
    expect(r.stdout).toContain(`bamboogle: missing ${join(dir, 'bamboogle', 'test.jsonl')} ${ROW_SHAPE}`);
    // The shipped stand-ins still run.
    expect(row(r.stdout, 'hotpotqa')[2]).toBe('1');
  });

  it('exits 2 on a malformed question row, naming the file and the line', () => {
    const dir = fixturesWithout('bad-row');
    const path = join(dir, 'bamboogle', 'test.jsonl');
    writeFileSync(path, readFileSync(path, 'utf8') + '{"id": "x", "question": "No answers?", "golden_answers": []}\n');
    const r = sleuth(['eval', '--benchmarks', dir, '--agent', 'baseline', '--out', join(tmp, 'bad-row-out')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${path} line 3: malformed record (golden_answers`);
  });

  it('never overwrites a benchmarks.json in --out that it did not write (exit 2)', () => {
    const out = join(tmp, 'foreign-out');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'benchmarks.json'), '{"mine": true}\n');
    const r = sleuth(['eval', '--benchmarks', FIXTURES, '--agent', 'baseline', '--limit', '1', '--out', out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${join(out, 'benchmarks.json')} is not a table sleuth eval --benchmarks wrote`);
    expect(readFileSync(join(out, 'benchmarks.json'), 'utf8')).toBe('{"mine": true}\n');
  });

  it('is in eval --help, with the files it looks for', () => {
    const r = sleuth(['eval', '--help']);
    expect(r.stdout).toContain('--benchmarks DIR');
    expect(r.stdout).toContain('2wikimultihopqa/dev.jsonl musique/dev.jsonl bamboogle/test.jsonl');
  });

  it('exits 2 on a malformed corpus line, and refuses --tasks beside --benchmarks', () => {
    const dir = fixturesWithout('bad-corpus');
    writeFileSync(join(dir, 'wiki-18.jsonl'), '{"id": "1", "contents": "\\"T\\"\\ntext"}\n{"id": "2"}\n');
    const r = sleuth(['eval', '--benchmarks', dir, '--agent', 'baseline', '--out', join(tmp, 'bad-corpus-out')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${join(dir, 'wiki-18.jsonl')} line 2: not a FlashRAG passage {id, contents}`);
    const both = sleuth(['eval', '--benchmarks', FIXTURES, '--tasks', 'default', '--agent', 'baseline', '--out', join(tmp, 'both')]);
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('leave --tasks and --split out');
  });
});
