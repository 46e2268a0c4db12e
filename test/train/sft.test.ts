import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CallRecord, Rollout } from '../../src/agent/rollout.js';
import type { Task } from '../../src/tasks/task.js';
import { checkOpening } from '../../src/suites/search/opening.js';
import { judgeAttempt, selectDemonstrations } from '../../src/train/sft.js';
import { configFromFlags, mergeConfig, parseTrainConfig } from '../../src/train/config.js';

const task: Task = { id: 't', query: 'q', facts: [{ text: 'a', chunkIds: ['A'] }, { text: 'b', chunkIds: ['B', 'B2'] }] };

function call(name: string, outcome: 'ok' | 'error' = 'ok', ids: string[] = []): CallRecord {
  return { name, arguments: {}, status: 'ok', result: { outcome, content: '', chunkIds: ids } };
}

function attempt(o: { reward: number; calls: CallRecord[]; trajectory: string[]; curated?: string[]; endReason?: Rollout['endReason'] }): Rollout {
  return {
    version: 1, id: 'x', taskId: 't', agent: 'teacher', env: 'search', sample: 0, query: 'q',
    turns: [{ index: 0, insertedTokens: [], sampledTokens: [], sampledLogprobs: [], text: '', calls: o.calls, curated: o.curated ?? [], sampleMs: 0, envMs: 0, promptTokens: 0, completionTokens: 0 }],
    curated: o.curated ?? [], trajectory: o.trajectory, read: [], endReason: o.endReason ?? 'finish', promptTokens: 0, completionTokens: 0, wallMs: 0, startedAt: '',
    reward: { total: o.reward, parts: {}, weights: {} },
  };
}

const good = attempt({ reward: 0.8, calls: [call('bm25_search', 'ok', ['A', 'Z']), call('curate'), call('finish')], trajectory: ['A', 'Z'], curated: ['A'] });

describe('the SFT rejection filter', () => {
  it('keeps an attempt above the threshold that searched and saw gold support in its results', () => {
    expect(judgeAttempt(task, good, { threshold: 0.5 })).toBe('kept');
  });

  it('rejects a reward at or below the threshold', () => {
    expect(judgeAttempt(task, attempt({ ...good, reward: 0.5, calls: good.turns[0]!.calls, trajectory: ['A'] }), { threshold: 0.5 })).toBe('low_reward');
  });

  it('rejects an attempt that never searched successfully (a guess)', () => {
    expect(judgeAttempt(task, attempt({ reward: 0.9, calls: [call('curate'), call('finish')], trajectory: ['A'] }), { threshold: 0.1 })).toBe('no_search');
    expect(judgeAttempt(task, attempt({ reward: 0.9, calls: [call('bm25_search', 'error'), call('finish')], trajectory: ['A'] }), { threshold: 0.1 })).toBe('no_search');
    expect(judgeAttempt(task, attempt({ reward: 0.9, calls: [call('grep_corpus', 'ok', ['A'])], trajectory: ['A'] }), { threshold: 0.1 })).toBe('kept');
  });

  it('rejects an attempt whose gold support never appeared in a tool result, even if it curated gold ids', () => {
    expect(judgeAttempt(task, attempt({ reward: 0.9, calls: [call('bm25_search', 'ok', ['Z'])], trajectory: ['Z'], curated: ['A'] }), { threshold: 0.1 })).toBe('no_support');
    // Any supporting chunk of any fact counts (B2 supports fact b).
    expect(judgeAttempt(task, attempt({ reward: 0.9, calls: [call('bm25_search', 'ok', ['B2'])], trajectory: ['B2'] }), { threshold: 0.1 })).toBe('kept');
  });

  it("under all-gold (the seed's rule), asks for a chunk of every fact in the tool results (issue 50, point 5)", () => {
    const oneFact = attempt({ reward: 0.9, calls: [call('bm25_search', 'ok', ['A'])], trajectory: ['A'] });
    const everyFact = attempt({ reward: 0.9, calls: [call('bm25_search', 'ok', ['A', 'B2'])], trajectory: ['A', 'B2'] });
    // Curating the missing fact's chunk is not seeing it.
    const curatedOnly = attempt({ reward: 0.9, calls: [call('bm25_search', 'ok', ['A'])], trajectory: ['A'], curated: ['A', 'B'] });
    expect(judgeAttempt(task, oneFact, { threshold: 0.1 })).toBe('kept');
    expect(judgeAttempt(task, oneFact, { threshold: 0.1, keepIf: 'any-fact' })).toBe('kept');
    expect(judgeAttempt(task, oneFact, { threshold: 0.1, keepIf: 'all-gold' })).toBe('no_support');
    expect(judgeAttempt(task, curatedOnly, { threshold: 0.1, keepIf: 'all-gold' })).toBe('no_support');
    expect(judgeAttempt(task, everyFact, { threshold: 0.1, keepIf: 'all-gold' })).toBe('kept');
    const attempts = [{ rollout: oneFact, length: 5, tag: 'one fact' }, { rollout: everyFact, length: 9, tag: 'every fact' }];
    expect(selectDemonstrations(task, attempts, { threshold: 0.1, cap: 1 }).map((a) => a.tag)).toEqual(['one fact']);
    expect(selectDemonstrations(task, attempts, { threshold: 0.1, cap: 1, keepIf: 'all-gold' }).map((a) => a.tag)).toEqual(['every fact']);
  });

  it('takes --sft-keep-if from the config or a flag, any-fact by default, and refuses another value', () => {
    expect(parseTrainConfig({ steps: 1 }, 'test').sftKeepIf).toBe('any-fact');
    expect(parseTrainConfig(mergeConfig({ steps: 1 }, configFromFlags({ 'sft-keep-if': 'all-gold' })), 'flags').sftKeepIf).toBe('all-gold');
    expect(() => parseTrainConfig({ steps: 1, sftKeepIf: 'most' }, 'flags')).toThrow(/sftKeepIf/);
    // The built CLI (dist/): exit 2, the setting and its values named.
    const root = join(import.meta.dirname, '..', '..');
    const r = spawnSync(process.execPath, [join(root, 'bin', 'sleuth.js'), 'sft', '--teacher', 'baseline', '--sft-keep-if', 'most', '--out', join(tmpdir(), 'sleuth-sft-keep-if-never-made')], { cwd: root, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/sftKeepIf: .*"any-fact"\|"all-gold"/);
  });

  it('rejects errored episodes', () => {
    expect(judgeAttempt(task, attempt({ ...good, reward: 1, calls: good.turns[0]!.calls, trajectory: ['A'], endReason: 'error' }), { threshold: 0 })).toBe('error');
  });

  it('keeps the shortest passing attempts, ties to the earlier one, at most cap per query', () => {
    const fail = attempt({ reward: 0.1, calls: good.turns[0]!.calls, trajectory: ['A'] });
    const attempts = [
      { rollout: good, length: 40, tag: 'a' },
      { rollout: fail, length: 5, tag: 'short but failed' },
      { rollout: good, length: 20, tag: 'b' },
      { rollout: good, length: 20, tag: 'c' },
      { rollout: good, length: 90, tag: 'd' },
    ];
    expect(selectDemonstrations(task, attempts, { threshold: 0.3, cap: 1 }).map((a) => a.tag)).toEqual(['b']);
    expect(selectDemonstrations(task, attempts, { threshold: 0.3, cap: 3 }).map((a) => a.tag)).toEqual(['b', 'c', 'a']);
    expect(selectDemonstrations(task, attempts, { threshold: 0.9, cap: 3 })).toEqual([]);
  });

  it('with keep best, keeps the highest-scoring passing attempts, the shorter first on a tie', () => {
    const better = attempt({ reward: 0.95, calls: good.turns[0]!.calls, trajectory: ['A', 'B'], curated: ['A', 'B'] });
    const attempts = [
      { rollout: good, length: 20, tag: 'short, 0.8' },
      { rollout: better, length: 90, tag: 'long, 0.95' },
      { rollout: better, length: 60, tag: 'medium, 0.95' },
      { rollout: attempt({ reward: 0.99, calls: good.turns[0]!.calls, trajectory: [] }), length: 10, tag: 'no support' },
    ];
    expect(selectDemonstrations(task, attempts, { threshold: 0.3, cap: 2, keep: 'best' }).map((a) => a.tag)).toEqual(['medium, 0.95', 'long, 0.95']);
    expect(selectDemonstrations(task, attempts, { threshold: 0.3, cap: 1, keep: 'shortest' }).map((a) => a.tag)).toEqual(['short, 0.8']);
  });

  it('with an opening search, accepts only a teacher whose first turn is exactly that search', () => {
    const opening = (args: unknown, name = 'bm25_search') => attempt({ reward: 1, calls: [{ ...call(name), arguments: args }], trajectory: [] });
    expect(() => checkOpening('baseline-sweep', task, opening({ query: 'q', k: 10 }), 10)).not.toThrow();
    expect(() => checkOpening('baseline:3', task, opening({ query: 'q', k: 3 }), 10)).toThrow(/teacher baseline:3: with openingSearch 10 the teacher's first turn must be bm25_search .* task t opened with/);
    expect(() => checkOpening('t', task, opening({ query: 'other', k: 10 }), 10)).toThrow(/first turn must be/);
    expect(() => checkOpening('t', task, opening({ pattern: 'q' }, 'grep_corpus'), 10)).toThrow(/first turn must be/);
  });
});
