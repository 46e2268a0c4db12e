import { addSums, addTokenLoss, clipRange, emptySums, lossMetrics, type LossSums } from '../losses.js';
import type { Datum, ForwardBackwardResult, LossConfig, LossFn } from '../types.js';
import type { Model } from './model.js';

/** What one thread's share of a forwardBackward call produced. */
export interface GradientPart {
  logprobs: number[][];
  /** The loss and the sums over weighted tokens its metrics come from. */
  sums: LossSums;
  /** Sum of the learner's entropy over weighted tokens. */
  entropy: number;
  /** The gradient (worker threads only; the main thread's stays in its model). */
  grads?: Float32Array;
}

/**
 * Forward and backward over each datum in turn, adding the gradient of the summed per-token loss
 * into the model's gradients (with backward false: the forward pass and the loss only, gradients
 * untouched). Datums must have been validated.
 */
export function accumulateGradients(m: Model, datums: Datum[], lossFn: LossFn, config: LossConfig, backward = true): GradientPart {
  const [lo, hi] = clipRange(lossFn, config);
  const part: GradientPart = { logprobs: [], sums: emptySums(), entropy: 0 };
  for (const d of datums) {
    const n = d.inputTokens.length;
    m.forward(d.inputTokens, 0);
    m.logprobs(d.targetTokens);
    const lp = m.lp.a, g = m.g_lp.a;
    for (let t = 0; t < n; t++) {
      const q = d.logprobs?.[t] ?? 0;
      g[t] = addTokenLoss(part.sums, lossFn, { lp: lp[t]!, weight: d.weights[t]!, samplerLogprob: q, advantage: d.advantages?.[t] ?? 0 }, lo, hi).grad;
      if (d.weights[t] !== 0) part.entropy += m.entropy.a[t]!;
    }
    part.logprobs.push(Array.from(lp.subarray(0, n)));
    if (backward) m.backward(n);
  }
  return part;
}

/** Combine the parts (in shard order) into Tinker's result: summed loss, logprobs per datum, metrics. */
export function summarize(parts: GradientPart[], lossFn: LossFn): ForwardBackwardResult {
  const sums = addSums(parts.map((p) => p.sums));
  const entropy = parts.reduce((s, p) => s + p.entropy, 0);
  const metrics = lossMetrics(lossFn, sums, { 'entropy:mean': sums.tokens ? entropy / sums.tokens : 0 });
  return { loss: sums.loss, logprobs: parts.flatMap((p) => p.logprobs), metrics };
}

/**
 * Split datums into at most `k` contiguous shards of about equal cost (tokens, plus the quadratic
 * attention term), keeping their order so that logprobs come back in datum order.
 */
export function splitByTokens(datums: Datum[], k: number): Datum[][] {
  const cost = datums.map((d) => d.inputTokens.length * (1 + d.inputTokens.length / 2048));
  const total = cost.reduce((a, b) => a + b, 0);
  const shards: Datum[][] = [[]];
  let acc = 0;
  datums.forEach((d, i) => {
    const target = (total * shards.length) / k;
    if (acc >= target && shards.length < k && shards.at(-1)!.length) shards.push([]);
    shards.at(-1)!.push(d);
    acc += cost[i]!;
  });
  return shards;
}
