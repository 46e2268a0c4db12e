import { describe, expect, it } from 'vitest';
import { allEqual, GRPO_STD_EPS, groupAdvantages } from '../../src/train/advantages.js';
import { collectBatch, type Group } from '../../src/train/dynamic.js';

describe('group advantages', () => {
  it('Dr. GRPO: reward minus the group mean, no division by the std', () => {
    // mean of [1, 0, 0.5, 0.5] is 0.5
    expect(groupAdvantages([1, 0, 0.5, 0.5], 'dr-grpo')).toEqual([0.5, -0.5, 0, 0]);
    // mean of [0.85, -0.2, 0.4] is 1.05 / 3 = 0.35
    const a = groupAdvantages([0.85, -0.2, 0.4], 'dr-grpo');
    expect(a[0]).toBeCloseTo(0.5, 12);
    expect(a[1]).toBeCloseTo(-0.55, 12);
    expect(a[2]).toBeCloseTo(0.05, 12);
    expect(a.reduce((s, x) => s + x, 0)).toBeCloseTo(0, 12);
  });

  it('GRPO: also divided by the group std (population, plus eps)', () => {
    // [1, 0, 0.5, 0.5]: deviations ±0.5, 0, 0 -> variance (0.25 + 0.25) / 4 = 0.125, std = 0.35355...
    const std = Math.sqrt(0.125);
    const a = groupAdvantages([1, 0, 0.5, 0.5], 'grpo');
    expect(a[0]).toBeCloseTo(0.5 / (std + GRPO_STD_EPS), 12);
    expect(a[1]).toBeCloseTo(-0.5 / (std + GRPO_STD_EPS), 12);
    expect(a[2]).toBe(0);
    // Two rollouts 1 and 0: ±1 after normalisation (up to eps).
    const b = groupAdvantages([1, 0], 'grpo');
    expect(b[0]).toBeCloseTo(1, 5);
    expect(b[1]).toBeCloseTo(-1, 5);
  });

  it('an all-equal group has zero advantages under both (even with float noise)', () => {
    expect(groupAdvantages([0.3, 0.3, 0.3], 'dr-grpo')).toEqual([0, 0, 0]);
    expect(groupAdvantages([0.1 + 0.2, 0.3, 0.3], 'grpo')).toEqual([0, 0, 0]);
    expect(allEqual([-0.2, -0.2])).toBe(true);
    expect(allEqual([-0.2, 0])).toBe(false);
    expect(groupAdvantages([], 'grpo')).toEqual([]);
  });
});

describe('dynamic sampling', () => {
  /** Groups whose rewards come from a fixed list, one per query, in order. */
  function sampler(rewardsPerQuery: number[][]) {
    let next = 0;
    const calls: number[] = [];
    const sample = async (n: number): Promise<Group<string>[]> => {
      calls.push(n);
      const out: Group<string>[] = [];
      for (let i = 0; i < n && next < rewardsPerQuery.length; i++, next++) out.push({ query: next, rewards: rewardsPerQuery[next]!, rollouts: rewardsPerQuery[next]!.map((_, j) => `q${next}#${j}`) });
      return out;
    };
    return { sample, calls };
  }
  const data = [[1, 1], [0, 1], [0, 0], [0.5, 0], [1, 1], [0.2, 0.4], [0, 0], [1, 0]];

  it('off keeps every group', async () => {
    const s = sampler(data);
    const r = await collectBatch(4, 'off', 4, s.sample);
    expect(r.kept.map((g) => g.query)).toEqual([0, 1, 2, 3]);
    expect(r.consumed).toBe(4);
    expect(s.calls).toEqual([4]);
  });

  it('filter drops groups with no reward variance and samples nothing more', async () => {
    const s = sampler(data);
    const r = await collectBatch(4, 'filter', 4, s.sample);
    expect(r.kept.map((g) => g.query)).toEqual([1, 3]);
    expect(r.sampled.map((g) => g.query)).toEqual([0, 1, 2, 3]);
    expect(r.consumed).toBe(4);
    expect(r.refillRounds).toBe(0);
  });

  it('refill samples replacements until the batch is full of mixed groups', async () => {
    const s = sampler(data);
    const r = await collectBatch(4, 'refill', 4, s.sample);
    // First round: 0..3 -> mixed 1, 3. Refill 2: queries 4, 5 -> mixed 5. Refill 1: query 6 -> none. Refill 1: query 7 -> mixed.
    expect(s.calls).toEqual([4, 2, 1, 1]);
    expect(r.kept.map((g) => g.query)).toEqual([1, 3, 5, 7]);
    expect(r.consumed).toBe(8);
    expect(r.refillRounds).toBe(3);
    expect(r.sampled).toHaveLength(8);
  });

  it('refill stops at the round limit or when the queries run out', async () => {
    const limited = await collectBatch(4, 'refill', 1, sampler(data).sample);
    expect(limited.kept.map((g) => g.query)).toEqual([1, 3, 5]);
    expect(limited.refillRounds).toBe(1);
    const short = await collectBatch(4, 'refill', 10, sampler([[0, 0], [1, 0], [0, 0]]).sample);
    expect(short.kept.map((g) => g.query)).toEqual([1]);
    expect(short.consumed).toBe(3);
  });
});
