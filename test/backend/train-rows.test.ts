import { beforeAll, describe, expect, it } from 'vitest';
import { prefixGroups, splitByTokens } from '../../src/backend/local/gradients.js';
import { seededRandom } from '../../src/random.js';
import type { Datum, LossFn } from '../../src/backend/types.js';
import { ensureWasm, tinyBackend, tinyTokenizer } from './helpers.js';

beforeAll(ensureWasm);

const tok = tinyTokenizer();
const CONFIG = { context: 96, dModel: 16, nLayers: 2, nHeads: 2 };

/** A GRPO-like group: one prompt (weight 0), then per rollout turns of written (weight 1) and inserted (weight 0) tokens. */
function group(seed: number, size: number, prompt = 30): Datum[] {
  const rng = seededRandom(seed);
  const id = () => 40 + Math.floor(rng() * 260);
  const head = Array.from({ length: prompt }, id);
  return Array.from({ length: size }, () => {
    const tokens = head.slice(), written = head.map(() => 0);
    for (let turn = 0; turn < 2; turn++) {
      for (let i = 0, n = 4 + Math.floor(rng() * 8); i < n; i++) (tokens.push(id()), written.push(1));
      if (turn === 0) for (let i = 0, n = 5 + Math.floor(rng() * 6); i < n; i++) (tokens.push(id()), written.push(0));
    }
    const adv = rng() - 0.5;
    const weights = written.slice(1);
    return { inputTokens: tokens.slice(0, -1), targetTokens: tokens.slice(1), weights, logprobs: weights.map((w) => (w ? -4 - rng() : 0)), advantages: weights.map((w) => w * adv) };
  });
}

function run(datums: Datum[], lossFn: LossFn, trainRows: 'loss-rows' | 'all-rows', oneAtATime = false) {
  const b = tinyBackend(tok, CONFIG);
  b.trainRows = trainRows;
  const rs = oneAtATime ? datums.map((d) => b.forwardBackwardSync([d], lossFn)) : [b.forwardBackwardSync(datums, lossFn)];
  return { loss: rs.reduce((s, r) => s + r.loss, 0), logprobs: rs.flatMap((r) => r.logprobs), metrics: rs[0]!.metrics, grads: Float64Array.from(b.model.grads!.a) };
}

function expectGradsClose(a: Float64Array, b: Float64Array): void {
  let maxAbs = 0, maxDiff = 0;
  for (let i = 0; i < a.length; i++) {
    maxAbs = Math.max(maxAbs, Math.abs(a[i]!));
    maxDiff = Math.max(maxDiff, Math.abs(a[i]! - b[i]!));
  }
  expect(maxAbs).toBeGreaterThan(0);
  expect(maxDiff / maxAbs).toBeLessThan(2e-5);
}

describe('loss-bearing rows only', () => {
  for (const lossFn of ['cross_entropy', 'importance_sampling', 'ppo'] as LossFn[]) {
    it(`${lossFn}: equals the full-logits path on the weighted rows (loss, logprobs, gradient)`, () => {
      // One datum at a time: no prefix sharing, only the output layer's rows differ.
      const datums = group(1, 3);
      const full = run(datums, lossFn, 'all-rows', true);
      const rows = run(datums, lossFn, 'loss-rows', true);
      expect(rows.loss).toBe(full.loss);
      datums.forEach((d, i) =>
        d.weights.forEach((w, t) => {
          if (w !== 0) expect(rows.logprobs[i]![t]).toBe(full.logprobs[i]![t]);
          else expect(rows.logprobs[i]![t]).toBeNaN();
        }),
      );
      expectGradsClose(full.grads, rows.grads);
    });
  }
});

describe('shared prompt prefixes', () => {
  it('finds the groups of consecutive datums that share a weight-0 prefix', () => {
    const a = group(2, 3, 30), b = group(3, 2, 20);
    const groups = prefixGroups([...a, ...b]);
    expect(groups.map((g) => g.datums.length)).toEqual([3, 2]);
    // The prompt's last row predicts the first written token: its weight is 1, so the shared rows stop before it.
    expect(groups.map((g) => g.prefix)).toEqual([29, 19]);
    expect(prefixGroups([a[0]!]).map((g) => g.prefix)).toEqual([0]);
  });

  for (const lossFn of ['importance_sampling', 'cispo'] as LossFn[]) {
    it(`${lossFn}: the shared-prefix gradient and loss equal the unshared computation`, () => {
      const datums = [...group(4, 4), ...group(5, 3, 24)];
      expect(prefixGroups(datums).every((g) => g.prefix > 0)).toBe(true);
      const unshared = run(datums, lossFn, 'loss-rows', true);
      const shared = run(datums, lossFn, 'loss-rows');
      const full = run(datums, lossFn, 'all-rows');
      expect(shared.loss).toBeCloseTo(unshared.loss, 6);
      expect(shared.loss).toBeCloseTo(full.loss, 6);
      datums.forEach((d, i) => d.weights.forEach((w, t) => w !== 0 && expect(shared.logprobs[i]![t]).toBeCloseTo(full.logprobs[i]![t]!, 5)));
      expectGradsClose(unshared.grads, shared.grads);
      expectGradsClose(full.grads, shared.grads);
    });
  }

  it('a thread split cuts the batch where the costs balance, keeping datum order', () => {
    const datums = [...group(6, 4), ...group(7, 4), ...group(8, 4)];
    const shards = splitByTokens(datums, 2, 'loss-rows');
    expect(shards.map((s) => s.length)).toEqual([6, 6]);
    expect(shards.flat()).toEqual(datums);
  });

  it('one prefix shared by every datum (a system prompt) still splits between threads', () => {
    // Every rollout begins with the same system prompt, so prefixGroups sees one chain.
    const datums = [...group(9, 6, 30), ...group(9, 6, 30)];
    expect(prefixGroups(datums).length).toBe(1);
    const shards = splitByTokens(datums, 2, 'loss-rows');
    expect(shards.map((s) => s.length)).toEqual([6, 6]);
    expect(shards.flat()).toEqual(datums);
    // Each shard shares the prefix again on its own thread.
    expect(shards.map((s) => prefixGroups(s).map((g) => g.prefix))).toEqual([[29], [29]]);
  });
});
