import type { AdamParams, Datum, LossConfig, LossFn, TrainingBackend } from '../backend/types.js';
import { NumericalError } from '../errors.js';

/**
 * The learner's side of a GRPO step: the batch's datums split into minibatches of whole groups,
 * each taking a forwardBackward and an optimiser step, `ppoEpochs` times over (verl's `ppo_epochs`
 * and mini-batches; 1 x 1 is one update per batch, the setting of the blog post
 * "Training Search Agents with GRPO"). The sampler's logprobs stay
 * those the rollouts were sampled with, so from the second update on the importance ratio moves
 * away from 1 and ppo / cispo clip.
 */
export interface UpdateOptions {
  loss: LossFn;
  lossConfig: LossConfig;
  adam: AdamParams;
  ppoEpochs: number;
  minibatches: number;
  /**
   * The advantages were divided by the batch's trained tokens (lossScale 'tokens'): with several
   * minibatches, each is rescaled so that its loss is its own mean.
   */
  perMinibatchMean: boolean;
}

export interface UpdateResult {
  /** forwardBackward's numbers: loss summed over updates, per-token means weighted by tokens. */
  fb: Record<string, number>;
  /** The last optimiser step's metrics. */
  opt: Record<string, number>;
  updates: number;
}

/** Split items into at most n contiguous parts of whole groups (group[i]: item i's group), about equal in size. */
export function minibatchesOf<T>(items: T[], group: number[], n: number): T[][] {
  const bounds: number[] = [0];
  for (let i = 1; i < items.length; i++) if (group[i] !== group[i - 1]) bounds.push(i);
  const groups = bounds.map((b, k) => items.slice(b, bounds[k + 1] ?? items.length));
  const parts: T[][] = [];
  const k = Math.min(n, groups.length);
  let g = 0;
  for (let p = 0; p < k; p++) {
    // Groups left over the parts left: each part takes its share of what remains.
    const take = Math.round((groups.length - g) / (k - p));
    parts.push(groups.slice(g, g + take).flat());
    g += take;
  }
  return parts.filter((p) => p.length > 0);
}

const tokensOf = (datums: Datum[]) => datums.reduce((s, d) => s + d.weights.reduce((a, w) => a + w, 0), 0);

export async function updateOnBatch(backend: TrainingBackend, datums: Datum[], group: number[], o: UpdateOptions): Promise<UpdateResult> {
  if (datums.length === 0) {
    // An optimiser step even on an empty batch keeps step numbers and Adam's clock aligned.
    return { fb: {}, opt: (await backend.optimStep({ ...o.adam })).metrics, updates: 1 };
  }
  let parts = minibatchesOf(datums, group, o.minibatches);
  if (o.perMinibatchMean && parts.length > 1) {
    const total = tokensOf(datums);
    parts = parts.map((p) => {
      const k = total / tokensOf(p);
      return p.map((d) => ({ ...d, advantages: d.advantages!.map((a) => a * k) }));
    });
  }
  const sums: Record<string, number> = {};
  let tokens = 0, loss = 0, updates = 0;
  let opt: Record<string, number> = {};
  for (let epoch = 0; epoch < o.ppoEpochs; epoch++) {
    for (const part of parts) {
      const r = await backend.forwardBackward(part, o.loss, o.lossConfig);
      if (!Number.isFinite(r.loss)) throw new NumericalError(`the loss is not finite (${r.loss})`);
      loss += r.loss;
      const t = r.metrics['tokens:sum'] ?? 0;
      tokens += t;
      for (const [k, v] of Object.entries(r.metrics)) if (k.endsWith(':mean')) sums[k] = (sums[k] ?? 0) + v * t;
      opt = (await backend.optimStep({ ...o.adam })).metrics;
      const gradNorm = opt['grad_norm'];
      if (gradNorm !== undefined && !Number.isFinite(gradNorm)) throw new NumericalError(`the gradient is not finite (norm ${gradNorm})`);
      updates += 1;
    }
  }
  const fb: Record<string, number> = { loss, 'tokens:sum': tokens };
  for (const [k, v] of Object.entries(sums)) fb[k] = tokens ? v / tokens : 0;
  return { fb, opt, updates };
}
