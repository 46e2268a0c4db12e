import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The tutorial's settings on the command line: --top-k, --max-searches and --closed-book of the QA environment. Drives the built CLI (dist/). */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sleuth-qa-flags-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sleuth = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, SLEUTH_HOME: join(tmp, 'home') } });
const rollouts = (dir: string) => readFileSync(join(dir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const config = (dir: string) => JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
const searchResults = (rollout: { turns: { calls: { name: string; result: { content: string; chunkIds: string[] } }[] }[] }) => rollout.turns.flatMap((t) => t.calls).filter((c) => c.name === 'search');

describe('eval --env qa: --top-k, --max-searches, --closed-book', () => {
  it('--top-k 1 returns one paragraph per search, and the run records it', () => {
    const out = join(tmp, 'k1');
    const r = sleuth(['eval', '--env', 'qa', '--agent', 'answer:1.1>t1', '--split', 'dev', '--limit', '4', '--top-k', '1', '--out', out]);
    expect(r.status, r.stderr).toBe(0);
    expect(config(out).defaultK).toBe(1);
    for (const rollout of rollouts(out)) for (const s of searchResults(rollout)) expect(s.result.chunkIds.length).toBeLessThanOrEqual(1);
  });

  it('--max-searches 1: a second search ends the episode without an answer', () => {
    const out = join(tmp, 'b1');
    const r = sleuth(['eval', '--env', 'qa', '--agent', 'answer:1.1>t1', '--split', 'dev', '--limit', '4', '--max-searches', '1', '--out', out]);
    expect(r.status, r.stderr).toBe(0);
    expect(config(out).searchBudget).toBe(1);
    const ends = rollouts(out).map((x) => x.endReason);
    // The script follows a span when the top hit shows one: then its second search is past the budget.
    expect(ends.every((e: string) => e === 'budget' || e === 'answer')).toBe(true);
    expect(ends).toContain('budget');
  });

  it('--closed-book offers no search tool and refuses a search; the run records it', () => {
    const out = join(tmp, 'closed');
    const r = sleuth(['eval', '--env', 'qa', '--agent', 'answer:t1', '--split', 'dev', '--limit', '3', '--closed-book', '--out', out]);
    expect(r.status, r.stderr).toBe(0);
    expect(config(out).closedBook).toBe(true);
    for (const rollout of rollouts(out)) {
      expect(rollout.turns[0].calls[0].result.content).toContain('closed-book question: there is no search tool');
      expect(rollout.trajectory).toEqual([]);
    }
  });

  it('refuses bad values naming the flag, and the flags in an environment that has no such setting (exit 2)', () => {
    const cases: [string[], string][] = [
      [['--env', 'qa', '--top-k', '0'], '--top-k'],
      [['--env', 'qa', '--top-k', 'three'], '--top-k'],
      [['--env', 'qa', '--max-searches', '-1'], '--max-searches'],
      [['--env', 'qa', '--max-searches', '2.5'], '--max-searches'],
      [['--env', 'search', '--max-searches', '2'], '--max-searches: --env search does not take it'],
      [['--env', 'search', '--closed-book'], '--closed-book: --env search does not take it'],
      [['--env', 'qa', '--closed-book', '--max-searches', '2'], '--closed-book: there is no search to budget'],
    ];
    for (const [flags, message] of cases) {
      const r = sleuth(['eval', '--agent', 'baseline', '--limit', '1', ...flags, '--out', join(tmp, 'bad')]);
      expect(r.status, `${flags.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});
