import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveModelAgent } from '../../src/cli/agents.js';
import { evalBudgets, retryAdvice } from '../../src/cli/commands/eval.js';
import { DEFAULT_BUDGETS } from '../../src/env/types.js';
import { SHIPPED_BUDGETS, shippedBasePath } from '../../src/backend/local/base-model.js';

/** `eval` scores a model within the budgets it was made for (issue 33, points 3 and 4). Drives the built CLI (dist/). */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sleuth-budgets-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sleuth = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, SLEUTH_HOME: join(tmp, 'home') } });
const rollouts = (dir: string) => readFileSync(join(dir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

describe('eval and a model\'s budgets', () => {
  it('keeps the shipped model\'s budgets equal to the preset sleuth demo trains and scores it with', () => {
    const preset = JSON.parse(readFileSync(join(ROOT, 'configs', 'local-demo.json'), 'utf8'));
    expect(preset.model).toBe('shipped');
    expect(SHIPPED_BUDGETS.base).toEqual(preset.budgets);
  });

  it('gives a local checkpoint its own context, the shipped ones their budgets, and lets flags override', async () => {
    const byPath = await resolveModelAgent(`local:${shippedBasePath('base')}`, {});
    expect(evalBudgets(DEFAULT_BUDGETS, byPath, {})).toEqual({ maxTurns: 40, maxTokensPerTurn: 1024, contextTokens: 1024 });
    const shipped = await resolveModelAgent('local:shipped', {});
    expect(evalBudgets(DEFAULT_BUDGETS, shipped, {})).toEqual({ maxTurns: 4, maxTokensPerTurn: 128, contextTokens: 1024 });
    expect(evalBudgets(DEFAULT_BUDGETS, shipped, { maxTurns: 6, contextTokens: 512 })).toEqual({ maxTurns: 6, maxTokensPerTurn: 128, contextTokens: 512 });
    const long = await resolveModelAgent('local:shipped-long', {});
    expect(evalBudgets(DEFAULT_BUDGETS, long, {}).contextTokens).toBe(2048);
    expect(() => evalBudgets(DEFAULT_BUDGETS, shipped, { contextTokens: 4096 })).toThrow('--context-tokens 4096: the model behind local:shipped holds 1024 tokens');
  });

  it('evaluates local:shipped at its budgets with no rollout in error, and refuses a context the model cannot hold (exit 2)', () => {
    const out = join(tmp, 'shipped');
    const r = sleuth(['eval', '--agent', 'local:shipped', '--split', 'dev', '--limit', '3', '--out', out]);
    expect(r.stderr).toContain('eval: budgets 4 turns, 128 tokens per turn, a 1024-token context');
    expect(r.status, r.stderr).toBe(0);
    for (const rollout of rollouts(out)) {
      expect(rollout.budgets).toEqual(SHIPPED_BUDGETS.base);
      expect(rollout.endReason).not.toBe('error');
    }
    const bad = sleuth(['eval', '--agent', 'local:shipped', '--context-tokens', '4096', '--out', join(tmp, 'bad')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--context-tokens 4096: the model behind local:shipped holds 1024 tokens');
  });

  it('--help names the budget flags and no longer says the demo\'s models expect --opening-search', () => {
    const help = sleuth(['eval', '--help']).stdout;
    for (const flag of ['--max-turns N', '--max-tokens-per-turn N', '--context-tokens N', 'local:PATH|shipped|shipped-long']) expect(help).toContain(flag);
    expect(help).not.toContain("(the local demo's) expect");
    expect(help).toContain("sleuth demo's are not");
  });

  it('says why a rerun of a seeded local model repeats its errors, and how to draw differently', () => {
    const errors = [{ message: 'sampling: prompt of 1081 tokens leaves no room in the model context of 1024', count: 6 }];
    const local = retryAdvice({ errors, summary: { errors: 6 } as never }, 'local:shipped', 0);
    expect(local).toContain('6 x sampling: prompt of 1081 tokens');
    expect(local).toContain('the same episode seeds (--seed 0)');
    expect(local).toContain('another --seed');
    expect(retryAdvice({ errors, summary: { errors: 6 } as never }, 'openai:gpt-4o-mini', 0)).toContain('retries only these');
  });
});
