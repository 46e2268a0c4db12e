import { describe, expect, it } from 'vitest';
import { fBeta, scoreSet, factRecall } from '../../src/reward/sets.js';
import { hopParts, searchParts, searchPartsAtBeta } from '../../src/suites/search/reward.js';
import { parseTrainConfig, rubricOf } from '../../src/train/config.js';
import type { Task } from '../../src/tasks/task.js';
import { defaultRubric, scoreRollout, resolveRubric, parseRubric, RUBRICS } from '../../src/suites/registry.js';

const DEFAULT_RUBRIC = defaultRubric('search');
import { betaAt } from '../../src/reward/schedule.js';
import { InputError } from '../../src/errors.js';
import { rollout, task } from './helpers.js';

describe('F-beta', () => {
  it("pins the blog post's numbers: R 1.0 and P 0.25 give F4 0.85 and F1 0.40", () => {
    expect(fBeta(0.25, 1, 4)).toBeCloseTo(0.85, 2);
    expect(fBeta(0.25, 1, 1)).toBeCloseTo(0.4, 10);
  });
  it('is 0 when precision and recall are both 0, and rejects a non-positive beta', () => {
    expect(fBeta(0, 0, 4)).toBe(0);
    expect(() => fBeta(0.5, 0.5, 0)).toThrow(InputError);
  });
});

describe('recall and precision of a curated set', () => {
  it('covers a fact through any of its chunks, and counts relevant curated chunks', () => {
    // all 4 facts covered (c through c2), 4 relevant of 16 curated -> P 0.25
    const curated = ['a1', 'b1', 'c2', 'd1', ...Array.from({ length: 12 }, (_, i) => `x${i}`)];
    const s = scoreSet(task, curated);
    expect(s).toEqual({ recall: 1, precision: 0.25, size: 16, covered: 4 });
    const r = scoreRollout(task, rollout({ curated }), DEFAULT_RUBRIC);
    expect(r.parts['fbeta']).toBeCloseTo(0.85, 2);
    expect(r.parts['f1']).toBeCloseTo(0.4, 10);
    expect(r.total).toBeCloseTo(r.parts['fbeta']!, 12);
  });
  it('counts duplicates in the curated set once', () => {
    expect(scoreSet(task, ['a1', 'a1', 'a1', 'x'])).toEqual({ recall: 0.25, precision: 0.5, size: 2, covered: 1 });
  });
  it('counts two chunks of one fact as two relevant chunks but one covered fact', () => {
    expect(scoreSet(task, ['c1', 'c2'])).toEqual({ recall: 0.25, precision: 1, size: 2, covered: 1 });
  });
  it('treats ids outside the corpus (or any fact) as irrelevant, without failing', () => {
    expect(scoreSet(task, ['no-such-chunk', 'b1'])).toEqual({ recall: 0.25, precision: 0.5, size: 2, covered: 1 });
  });
  it('refuses a task with no facts, naming it', () => {
    expect(() => scoreSet({ ...task, facts: [] }, ['a1'])).toThrow(/task 't1' has no facts/);
  });
});

describe('the rubric', () => {
  it('gives the empty set a flat -0.2 and logs every part at weight 0 too', () => {
    const r = scoreRollout(task, rollout({ curated: [] }), DEFAULT_RUBRIC);
    expect(r.total).toBeCloseTo(-0.2, 12);
    expect(r.parts).toMatchObject({ recall: 0, precision: 0, f1: 0, fbeta: 0, empty: 1, trajectory_recall: 0, offform: 0 });
    expect(Object.keys(r.weights).sort()).toEqual(Object.keys(r.parts).sort());
    expect(r.weights['trajectory_recall']).toBe(0);
  });
  it('adds 0.2 x trajectory recall, counting support seen anywhere, curated or not', () => {
    const ro = rollout({ curated: ['a1'], trajectory: ['b1', 'zz', 'c2'] });
    expect(factRecall(task, ro.trajectory)).toBe(0.5);
    const plain = scoreRollout(task, ro, resolveRubric('f4'));
    const shaped = scoreRollout(task, ro, resolveRubric('f4-traj'));
    expect(shaped.parts['trajectory_recall']).toBe(0.75);
    expect(shaped.total - plain.total).toBeCloseTo(0.2 * 0.75, 12);
  });
  it("gives an empty set the seed's flat -0.2 under every trajectory-recall rubric, however much gold it saw (issue 50, point 4)", () => {
    const sawAll = rollout({ curated: [], trajectory: ['a1', 'b1', 'c1', 'd1'] });
    for (const name of ['f4', 'f4-traj']) {
      const r = scoreRollout(task, sawAll, resolveRubric(name));
      expect(r.parts['trajectory_recall']).toBe(1);
      expect(r.parts['trajectory_recall_if_curated']).toBe(0);
      expect(r.total, name).toBeCloseTo(-0.2, 12);
    }
    // The format penalty comes on top, as it does for any episode.
    expect(scoreRollout(task, rollout({ curated: [], calls: ['off_form'] }), resolveRubric('f4-traj-format')).total).toBeCloseTo(-0.3, 12);
    // A config's trajectoryBonus weighs the same part.
    expect(rubricOf(parseTrainConfig({ steps: 1, reward: { rubric: 'f4', trajectoryBonus: 0.5 } }, 'test')).weights['trajectory_recall_if_curated']).toBe(0.5);
  });
  it("derives trajectory_recall_if_curated for the explorer's lab from the parts older runs logged", () => {
    expect(searchPartsAtBeta({ recall: 0, precision: 0, empty: 1, trajectory_recall: 1 }, 4)['trajectory_recall_if_curated']).toBe(0);
    expect(searchPartsAtBeta({ recall: 0.5, precision: 1, empty: 0, trajectory_recall: 0.75 }, 4)['trajectory_recall_if_curated']).toBe(0.75);
  });
  it('subtracts 0.1 once when any call of the episode is off-form', () => {
    const clean = rollout({ curated: ['a1'], calls: ['ok', 'ok'] });
    const drift = rollout({ curated: ['a1'], calls: ['ok', 'off_form', 'off_form'] });
    const rubric = resolveRubric('f4-format');
    expect(scoreRollout(task, clean, rubric).parts['offform']).toBe(0);
    expect(scoreRollout(task, clean, rubric).total - scoreRollout(task, drift, rubric).total).toBeCloseTo(0.1, 12);
    // unparseable calls are not off-form: they were never accepted
    expect(searchParts(task, rollout({ calls: ['unparseable'] }), 4)['offform']).toBe(0);
  });
  it('uses beta from the schedule at the rollout step', () => {
    const rubric = parseRubric({ name: 'anneal', kind: 'search', weights: { fbeta: 1 }, beta: { kind: 'linear', from: 4, to: 1, steps: 10 } }, 'test');
    const curated = ['a1', 'b1', 'c1', 'd1', ...Array.from({ length: 12 }, (_, i) => `x${i}`)];
    expect(scoreRollout(task, rollout({ curated, step: 0 }), rubric).total).toBeCloseTo(0.85, 2);
    expect(scoreRollout(task, rollout({ curated, step: 10 }), rubric).total).toBeCloseTo(0.4, 10);
    expect(scoreRollout(task, rollout({ curated, step: 3 }), rubric, 99).total).toBeCloseTo(0.4, 10);
  });
  it('rejects unknown rubric names and weights of parts that do not exist', () => {
    expect(() => resolveRubric('nope')).toThrow(/unknown rubric 'nope'/);
    expect(() => scoreRollout(task, rollout(), { ...RUBRICS['f4']!, weights: { recal: 1 } })).toThrow(/weighs 'recal'/);
    expect(() => parseRubric({ name: 'x', kind: 'search', weights: { fbeta: 'one' } }, 'configs/x.json')).toThrow(/configs\/x.json: rubric.weights.fbeta/);
  });
});

describe('beta schedule', () => {
  it('is constant, linear or cosine between its ends, and holds the end after', () => {
    expect(betaAt({ kind: 'constant', beta: 4 }, 100)).toBe(4);
    expect(betaAt({ kind: 'linear', from: 4, to: 2, steps: 10 }, 5)).toBeCloseTo(3, 12);
    expect(betaAt({ kind: 'linear', from: 4, to: 2, steps: 10 }, 50)).toBe(2);
    expect(betaAt({ kind: 'cosine', from: 4, to: 2, steps: 10 }, 0)).toBe(4);
    expect(betaAt({ kind: 'cosine', from: 4, to: 2, steps: 10 }, 5)).toBeCloseTo(3, 12);
    expect(betaAt({ kind: 'cosine', from: 4, to: 2, steps: 10 }, 2)).toBeGreaterThan(betaAt({ kind: 'linear', from: 4, to: 2, steps: 10 }, 2));
    expect(betaAt({ kind: 'cosine', from: 4, to: 2, steps: 10 }, 10)).toBeCloseTo(2, 12);
  });
});

describe('per-hop recall of a multi-hop task', () => {
  // Three hops in order; hop 2's gold has two chunks. Worked by hand: the set holds hop 1's gold and
  // the second chunk of hop 2's; hop 3's gold was shown in a search result but not curated.
  const hops: Task = {
    id: 'm1',
    query: 'Who founded the label of the singer of Song?',
    facts: [
      { text: 'Song >> performer Singer', chunkIds: ['h1'] },
      { text: 'Singer >> record label Label', chunkIds: ['h2a', 'h2b'] },
      { text: 'Label >> founded by Founder', chunkIds: ['h3'], isFinalAnswer: true },
    ],
    meta: { source: 'musique', hops: 3 },
  };

  it('gives each hop 1 when its gold is curated, and says whether the last hop was ever found', () => {
    expect(hopParts(hops, ['h1', 'x', 'h2b'], ['h1', 'h3', 'x'])).toEqual({ hop1_recall: 1, hop2_recall: 1, hop3_recall: 0, last_hop_recall: 0, last_hop_found: 1 });
    expect(hopParts(hops, [], [])).toEqual({ hop1_recall: 0, hop2_recall: 0, hop3_recall: 0, last_hop_recall: 0, last_hop_found: 0 });
    const parts = searchParts(hops, rollout({ curated: ['h3'], trajectory: ['h1'] }), 4);
    expect(parts).toMatchObject({ recall: 1 / 3, hop1_recall: 0, hop2_recall: 0, hop3_recall: 1, last_hop_recall: 1, last_hop_found: 1 });
  });

  it('leaves tasks whose facts are not a chain of hops without per-hop parts', () => {
    expect(hopParts(task, ['a1'], [])).toEqual({});
    expect(Object.keys(searchParts(task, rollout({ curated: ['a1'] }), 4)).filter((k) => k.includes('hop'))).toEqual([]);
    // meta.hops that disagrees with the facts is not trusted either.
    expect(hopParts({ ...hops, meta: { hops: 2 } }, ['h1'], [])).toEqual({});
  });
});
