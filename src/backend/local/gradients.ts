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
 * How forwardBackward spends its work. 'loss-rows': the output layer (logits, softmax, loss) runs
 * only on rows whose weight is not 0, and a prompt shared by consecutive datums (a GRPO group's) runs
 * once, forward and backward, with its suffixes' gradients summed into its keys and values; exact
 * up to float rounding, and logprobs are computed on the loss rows only (NaN elsewhere).
 * 'all-rows': every datum whole, logits on every row (the logprob of every position).
 */
export type TrainRows = 'loss-rows' | 'all-rows';

/**
 * Forward and backward over the datums, adding the gradient of the summed per-token loss into the
 * model's gradients (with backward false: the forward pass and the loss only, on every row, and
 * gradients untouched). Datums must have been validated.
 */
export function accumulateGradients(m: Model, datums: Datum[], lossFn: LossFn, config: LossConfig, backward = true, mode: TrainRows = 'loss-rows'): GradientPart {
  const [lo, hi] = clipRange(lossFn, config);
  const part: GradientPart = { logprobs: [], sums: emptySums(), entropy: 0 };
  // The loss of row t (its learner logprob at lp[at]); its gradient goes to g_lp[at].
  const lossAt = (d: Datum, t: number, at: number) => {
    const q = d.logprobs?.[t] ?? 0;
    m.g_lp.a[at] = addTokenLoss(part.sums, lossFn, { lp: m.lp.a[at]!, weight: d.weights[t]!, samplerLogprob: q, advantage: d.advantages?.[t] ?? 0 }, lo, hi).grad;
    if (d.weights[t] !== 0) part.entropy += m.entropy.a[at]!;
  };
  if (mode === 'all-rows' || !backward) {
    for (const d of datums) {
      const n = d.inputTokens.length;
      m.forward(d.inputTokens, 0);
      m.logprobs(d.targetTokens);
      for (let t = 0; t < n; t++) lossAt(d, t, t);
      part.logprobs.push(Array.from(m.lp.a.subarray(0, n)));
      if (backward) m.backward(n);
    }
    return part;
  }
  for (const group of prefixGroups(datums)) {
    const P = group.prefix;
    if (P > 0) {
      m.forward(group.datums[0]!.inputTokens.slice(0, P), 0, P);
      m.beginPrefix(P);
    }
    for (const d of group.datums) {
      const n = d.inputTokens.length;
      m.forward(d.inputTokens, P, n);
      const lossRows: number[] = [];
      for (let t = P; t < n; t++) if (d.weights[t] !== 0) lossRows.push(t);
      m.lossRowLogprobs(lossRows, lossRows.map((t) => d.targetTokens[t]!));
      const lps = new Array<number>(n).fill(NaN);
      lossRows.forEach((t, i) => {
        lossAt(d, t, i);
        lps[t] = m.lp.a[i]!;
      });
      part.logprobs.push(lps);
      m.backwardLossRows(lossRows, P, n);
    }
    if (P > 0) m.backwardPrefix(P);
  }
  return part;
}

/** Shortest prompt worth sharing: below it the bookkeeping costs more than the rows saved. */
const MIN_SHARED_PREFIX = 8;

/**
 * Runs of consecutive datums that share a prefix of input tokens on which every one of them has
 * weight 0 (a GRPO group's prompt), with the prefix's length (0: not shared). The prefix stops
 * short of each datum's last row, so every suffix has a row of its own.
 */
export function prefixGroups(datums: Datum[]): { prefix: number; datums: Datum[] }[] {
  const zeroRun = (d: Datum) => {
    let k = 0;
    while (k < d.weights.length && d.weights[k] === 0) k++;
    return Math.min(k, d.inputTokens.length - 1);
  };
  const out: { prefix: number; datums: Datum[] }[] = [];
  for (const d of datums) {
    const g = out.at(-1);
    if (g) {
      const first = g.datums[0]!.inputTokens, x = d.inputTokens;
      let p = Math.min(g.datums.length > 1 ? g.prefix : zeroRun(g.datums[0]!), zeroRun(d));
      let k = 0;
      while (k < p && first[k] === x[k]) k++;
      p = k;
      if (p >= MIN_SHARED_PREFIX) {
        g.prefix = p;
        g.datums.push(d);
        continue;
      }
    }
    out.push({ prefix: 0, datums: [d] });
  }
  return out;
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
 * attention term), keeping their order so that logprobs come back in datum order. With 'loss-rows'
 * a chain of datums sharing a prefix is cut where the costs balance, and each shard that holds
 * part of it runs the prefix again: a GRPO batch whose rollouts all share the system prompt is one
 * chain, and kept whole it would leave every other thread idle.
 */
export function splitByTokens(datums: Datum[], k: number, mode: TrainRows = 'all-rows'): Datum[][] {
  // Rows [from, n): each row, and its attention over the rows before it.
  const rowsCost = (n: number, from = 0) => (n - from) * (1 + (n + from) / 2048);
  const units = mode === 'loss-rows' ? prefixGroups(datums) : datums.map((d) => ({ prefix: 0, datums: [d] }));
  const cost = units.reduce((s, u) => s + rowsCost(u.prefix) + u.datums.reduce((t, d) => t + rowsCost(d.inputTokens.length, u.prefix), 0), 0);
  // Cut with the shares of `total`; `again` is the cost of the prefixes the cuts run a second time.
  const cut = (total: number) => {
    const shards: Datum[][] = [[]];
    let acc = 0, again = 0;
    for (const u of units) {
      u.datums.forEach((d, j) => {
        const rows = rowsCost(d.inputTokens.length, u.prefix) + (j === 0 ? rowsCost(u.prefix) : 0);
        // A new shard starts before the datum that would carry this one past its share by more than half its cost.
        if (shards.length < k && shards.at(-1)!.length && acc + rows / 2 > (total * shards.length) / k) {
          shards.push([]);
          if (j > 0) (acc += rowsCost(u.prefix), again += rowsCost(u.prefix));
        }
        shards.at(-1)!.push(d);
        acc += rows;
      });
    }
    return { shards, again };
  };
  // Once more with the prefixes the first cut runs twice counted in, so that the shares stay equal.
  return cut(cost + cut(cost).again).shards;
}
