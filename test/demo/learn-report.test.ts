import { describe, expect, it } from 'vitest';
import type { Rollout } from '../../src/agent/rollout.js';
import { curateMove, explorationCurve, moveShares, perfectCurationReward, searchMove } from '../../src/demo/learn-report.js';
import { resolveRubric, scoreRollout } from '../../src/suites/registry.js';
import type { Task } from '../../src/tasks/task.js';

const task: Task = { id: 't1', query: 'Who founded the company that made X?', facts: [{ text: 'a', chunkIds: ['g1'] }, { text: 'b', chunkIds: ['g2'] }] };

function rollout(curated: string[], trajectory: string[]): Rollout {
  return { version: 1, id: 'r', taskId: 't1', agent: 'a', env: 'search', sample: 0, query: task.query, turns: [], curated, trajectory, read: [], endReason: 'finish', promptTokens: 0, completionTokens: 0, wallMs: 0, startedAt: '' };
}

describe("bench:learn's report of moves and curation", () => {
  it('names each written search and curate by what it points at', () => {
    expect(searchMove({ q: '1-' }, 5)).toBe('question');
    expect(searchMove({ q: '1-5' }, 5)).toBe('question');
    expect(searchMove({ q: '2,4' }, 5)).toBe('question-subset');
    expect(searchMove({ s: 3 }, 5)).toBe('span');
    expect(searchMove({ s: 3, q: '1-' }, 5)).toBe('span');
    expect(searchMove({ h: 2, q: '1-' }, 5)).toBe('hit-text');
    expect(searchMove({ h: '2:4-6' }, 5)).toBe('hit-text-span');
    expect(searchMove({ t: 1 }, 5)).toBe('title');
    expect(searchMove({ query: 'anything' }, 5)).toBe('free-text');
    expect(curateMove({ ids: '1-' })).toBe('curate-all-shown');
    expect(curateMove({ ids: '1-3,11' })).toBe('curate-hits');
    expect(curateMove({ s: 4 })).toBe('curate-by-span');
    expect(curateMove({ top: '5,3' })).toBe('curate-top');
  });

  it('counts follow-ups (every search after the first) and sets that are not all shown', () => {
    const a = { rollout: rollout(['g1', 'x'], ['g1', 'x']), questionWords: 4, written: [[{ name: 'bm25_search', arguments: { q: '1-' } }], [{ name: 'bm25_search', arguments: { s: 2 } }, { name: 'bm25_search', arguments: { q: '3' } }], [{ name: 'curate', arguments: { ids: '1-' } }]] };
    const b = { rollout: rollout(['g1'], ['g1', 'x', 'y']), questionWords: 4, written: [[{ name: 'bm25_search', arguments: { q: '1-' } }], [{ name: 'bm25_search', arguments: { h: 1, q: '1-' } }], [{ name: 'curate', arguments: { s: 1 } }]] };
    const m = moveShares([a, b]);
    expect(m.follow_ups).toBe(3);
    expect(m.follow_up.span).toBeCloseTo(1 / 3);
    expect(m.follow_up['question-subset']).toBeCloseTo(1 / 3);
    expect(m.follow_up['hit-text']).toBeCloseTo(1 / 3);
    expect(m.follow_up_span_or_subset).toBeCloseTo(2 / 3);
    expect(m.curate).toEqual({ 'curate-all-shown': 0.5, 'curate-top': 0, 'curate-hits': 0, 'curate-by-span': 0.5 });
    expect(m.curated_not_all_shown).toBe(0.5);
    expect(m.curated_size).toBe(1.5);
  });

  it('scores perfect curation as curating exactly the gold among the hits shown, never below the episode itself', () => {
    const rubric = resolveRubric('f4-traj-format');
    const loose = rollout(['g1', 'x', 'y', 'z'], ['g1', 'x', 'y', 'z']);
    const perfect = perfectCurationReward(task, loose, rubric);
    expect(perfect).toBeCloseTo(scoreRollout(task, rollout(['g1'], ['g1', 'x', 'y', 'z']), rubric).total);
    expect(perfect).toBeGreaterThan(scoreRollout(task, loose, rubric).total);
    // Nothing gold shown: the episode's own reward.
    const none = rollout(['x'], ['x']);
    expect(perfectCurationReward(task, none, rubric)).toBe(scoreRollout(task, none, rubric).total);
  });

  it('reads the zero-variance share and entropy per GRPO step from metrics', () => {
    expect(explorationCurve([{ step: 1, groups_mixed_share: 0.75, entropy: 0.1 }, { eval: true }, { step: 2, groups_mixed_share: 1 }])).toEqual([
      { step: 1, zero_variance_share: 0.25, entropy: 0.1 },
      { step: 2, zero_variance_share: 0, entropy: NaN },
    ]);
  });
});
