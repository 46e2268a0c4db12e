import { describe, expect, it } from 'vitest';
import type { Summary } from '../../src/eval/metrics.js';
import { formatSummary, runNames } from '../../src/eval/report.js';

function summary(samples: number, scoring: string): Summary {
  return {
    scoring, tasks: 10, rollouts: 10 * samples, samples, errors: 0,
    reward: 0.6, intervals: { reward: { mean: 0.6, lo: 0.3, hi: 0.9, n: 10 } },
    offform_call_share: 0, pass_at_1: 0.6, pass_at_k: samples > 1 ? 0.8 : 0.6, pass_k: samples, best_of_n: samples > 1 ? 0.7 : 0.6, best_of_1: 0.6,
    end_reasons: { answer: 10 }, buckets: { correct: 0.6, wrong: 0.4 },
  } as unknown as Summary;
}

describe('the summary table', () => {
  it('shows pass@k and best-of-N once with one sample per task, and both with several', () => {
    const one = formatSummary(summary(1, 'invoices'), 't');
    expect(one.match(/^pass@/gm)).toHaveLength(1);
    expect(one.match(/^best-of-/gm)).toHaveLength(1);
    const four = formatSummary(summary(4, 'search'), 't');
    expect(four).toMatch(/^pass@4 +0\.800$/m);
    expect(four).toMatch(/^best-of-4 reward +0\.700$/m);
  });

  it('names the buckets by what is scored: curated sets for search, answers otherwise', () => {
    expect(formatSummary(summary(4, 'search'), 't')).toContain('curated sets: correct 60.0%');
    expect(formatSummary(summary(1, 'invoices'), 't')).toContain('answers: correct 60.0%');
    expect(formatSummary(summary(1, 'qa'), 't')).toContain('answers: correct 60.0%');
  });
});

describe('the comparison table', () => {
  it('names runs by the shortest ends of their paths that tell them apart', () => {
    expect(runNames(['runs/demo-1/sft', 'runs/demo-1/grpo'])).toEqual(['sft', 'grpo']);
    expect(runNames(['a/x/eval', 'b/x/eval', 'c/y/eval'])).toEqual(['a/x/eval', 'b/x/eval', 'c/y/eval']);
    expect(runNames(['a/x/eval', 'b/y/eval'])).toEqual(['x/eval', 'y/eval']);
    expect(runNames(['a/run/', './b/run'])).toEqual(['a/run', 'b/run']);
    expect(runNames(['runs/one', 'runs/one'])).toEqual(['runs/one', 'runs/one']);
  });
});
