import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `sleuth eval --temperature` reaches local: agents, 0 is greedy, and config.json records the
 * temperature the rollouts were sampled at (issue 50, point 1). Drives the built CLI (dist/).
 */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sleuth-temperature-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sleuth = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, SLEUTH_HOME: join(tmp, 'home') } });
// Two samples of each task by default: under sampling they differ, greedy they cannot.
const evalShipped = (name: string, extra: string[], size = { limit: 3, samples: 2 }) => {
  const out = join(tmp, name);
  const r = sleuth(['eval', '--agent', 'local:shipped', '--split', 'dev', '--limit', String(size.limit), '--samples', String(size.samples), '--out', out, ...extra]);
  expect(r.status, r.stderr).toBe(0);
  return out;
};
/** What the model wrote in each rollout (its turns' text and calls, without timings), by task and sample. */
const written = (dir: string) =>
  readFileSync(join(dir, 'rollouts.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .sort((a, b) => `${a.taskId}#${a.sample}`.localeCompare(`${b.taskId}#${b.sample}`))
    .map((r) => ({ key: `${r.taskId}#${r.sample}`, turns: r.turns.map((t: Turn) => [t.text, t.calls.map((c) => [c.name, c.arguments])]) }));
type Turn = { text: string; calls: { name: string; arguments: unknown }[] };
const config = (dir: string) => JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));

describe('eval --temperature for local: agents', () => {
  it('samples greedily at 0 (two runs and two samples alike, unlike the sampled run) and records the temperature used', () => {
    const greedy = evalShipped('greedy', ['--temperature', '0']);
    const again = evalShipped('greedy-again', ['--temperature', '0', '--seed', '7']);
    const sampled = evalShipped('sampled', []);
    expect(config(greedy).temperature).toBe(0);
    expect(config(sampled).temperature).toBeNull();
    // Greedy ignores the seed: another seed writes the same tokens.
    expect(written(again)).toEqual(written(greedy));
    const bySample = (dir: string, s: number) => written(dir).filter((r) => r.key.endsWith(`#${s}`)).map((r) => r.turns);
    expect(bySample(greedy, 1)).toEqual(bySample(greedy, 0));
    expect(written(sampled)).not.toEqual(written(greedy));
  });

  it('refuses to resume a run at another temperature', () => {
    const out = evalShipped('resume', ['--temperature', '0'], { limit: 1, samples: 1 });
    const r = sleuth(['eval', '--agent', 'local:shipped', '--split', 'dev', '--limit', '1', '--samples', '1', '--temperature', '0.5', '--out', out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('temperature was 0, now 0.5');
  });

  it('rejects a bad temperature with the flag named (exit 2)', () => {
    for (const bad of ['-1', 'hot', 'Infinity']) {
      const r = sleuth(['eval', '--agent', 'local:shipped', '--temperature', bad, '--out', join(tmp, 'bad')]);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('--temperature');
    }
  });

  it('says in --help that it applies to every model agent', () => {
    const help = sleuth(['eval', '--help']).stdout;
    expect(help).toContain('model agents (openai:, local:, tinker:); 0 is greedy');
  });
});
