import { describe, expect, it } from 'vitest';
import { bestOf, bootstrapMean, mean, pairedBootstrap, pairedBootstrapGrid, passAtK } from '../../src/eval/stats.js';
import { seededRandom } from '../../src/random.js';
import { costUsd, loadPrices, parsePrices, priceModelOf } from '../../src/eval/cost.js';
import { headroom, rolloutRow, summarize } from '../../src/eval/metrics.js';
import { scoreRollout, resolveRubric } from '../../src/suites/registry.js';
import { rollout, task } from '../reward/helpers.js';

function binom(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

describe('pass@k (Chen et al., unbiased)', () => {
  it('equals 1 - C(n-c,k)/C(n,k)', () => {
    for (const [n, c, k] of [[10, 3, 1], [10, 3, 5], [20, 1, 10], [8, 0, 4], [5, 5, 1], [4, 2, 4]] as const) {
      expect(passAtK(n, c, k)).toBeCloseTo(n - c < k ? 1 : 1 - binom(n - c, k) / binom(n, k), 12);
    }
    expect(passAtK(10, 3, 1)).toBeCloseTo(0.3, 12);
  });
  it('rejects impossible counts', () => {
    expect(() => passAtK(4, 5, 1)).toThrow(/pass@k/);
    expect(() => passAtK(4, 1, 5)).toThrow(/pass@k/);
  });
});

describe('bootstrap intervals', () => {
  it('are seeded, contain the mean, and narrow with more data', () => {
    const rand = seededRandom(7);
    const small = Array.from({ length: 20 }, () => rand());
    const large = Array.from({ length: 2000 }, () => rand());
    const a = bootstrapMean(small, { seed: 1 });
    expect(bootstrapMean(small, { seed: 1 })).toEqual(a);
    expect(a.lo).toBeLessThan(a.mean);
    expect(a.hi).toBeGreaterThan(a.mean);
    const b = bootstrapMean(large, { seed: 1 });
    expect(b.hi - b.lo).toBeLessThan((a.hi - a.lo) / 4);
    // the mean of U(0,1) is 0.5: a 95% interval on 2,000 draws holds it
    expect(b.lo).toBeLessThan(0.5);
    expect(b.hi).toBeGreaterThan(0.5);
  });
  it('collapse to the mean with one value', () => {
    expect(bootstrapMean([0.3])).toEqual({ mean: 0.3, lo: 0.3, hi: 0.3, n: 1 });
  });
  it('pair runs over seeds x tasks: the spread between training seeds widens the interval', () => {
    const rand = seededRandom(5);
    const base = Array.from({ length: 40 }, () => rand());
    // Three seeds that agree: the same +0.05 everywhere, shown, and an interval of width ~0.
    const agree = pairedBootstrapGrid([base, base, base], [0, 1, 2].map(() => base.map((x) => x + 0.05)), { seed: 0 });
    expect(agree).toMatchObject({ shown: true, seeds: 3, n: 120 });
    expect(agree.mean).toBeCloseTo(0.05, 12);
    expect(agree.hi - agree.lo).toBeLessThan(1e-9);
    // Three seeds that disagree (+0.15, +0.0, -0.09): the same mean gain, but the seed spread is in the interval.
    const gains = [0.15, 0, -0.09];
    const disagree = pairedBootstrapGrid([base, base, base], gains.map((g) => base.map((x) => x + g)), { seed: 0 });
    expect(disagree.mean).toBeCloseTo(0.02, 12);
    expect(disagree.shown).toBe(false);
    // With one seed it is the paired bootstrap over tasks.
    const one = pairedBootstrapGrid([base], [base.map((x, i) => x + (i % 2 ? 0.05 : -0.05))], { seed: 0 });
    expect(one).toMatchObject({ shown: false, seeds: 1, n: 40 });
    expect(() => pairedBootstrapGrid([base], [base, base])).toThrow(/same seeds/);
    expect(() => pairedBootstrapGrid([base, base], [base, base.slice(1)])).toThrow(/seed 1/);
  });
  it('pair runs per task: a small consistent gain is shown, noise is not', () => {
    const rand = seededRandom(3);
    const base = Array.from({ length: 40 }, () => rand());
    const better = base.map((x) => x + 0.02);
    const paired = pairedBootstrap(base, better, { seed: 0, resamples: 1000 });
    expect(paired.mean).toBeCloseTo(0.02, 12);
    expect(paired.shown).toBe(true);
    // the same gain would drown in task difficulty if the runs were not paired
    const unpaired = bootstrapMean(better.map((x, i) => x - base[(i + 1) % base.length]!), { seed: 0 });
    expect(unpaired.lo).toBeLessThan(0);
    const noise = pairedBootstrap(base, base.map((x, i) => x + (i % 2 ? 0.05 : -0.05)), { seed: 0 });
    expect(noise.shown).toBe(false);
    expect(() => pairedBootstrap([1], [1, 2])).toThrow(/aligned/);
    // the mean of three equal floats need not equal their max bit for bit: still no difference
    const v = [0.81, 0.81, 0.81];
    const same = pairedBootstrap([(v[0]! + v[1]! + v[2]!) / 3, 0.3], [Math.max(...v), 0.3]);
    expect(same).toMatchObject({ mean: 0, lo: 0, hi: 0, shown: false });
  });
  it('best-of-N is the max per task, best-of-1 the mean of the samples', () => {
    const r = bestOf(new Map([['a', [0, 1, 0, 0]], ['b', [0.5, 0.5]]]));
    expect(r).toEqual({ tasks: ['a', 'b'], best: [1, 0.5], single: [0.25, 0.5] });
    expect(mean(r.best)).toBe(0.75);
  });
});

describe('prices and cost', () => {
  it('ships a table with the Tinker models and a free local model', () => {
    const p = loadPrices();
    expect(p.models['local']).toEqual({ prefill: 0, sample: 0, train: 0 });
    expect(p.models['Qwen/Qwen3-8B']).toEqual({ prefill: 0.13, sample: 0.4, train: 0.4 });
    expect(p.models['openai/gpt-oss-120b']!.sample).toBe(1.54);
  });
  it('costs tokens per million, and is unknown (null) when a needed price is', () => {
    const q = { prefill: 0.13, sample: 0.4, train: 0.4 };
    expect(costUsd({ promptTokens: 1_000_000, completionTokens: 500_000 }, q)).toBeCloseTo(0.33, 12);
    expect(costUsd({ promptTokens: 10, completionTokens: 0 }, { prefill: null, sample: 1, train: 1 })).toBeNull();
    expect(costUsd({ promptTokens: 10, completionTokens: 1 }, undefined)).toBeNull();
    expect(costUsd({ promptTokens: 0, completionTokens: 0 }, undefined)).toBe(0);
  });
  it('maps agent specs to price keys and names a bad table', () => {
    expect(priceModelOf('openai:Qwen/Qwen3-8B@http://127.0.0.1:8000/v1')).toBe('Qwen/Qwen3-8B');
    expect(priceModelOf('tinker:openai/gpt-oss-20b')).toBe('openai/gpt-oss-20b');
    expect(priceModelOf('baseline')).toBe('local');
    expect(priceModelOf('local:runs/x/ckpt-4')).toBe('local');
    expect(() => parsePrices({ models: { m: { prefill: -1, sample: 0, train: 0 } } }, 'my-prices.json')).toThrow(/my-prices.json: models.m.prefill/);
  });
});

describe('summaries of scored rollouts', () => {
  const rubric = resolveRubric('f4');
  const make = (taskId: string, sample: number, curated: string[], extra: Parameters<typeof rollout>[0] = {}) => {
    const r = rollout({ taskId, sample, curated, promptTokens: 1000, completionTokens: 100, ...extra });
    r.reward = scoreRollout({ ...task, id: taskId }, r, rubric);
    return rolloutRow(r, 'search', { prefill: 1, sample: 10, train: 0 });
  };
  const rows = [
    make('t1', 0, ['a1', 'b1', 'c1', 'd1']),
    make('t1', 1, [], { calls: ['ok', 'off_form'] }),
    make('t2', 0, ['a1']),
    make('t2', 1, ['x'], { endReason: 'turns' }),
  ];
  it('averages per task, shares buckets and end reasons, and prices tokens', () => {
    const s = summarize(rows, 'search', { seed: 0 });
    expect(s.tasks).toBe(2);
    expect(s.rollouts).toBe(4);
    expect(s['recall']).toBeCloseTo((0.5 + 0.125) / 2, 12);
    expect(s['valid']).toBe(0.75);
    expect(s['curated_size']).toBeCloseTo((2 + 1) / 2, 12);
    expect(s.buckets).toEqual({ complete: 0.25, partial: 0.25, missed: 0.25, empty: 0.25 });
    expect(s.end_reasons).toEqual({ finish: 3, turns: 1 });
    expect(s['offform_episode_share']).toBeCloseTo(0.25, 12);
    expect(s['offform_call_share']).toBeCloseTo(0.5, 12);
    // 1000 prompt at $1/M + 100 sampled at $10/M
    expect(s['cost_per_question']).toBeCloseTo(0.002, 12);
    // success = every fact covered: t1 has 1 of 2, t2 none
    expect(s['pass_at_1']).toBeCloseTo(0.25, 12);
    expect(s['pass_at_k']).toBeCloseTo(0.5, 12);
    expect(s['best_of_n']).toBeCloseTo((1 + rows[2]!.values['reward']!) / 2, 12);
  });
  it('headroom pairs best-of-N against best-of-1 per task', () => {
    const h = headroom(rows, 'reward', { seed: 0 })!;
    expect(h.samples).toBe(2);
    expect(h.gain.mean).toBeCloseTo(h.bestOfN.mean - h.bestOf1.mean, 12);
    expect(h.gain.mean).toBeGreaterThan(0);
  });
});
