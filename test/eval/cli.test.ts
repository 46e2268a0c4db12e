import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatServer, completion } from './chat-server.js';
import { command as evalCommand } from '../../src/cli/commands/eval.js';
import { command as compareCommand } from '../../src/cli/commands/compare.js';
import { compareRuns, loadRunRows } from '../../src/eval/compare.js';

/** These tests drive the built CLI (dist/): run `npx tsc -p tsconfig.json` first (npm test does). */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
let tmp: string;

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sleuth-eval-'));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function sleuth(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } });
}

/** Run the CLI without blocking this process (the chat server answers from here). */
function sleuthAsync(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

function lines(path: string): any[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return []; // a line cut by the kill
      }
    });
}

describe('sleuth eval, compare, headroom', () => {
  it('evaluates baseline and oracle, and compares them with paired intervals', () => {
    const base = join(tmp, 'base');
    const oracle = join(tmp, 'oracle');
    const a = sleuth(['eval', '--agent', 'baseline', '--tasks', 'default', '--split', 'eval', '--limit', '12', '--samples', '2', '--out', base]);
    expect(a.stderr).not.toMatch(/Error/);
    expect(a.status).toBe(0);
    expect(a.stdout).toMatch(/recall\s+0\.\d{3}\s+\[/);
    expect(a.stdout).toContain('end reasons: finish 24');
    const b = sleuth(['eval', '--agent', 'oracle', '--tasks', 'default', '--split', 'eval', '--limit', '12', '--samples', '2', '--out', oracle, '--json']);
    expect(b.status).toBe(0);
    const summary = JSON.parse(b.stdout);
    expect(summary).toMatchObject({ tasks: 12, rollouts: 24, samples: 2, errors: 0, recall: 1, valid: 1, pass_at_1: 1 });
    for (const key of ['reward', 'precision', 'f1', 'fbeta', 'trajectory_recall', 'curated_size', 'turns', 'tokens', 'offform_call_share', 'offform_episode_share', 'pass_at_k', 'best_of_n', 'cost_per_question', 'wall_s']) {
      expect(summary, key).toHaveProperty(key);
    }
    const baseSummary = JSON.parse(readFileSync(join(base, 'summary.json'), 'utf8'));
    expect(baseSummary.recall).toBeGreaterThan(0);
    expect(baseSummary.recall).toBeLessThan(1);
    expect(lines(join(base, 'rollouts.jsonl'))).toHaveLength(24);
    expect(JSON.parse(readFileSync(join(base, 'config.json'), 'utf8'))).toMatchObject({ kind: 'eval', agent: 'baseline', samples: 2, limit: 12 });

    const c = sleuth(['compare', base, oracle]);
    expect(c.status).toBe(0);
    expect(c.stdout).toContain('12 shared tasks');
    // precision rises from about 0.2 to 1: shown; valid is 1 in both: n.s.
    expect(c.stdout).toMatch(/precision.*\+0\.\d{3} +\[0\.\d{3}, 0\.\d{3}\]\n/);
    expect(c.stdout).toMatch(/valid.*n\.s\./);
    // A narrow terminal gets the same numbers stacked per metric, every line within its width.
    const narrow = sleuth(['compare', base, oracle], { COLUMNS: '70' });
    expect(narrow.status).toBe(0);
    expect(Math.max(...narrow.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(70);
    expect(narrow.stdout).toMatch(/\nprecision\n {2}base +0\.\d{3} +\[.*\]\n {2}oracle +1\.000 +\[1\.000, 1\.000\] +\+0\.\d{3} +\[/);
    const cj = compareRuns([loadRunRows(base), loadRunRows(oracle)]);
    expect(cj.sharedTasks).toHaveLength(12);
    expect(cj.runs[1].diffs.precision.shown).toBe(true);
    expect(cj.runs[1].diffs.precision.lo).toBeGreaterThan(0);
    expect(cj.runs[1].diffs.valid.shown).toBe(false);

    const h = sleuth(['headroom', '--agent', 'baseline', '--tasks', 'default', '--split', 'eval', '--limit', '5', '--samples', '3', '--out', join(tmp, 'head')]);
    expect(h.status).toBe(0);
    expect(h.stdout).toMatch(/best-of-3 vs best-of-1 over 5 tasks/);
    expect(h.stdout).toContain('best-of-N equals best-of-1');
  });

  it('answers searches in worker threads with --search-workers: the same rollouts, and the process exits', () => {
    const args = ['eval', '--agent', 'baseline', '--tasks', 'default', '--split', 'eval', '--limit', '12', '--samples', '2', '--json'];
    const inThread = sleuth([...args, '--out', join(tmp, 'in-thread')]);
    const pooled = sleuth([...args, '--search-workers', '2', '--out', join(tmp, 'pooled')]);
    expect(pooled.stderr).not.toMatch(/Error/);
    expect(pooled.status).toBe(0);
    const [a, b] = [JSON.parse(inThread.stdout), JSON.parse(pooled.stdout)];
    for (const key of ['rollouts', 'errors', 'reward', 'recall', 'precision', 'f1', 'fbeta', 'trajectory_recall', 'curated_size', 'turns']) expect(b[key], key).toEqual(a[key]);
    const curated = (dir: string) => lines(join(dir, 'rollouts.jsonl')).map((r) => JSON.stringify([r.taskId, r.sample, r.turns.map((t: any) => t.curated)])).sort();
    expect(curated(join(tmp, 'pooled'))).toEqual(curated(join(tmp, 'in-thread')));
    expect(JSON.parse(readFileSync(join(tmp, 'pooled', 'config.json'), 'utf8'))).toMatchObject({ searchWorkers: 2 });
    // Bad input is refused before any worker starts (a started pool would keep the process alive).
    const bad = sleuth(['eval', '--agent', 'no-such-agent', '--limit', '2', '--search-workers', '2', '--out', join(tmp, 'bad-agent')]);
    expect(bad.status).toBe(2);
    expect(sleuth(['eval', '--agent', 'baseline', '--search-workers=-1', '--out', join(tmp, 'bad-n')]).stderr).toMatch(/--search-workers must be a whole number from 0/);
    expect(sleuth(['eval', '--agent', 'baseline', '--env', 'invoices', '--search-workers', '2', '--out', join(tmp, 'bad-env')]).stderr).toMatch(/--search-workers is for environments with a search index \(env invoices has none\)/);
  });

  it('names the invoice emails as the task set in the eval header, and refuses --tasks there', () => {
    const r = sleuth(['eval', '--env', 'invoices', '--agent', 'oracle', '--split', 'validation', '--limit', '5', '--out', join(tmp, 'inv')]);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(`oracle on invoices/validation -> ${join(tmp, 'inv')}`);
    expect(r.stdout).toMatch(/\npass rate +1\.000 +\[1\.000, 1\.000\]\n/);
    const wrong = sleuth(['eval', '--env', 'invoices', '--tasks', 'default', '--agent', 'oracle', '--out', join(tmp, 'inv-tasks')]);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('--tasks default: --env invoices has its own tasks');
  });

  it('scores the QA variant by its answers: the oracle is always correct', async () => {
    const dir = join(tmp, 'qa');
    const log = console.log;
    console.log = () => {}; // the table; the summary file is what this test reads
    try {
      expect(await evalCommand.run(['--agent', 'oracle', '--env', 'qa', '--limit', '3', '--out', dir])).toBe(0);
    } finally {
      console.log = log;
    }
    const s = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
    expect(s).toMatchObject({ scoring: 'qa', rubric: 'qa-f1-format', exact_match: 1, f1: 1, f1_format: 1, answered: 1, reward: 1, pass_at_1: 1 });
    expect(s.buckets).toEqual({ correct: 1, near_miss: 0, wrong: 0, no_answer: 0 });
    expect(s).not.toHaveProperty('curated_size');
  });

  it('names bad input and refuses to mix two runs in one directory', async () => {
    // In-process: the commands throw InputError, which main() turns into exit status 2.
    await expect(evalCommand.run(['--agent', 'baseline', '--samples', '0', '--out', join(tmp, 'x')])).rejects.toThrow(/--samples must be a whole number from 1/);
    await expect(evalCommand.run(['--agent', 'baseline'])).rejects.toThrow(/--out DIR is required/);
    await expect(evalCommand.run(['--agent', 'baseline', '--env', 'qa', '--rubric', 'f4', '--out', join(tmp, 'x')])).rejects.toThrow(/--rubric f4 scores search rollouts, but --env is qa/);
    const dir = join(tmp, 'mixed');
    expect(sleuth(['eval', '--agent', 'baseline', '--limit', '2', '--out', dir]).status).toBe(0);
    const r3 = sleuth(['eval', '--agent', 'oracle', '--limit', '2', '--out', dir]);
    expect(r3.status).toBe(2);
    expect(r3.stderr).toMatch(/already holds a different run \(agent was "baseline", now "oracle"\)/);
    await expect(compareCommand.run([dir, join(tmp, 'no-such-run')])).rejects.toThrow(/no-such-run.*does not exist/);
    const prices = join(tmp, 'prices.json');
    writeFileSync(prices, '{"models": {"m": {"prefill": "cheap"}}}');
    await expect(evalCommand.run(['--agent', 'baseline', '--prices', prices, '--out', join(tmp, 'p')])).rejects.toThrow(`prices file ${prices}: models.m.prefill`);
    expect(existsSync(join(tmp, 'p'))).toBe(false);
  });

  it('resumes an eval killed half way without repeating finished rollouts, and never writes the key', async () => {
    const server = await new ChatServer().start();
    // Every episode: one slow reply that finishes at once (reward -0.2, but a full rollout).
    server.fallback = () => ({ ...completion([{ name: 'finish', arguments: '{}' }], 'done', { prompt_tokens: 1000, completion_tokens: 10 }), delayMs: 150 });
    const dir = join(tmp, 'resume');
    const secret = 'sk-never-write-me-42';
    const args = ['eval', '--agent', `openai:Qwen/Qwen3-8B@${server.url}`, '--api-key-env', 'MY_TEST_KEY', '--tasks', 'default', '--split', 'eval', '--limit', '8', '--samples', '2', '--concurrency', '2', '--out', dir];
    const env = { MY_TEST_KEY: secret };
    try {
      const first = sleuthAsync(args, env);
      const path = join(dir, 'rollouts.jsonl');
      while (lines(path).length < 4) {
        const exited = await Promise.race([first.done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20))]);
        if (exited) throw new Error(`the eval ended before it could be killed:\n${(await first.done).stderr}`);
      }
      first.child.kill('SIGKILL');
      const killed = await first.done;
      expect(killed.signal).toBe('SIGKILL');
      const kept = lines(path);
      expect(kept.length).toBeGreaterThanOrEqual(4);
      expect(kept.length).toBeLessThan(16);
      expect(existsSync(join(dir, 'summary.json'))).toBe(false);

      const requestsBefore = server.requests.length;
      const second = sleuthAsync(args, env);
      const res = await second.done;
      expect(res.stderr).toContain(`kept ${kept.length} finished rollouts, ran ${16 - kept.length}`);
      expect(res.code).toBe(0);
      // one request per rollout: the second run asked only for the missing ones
      expect(server.requests.length - requestsBefore).toBe(16 - kept.length);
      const all = lines(path);
      const keys = all.map((r) => `${r.taskId}#${r.sample}`);
      expect(new Set(keys).size).toBe(16);
      expect(keys.length).toBe(16);
      const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
      expect(summary).toMatchObject({ tasks: 8, rollouts: 16, errors: 0, valid: 0, tokens: 1010 });
      expect(summary.reward).toBeCloseTo(-0.2, 12);
      // Qwen3-8B: 1000 prompt tokens at $0.13/M + 10 sampled at $0.40/M
      expect(summary.cost_per_question).toBeCloseTo((1000 * 0.13 + 10 * 0.4) / 1e6, 12);
      for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f), 'utf8'), f).not.toContain(secret);
      expect(res.stdout + res.stderr).not.toContain(secret);
      expect(server.requests[0]!.authorization).toBe(`Bearer ${secret}`);
    } finally {
      await server.close();
    }
  });
});

describe('sleuth eval on the MuSiQue set: the fixed scripts and the hop oracle', () => {
  it('runs each, reports per-hop recall, and the privileged oracle finds more last-hop gold than the top 10', () => {
    const summaries: Record<string, Record<string, number>> = {};
    for (const agent of ['baseline', 'titles:10,2,5,10', 'hit-text:10,1,5,10', 'hop-oracle']) {
      const out = join(tmp, `musique-${agent.replace(/[^a-z0-9]/gu, '_')}`);
      const r = sleuth(['eval', '--agent', agent, '--tasks', 'musique', '--split', 'dev', '--limit', '12', '--out', out, '--json']);
      expect(r.status, r.stderr).toBe(0);
      summaries[agent] = JSON.parse(r.stdout);
      for (const key of ['hop1_recall', 'hop2_recall', 'last_hop_recall', 'last_hop_found']) expect(typeof summaries[agent]![key], `${agent} ${key}`).toBe('number');
    }
    expect(summaries['hop-oracle']!['last_hop_recall']).toBeGreaterThan(summaries['baseline']!['last_hop_recall']!);
    // A bad script spec is bad input: exit 2, naming it.
    const bad = sleuth(['eval', '--agent', 'hit-text:10', '--tasks', 'musique', '--split', 'dev', '--out', join(tmp, 'bad')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("agent 'hit-text:10'");
  }, 120_000);
});
