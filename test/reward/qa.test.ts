import { describe, expect, it } from 'vitest';
import { exactMatch, normalizeAnswer, tokenF1, tokenFBeta } from '../../src/reward/answers.js';
import { qaParts } from '../../src/suites/qa/reward.js';
import { scoreRollout, resolveRubric } from '../../src/suites/registry.js';
import { rollout, task } from './helpers.js';

describe('SQuAD normalisation, exact match and token F1', () => {
  it('drops case, punctuation and articles', () => {
    expect(normalizeAnswer("Arthur's Magazine.")).toBe('arthurs magazine');
    expect(exactMatch('The United States', ['United States'])).toBe(1);
    expect(exactMatch('1,844', ['1844'])).toBe(1);
  });
  it('gives partial token overlap partial F1', () => {
    expect(tokenF1('President Richard Nixon', ['Richard Nixon'])).toBeCloseTo(0.8, 12);
  });
  it('scores yes, no and noanswer all or nothing', () => {
    expect(tokenF1('yes', ['no'])).toBe(0);
    expect(tokenF1('no it was not', ['no'])).toBe(0);
    expect(tokenF1('Yes', ['yes'])).toBe(1);
    expect(tokenF1('noanswer', ['noanswer'])).toBe(1);
  });
  it('takes the best alias', () => {
    expect(exactMatch('NYC', ['New York City', 'nyc'])).toBe(1);
    expect(tokenF1('the city of Rotterdam', ['Amsterdam', 'Rotterdam'])).toBeCloseTo(2 * (1 / 3) * 1 / (1 / 3 + 1), 12);
  });
  it('F-0.5 weighs precision over recall', () => {
    // pred 1 token, gold 2 tokens, 1 common: P 1, R 0.5
    expect(tokenFBeta('Nixon', ['Richard Nixon'], 0.5)).toBeCloseTo((1.25 * 0.5) / (0.25 + 0.5), 12);
  });
});

describe('QA parts and rubrics', () => {
  const answers = ['Richard Nixon'];
  it('scores no answer 0 on every part', () => {
    for (const a of [undefined, '', '   ']) expect(Object.values(qaParts(a, answers)).every((v) => v === 0)).toBe(true);
  });
  it('the format floor replaces F1 = 0 for a given answer, and is not added to a positive F1', () => {
    expect(qaParts('Gerald Ford', answers)).toMatchObject({ f1: 0, f1_format: 0.1, answered: 1 });
    expect(qaParts('President Richard Nixon', answers)['f1_format']).toBeCloseTo(0.8, 12);
  });
  it('partial credit: exact match 1.3 in all, a near miss 0.3 x F-0.5', () => {
    const t = { ...task, answers };
    const rubric = resolveRubric('qa-partial');
    expect(scoreRollout(t, rollout({ answer: 'richard nixon.' }), rubric).total).toBeCloseTo(1.3, 12);
    const near = scoreRollout(t, rollout({ answer: 'Nixon' }), rubric);
    expect(near.parts['exact_match']).toBe(0);
    expect(near.total).toBeCloseTo(0.3 * tokenFBeta('Nixon', answers, 0.5), 12);
    expect(scoreRollout(t, rollout({}), rubric).total).toBe(0);
  });
  it('refuses a QA rubric on a task without answers', () => {
    expect(() => scoreRollout(task, rollout({ answer: 'x' }), resolveRubric('qa-em'))).toThrow(/task 't1' has no answers/);
  });
});
