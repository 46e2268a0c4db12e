import { InputError } from '../../errors.js';
import type { AdamParams, Datum } from '../types.js';
import type { LocalBackend } from './backend.js';
import { seededRandom } from '../../random.js';

export interface PretrainOptions {
  /** Optimiser steps. */
  steps: number;
  /** Tokens per training window (default: the smaller of 256 and the model context - 1). */
  seqLen?: number;
  /** Windows per step (default 8). */
  batch?: number;
  /** Adam settings; defaults lr 1e-3, betas 0.9/0.95, eps 1e-8, no weight decay, clip 1. */
  adam?: Partial<AdamParams>;
  seed?: number;
  /** Called after each step with the mean loss per token of that step. */
  onStep?: (step: number, lossPerToken: number) => void;
}

export const PRETRAIN_ADAM: AdamParams = { learningRate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 };

/**
 * Plain next-token training on text (corpus paragraphs, rendered transcripts): the texts are
 * tokenized, joined with <|end|> between them, and cut into windows at random offsets (seeded).
 * Cross-entropy on every token, one optimiser step per batch. Returns each step's loss per token.
 */
export function pretrain(backend: LocalBackend, texts: string[], opts: PretrainOptions): number[] {
  const ctx = backend.config.context;
  const seqLen = opts.seqLen ?? Math.min(256, ctx - 1);
  const batch = opts.batch ?? 8;
  if (!Number.isInteger(opts.steps) || opts.steps < 0) throw new InputError(`pretrain: steps must be a whole number >= 0, got ${opts.steps}`);
  if (!Number.isInteger(seqLen) || seqLen < 1 || seqLen >= ctx) throw new InputError(`pretrain: seqLen must be 1 to ${ctx - 1} (the model context - 1), got ${seqLen}`);
  if (!Number.isInteger(batch) || batch < 1) throw new InputError(`pretrain: batch must be a whole number >= 1, got ${batch}`);
  const end = backend.tokenizer.special('<|end|>');
  const stream: number[] = [];
  for (const t of texts) {
    for (const id of backend.tokenizer.encode(t)) stream.push(id);
    stream.push(end);
  }
  if (stream.length < seqLen + 1) throw new InputError(`pretrain: the texts give ${stream.length} tokens, fewer than one window of ${seqLen + 1}`);
  const adam = { ...PRETRAIN_ADAM, ...opts.adam };
  const rng = seededRandom(opts.seed ?? 0);
  const losses: number[] = [];
  for (let step = 0; step < opts.steps; step++) {
    const datums: Datum[] = [];
    for (let b = 0; b < batch; b++) {
      const start = Math.floor(rng() * (stream.length - seqLen));
      const w = stream.slice(start, start + seqLen + 1);
      datums.push({ inputTokens: w.slice(0, -1), targetTokens: w.slice(1), weights: new Array<number>(seqLen).fill(1) });
    }
    const r = backend.forwardBackwardSync(datums, 'cross_entropy');
    backend.optimStepSync(adam);
    const perToken = r.loss / (batch * seqLen);
    losses.push(perToken);
    opts.onStep?.(step, perToken);
  }
  return losses;
}
