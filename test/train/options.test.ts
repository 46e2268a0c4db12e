import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Datum } from '../../src/backend/types.js';
import { DifficultyFilter } from '../../src/train/difficulty.js';
import { applyKlPenalty, klEstimate } from '../../src/train/kl.js';
import { learningRateAt } from '../../src/train/lr-schedule.js';
import { pruneStateCheckpoints } from '../../src/train/retention.js';
import { SamplingPipeline } from '../../src/train/staleness.js';
import { minibatchesOf, updateOnBatch } from '../../src/train/update.js';
import { ensureWasm, TEXTS, tinyBackend, tinyTokenizer } from '../backend/helpers.js';

beforeAll(ensureWasm);

const tok = tinyTokenizer();
const ADAM = { learningRate: 3e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 0 };

/** RL datums whose sampler logprobs are the backend's own (ratio exactly 1 before any update), two groups. */
async function onPolicyDatums(b: ReturnType<typeof tinyBackend>): Promise<{ datums: Datum[]; group: number[] }> {
  const sampler = b.samplerInMemory('policy');
  const datums: Datum[] = [];
  const group: number[] = [];
  for (let g = 0; g < 2; g++) {
    const prompt = tok.encode(TEXTS[g]!).slice(0, 10);
    for (let j = 0; j < 3; j++) {
      const [s] = sampler.sampleSync(prompt, { maxTokens: 8, temperature: 1, seed: 10 * g + j });
      const seq = [...prompt, ...s!.tokens];
      const weights = seq.slice(1).map((_, t) => (t + 1 >= prompt.length ? 1 : 0));
      const lps = seq.slice(1).map((_, t) => (t + 1 >= prompt.length ? s!.logprobs[t + 1 - prompt.length]! : 0));
      const adv = j === 0 ? 1 : -0.5;
      datums.push({ inputTokens: seq.slice(0, -1), targetTokens: seq.slice(1), weights, logprobs: lps, advantages: weights.map((w) => w * adv) });
      group.push(g);
    }
  }
  return { datums, group };
}

describe('learning-rate schedule', () => {
  it('warms up linearly, then holds, decays linearly or along a cosine to the floor at the last step', () => {
    const s = (kind: 'constant' | 'linear' | 'cosine', warmupSteps = 0, minLrRatio = 0) => ({ kind, warmupSteps, minLrRatio });
    expect([1, 5, 10].map((k) => learningRateAt(1, k, 10, s('constant')))).toEqual([1, 1, 1]);
    expect([1, 2, 3, 4].map((k) => learningRateAt(1, k, 10, s('constant', 4)))).toEqual([0.25, 0.5, 0.75, 1]);
    expect(learningRateAt(2, 1, 11, s('linear'))).toBe(2);
    expect(learningRateAt(2, 6, 11, s('linear'))).toBeCloseTo(1, 12);
    expect(learningRateAt(2, 11, 11, s('linear', 0, 0.1))).toBeCloseTo(0.2, 12);
    expect(learningRateAt(1, 3, 5, s('cosine', 2))).toBe(1);
    expect(learningRateAt(1, 5, 7, s('cosine', 2))).toBeCloseTo(0.5, 12);
    expect(learningRateAt(1, 7, 7, s('cosine', 2))).toBeCloseTo(0, 12);
  });
});

describe('ppoEpochs and minibatches', () => {
  it('minibatches hold whole groups', () => {
    expect(minibatchesOf(['a', 'b', 'c', 'd', 'e'], [0, 0, 1, 2, 2], 2)).toEqual([['a', 'b', 'c'], ['d', 'e']]);
    expect(minibatchesOf(['a', 'b', 'c', 'd'], [0, 0, 1, 1], 2)).toEqual([['a', 'b'], ['c', 'd']]);
    expect(minibatchesOf(['a', 'b'], [0, 0], 3)).toEqual([['a', 'b']]);
  });

  it('one update keeps the ratio at exactly 1; more updates move it and ppo clips', async () => {
    const one = tinyBackend(tok);
    const { datums, group } = await onPolicyDatums(one);
    const opts = { loss: 'ppo' as const, lossConfig: {}, adam: ADAM, perMinibatchMean: true };
    const single = await updateOnBatch(one, datums, group, { ...opts, ppoEpochs: 1, minibatches: 1 });
    expect(single.updates).toBe(1);
    expect(single.fb['ratio:mean']).toBe(1);
    expect(single.fb['clip_fraction:mean']).toBe(0);
    const many = tinyBackend(tok);
    const again = await updateOnBatch(many, datums, group, { ...opts, ppoEpochs: 4, minibatches: 2 });
    expect(again.updates).toBe(8);
    expect(again.opt['step']).toBe(8);
    expect(again.fb['ratio:mean']).not.toBe(1);
    expect(again.fb['clip_fraction:mean']).toBeGreaterThan(0);
  });
});

describe('KL penalty to a frozen reference', () => {
  it('is zero against the sampler itself, shifts each written token by coef x estimate otherwise', async () => {
    const b = tinyBackend(tok);
    const { datums } = await onPolicyDatums(b);
    const copy = () => datums.map((d) => ({ ...d, advantages: [...d.advantages!] }));
    // The reference is the sampler's own weights: its logprobs are bit-identical, every estimate 0.
    const same = copy();
    expect(await applyKlPenalty(same, b.samplerInMemory('ref'), 0.5, 'k1')).toBe(0);
    expect(same.map((d) => d.advantages)).toEqual(datums.map((d) => d.advantages));
    // Another reference: advantages of written tokens move by -coef x (q - p); inserted ones stay.
    const other = tinyBackend(tok, undefined, 99).samplerInMemory('other');
    for (const est of ['k1', 'k3'] as const) {
      const shifted = copy();
      const mean = await applyKlPenalty(shifted, other, 0.5, est);
      expect(mean).not.toBe(0);
      if (est === 'k3') expect(mean).toBeGreaterThan(0);
      for (const [i, d] of shifted.entries()) {
        const ref = await other.computeLogprobs([d.inputTokens[0]!, ...d.targetTokens]);
        d.weights.forEach((w, t) => expect(d.advantages![t]).toBeCloseTo(w ? datums[i]!.advantages![t]! - 0.5 * klEstimate(d.logprobs![t]!, ref[t + 1]!, est) : datums[i]!.advantages![t]!, 12));
      }
    }
    expect(klEstimate(-1, -1, 'k3')).toBe(0);
  });
});

describe('keep-last-N checkpoints', () => {
  it('keeps the newest N state files and deletes the rest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-keep-'));
    const records = [0, 1, 2, 3, 4].map((step) => ({ step, path: join(dir, `step-${step}.state.ckpt`) }));
    for (const r of records) writeFileSync(r.path, 'x');
    const removed = pruneStateCheckpoints(records, 2);
    expect(removed.length).toBe(3);
    expect(records.map((r) => existsSync(r.path))).toEqual([false, false, false, true, true]);
    expect(pruneStateCheckpoints(records, 2)).toEqual(records.slice(0, 3).map((r) => r.path));
    expect(records.filter((r) => existsSync(r.path)).length).toBe(2);
  });
});

describe('bounded off-policy sampling', () => {
  it('samples step n+1 with the weights of step n-1 while step n trains (maxStaleness 1); 0 samples each step after the last update', async () => {
    for (const k of [0, 1]) {
      let weights = 0;
      const sampledWith: Record<number, number> = {};
      const pipe = new SamplingPipeline(k, async (step) => {
        sampledWith[step] = weights;
        return step;
      });
      for (let step = 1; step <= 4; step++) {
        expect(await pipe.take(step, 4)).toBe(step);
        await new Promise((r) => setImmediate(r)); // the next batch starts while this one "trains"
        weights = step; // the update of this step
      }
      expect(sampledWith).toEqual(k === 0 ? { 1: 0, 2: 1, 3: 2, 4: 3 } : { 1: 0, 2: 0, 3: 1, 4: 2 });
    }
  });
});

describe('difficulty filter', () => {
  it('skips a task after K flat groups in a row, and never with K = 0', () => {
    const f = new DifficultyFilter(2);
    f.record('a', [1, 1, 1]);
    expect(f.skips('a')).toBe(false);
    f.record('a', [0, 0, 0]);
    expect(f.skips('a')).toBe(true);
    f.record('b', [1, 1]);
    f.record('b', [1, 0]);
    f.record('b', [0, 0]);
    expect(f.skips('b')).toBe(false);
    const off = new DifficultyFilter(0);
    off.record('a', [1, 1]);
    off.record('a', [1, 1]);
    expect(off.skips('a')).toBe(false);
    const replayed = new DifficultyFilter(2);
    replayed.replay([1, 2].flatMap((step) => [0, 1].map(() => ({ taskId: 'a', step, group: 0, reward: { total: 0.5 } as never }))));
    expect(replayed.skips('a')).toBe(true);
  });
});
