import { randomInt } from 'node:crypto';
import { InputError } from '../../errors.js';
import type { BpeTokenizer } from '../../protocol/compact/bpe.js';
import type { SampledSequence, SamplingParams } from '../types.js';
import { seededRandom } from '../../random.js';
import type { Model, ModelConfig } from './model.js';

/**
 * One sequence being decoded: its random stream, the tokens written so far and when it stops. The
 * single-sequence sampler (sampler.ts) and the batched one (batch.ts) both choose every token here,
 * from the logits row the model gave for the sequence's last position, so for the same seed they
 * write the same tokens with the same logprobs.
 *
 * Logprobs: each sampled token's logprob is log softmax(logits / temperature) at that token, taken
 * before top-k / top-p truncation. At temperature 1 this is bit-for-bit the learner's logprob for the
 * same weights. At temperature 0 (greedy) it is the temperature-1 logprob.
 */
export interface SampledToken {
  sample: number;
  token: number;
  logprob: number;
  top?: { token: number; logprob: number }[];
}

/** Check a sampling request against the model; throws InputError naming the bad field. */
export function checkSampling(config: ModelConfig, prompt: number[], params: SamplingParams, numSamples: number): void {
  checkTokens(config, prompt, 'prompt');
  if (prompt.length === 0) throw new InputError('sampling: the prompt is empty');
  if (prompt.length >= config.context) throw new InputError(`sampling: prompt of ${prompt.length} tokens leaves no room in the model context of ${config.context}`);
  if (!Number.isInteger(params.maxTokens) || params.maxTokens < 1) throw new InputError(`sampling: maxTokens must be a whole number >= 1, got ${params.maxTokens}`);
  if (!(params.temperature >= 0)) throw new InputError(`sampling: temperature must be >= 0, got ${params.temperature}`);
  if (params.topP !== undefined && !(params.topP > 0 && params.topP <= 1)) throw new InputError(`sampling: topP must be in (0, 1], got ${params.topP}`);
  if (params.topK !== undefined && !(Number.isInteger(params.topK) && (params.topK === -1 || params.topK >= 1))) throw new InputError(`sampling: topK must be -1 or a whole number >= 1, got ${params.topK}`);
  if (!Number.isInteger(numSamples) || numSamples < 1) throw new InputError(`sampling: numSamples must be a whole number >= 1, got ${numSamples}`);
  const topN = params.topLogprobs ?? 0;
  if (!(Number.isInteger(topN) && topN >= 0 && topN <= 20)) throw new InputError(`sampling: topLogprobs must be a whole number in [0, 20], got ${params.topLogprobs}`);
}

export function checkTokens(config: ModelConfig, tokens: number[], what: string): void {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!Number.isInteger(t) || t < 0 || t >= config.vocabSize) throw new InputError(`sampling: ${what}[${i}] = ${t} is not a token id of this model (vocabulary ${config.vocabSize})`);
  }
}

/**
 * The seed of sample s of a request: the request's own for the first sample, then a mix of it and s,
 * so that each sample's draws are its own (a batch decodes them side by side).
 */
export function sampleSeed(seed: number, s: number): number {
  if (s === 0) return seed;
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (s + 0x632be5ab), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** A request's seed: the given one, or a fresh random one. */
export function requestSeed(params: SamplingParams): number {
  return params.seed ?? randomInt(2 ** 31);
}

export class SequenceDecoder {
  readonly seq: number[];
  readonly tokens: number[] = [];
  readonly logprobs: number[] = [];
  private readonly tops: { token: number; logprob: number }[][] = [];
  private readonly rng: () => number;
  private readonly stop: Set<number>;
  private readonly stopStrings: string[];
  stopReason: SampledSequence['stopReason'] = 'length';
  done = false;

  constructor(
    prompt: number[],
    private readonly params: SamplingParams,
    seed: number,
    readonly sample: number,
    private readonly context: number,
    private readonly tokenizer: BpeTokenizer,
  ) {
    this.seq = prompt.slice();
    this.rng = seededRandom(seed);
    this.stop = new Set(params.stop ?? []);
    this.stopStrings = (params.stopStrings ?? []).filter((x) => x.length > 0);
  }

  /** Choose the next token from `row` (the logits of the sequence's last position), using m's scratch. */
  next(row: Float32Array, m: Model): SampledToken {
    const p = this.params, temp = p.temperature, topN = p.topLogprobs ?? 0;
    // One softmax per token gives both the distribution and the chosen token's logprob.
    const t = temp > 0 ? temp : 1;
    const lse = distribution(m, row, t);
    const tok = temp > 0 ? pick(m.rowScratch.a, p.topK ?? -1, p.topP ?? 1, this.rng) : argmax(row);
    // The kernel's own arithmetic for the learner's logprob: f32(logit - lse).
    const lpOf = (i: number) => Math.fround((t === 1 ? row[i]! : Math.fround(row[i]! / t)) - lse);
    const logprob = lpOf(tok);
    this.logprobs.push(logprob);
    const top = topN ? topIds(m.rowScratch.a, topN).map((i) => ({ token: i, logprob: lpOf(i) })) : undefined;
    if (top) this.tops.push(top);
    this.tokens.push(tok);
    this.seq.push(tok);
    if (this.stop.has(tok) || (this.stopStrings.length && this.endsWithStop())) {
      this.stopReason = 'stop';
      this.done = true;
    } else if (this.tokens.length >= p.maxTokens || this.seq.length >= this.context) this.done = true;
    return { sample: this.sample, token: tok, logprob, ...(top ? { top } : {}) };
  }

  result(): SampledSequence {
    return { tokens: this.tokens, logprobs: this.logprobs, stopReason: this.stopReason, ...(this.params.topLogprobs ? { topLogprobs: this.tops } : {}) };
  }

  /**
   * Whether the text written so far contains a stop string that the last token completed (the
   * text before that token did not contain it). The stop token is kept, as with stop token ids.
   */
  private endsWithStop(): boolean {
    const text = this.tokenizer.decode(this.tokens);
    const before = this.tokenizer.decode(this.tokens.slice(0, -1));
    return this.stopStrings.some((x) => text.includes(x) && !before.includes(x));
  }
}

/** softmax(row / temperature) into m.rowScratch, through the learner's kernel; returns its log-sum-exp. */
function distribution(m: Model, row: Float32Array, temp: number): number {
  const s = m.rowScratch.a;
  if (temp === 1) s.set(row);
  else for (let i = 0; i < row.length; i++) s[i] = row[i]! / temp;
  m.targets.a[0] = -1;
  m.k.softmaxRows(m.rowScratch, m.targets, m.lp, m.entropy, m.rowLse, 1, m.config.vocabSize);
  return m.rowLse.a[0]!;
}

/** The n most probable ids, most probable first (ties: lower id first). */
function topIds(probs: Float32Array, n: number): number[] {
  const best: number[] = [];
  for (let i = 0; i < probs.length; i++) {
    if (best.length === n && probs[i]! <= probs[best[n - 1]!]!) continue;
    let k = best.length === n ? n - 1 : best.length;
    best[k] = i;
    while (k > 0 && probs[best[k - 1]!]! < probs[i]!) {
      best[k] = best[k - 1]!;
      best[--k] = i;
    }
  }
  return best;
}

function argmax(row: Float32Array): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}

/** Draw from probs after top-k and top-p truncation (renormalised). */
function pick(probs: Float32Array, topK: number, topP: number, rng: () => number): number {
  let ids: number[];
  if (topK > 0 || topP < 1) {
    ids = Array.from(probs.keys()).sort((a, b) => probs[b]! - probs[a]! || a - b);
    if (topK > 0) ids = ids.slice(0, topK);
    if (topP < 1) {
      let cum = 0, keep = 0;
      while (keep < ids.length && cum < topP) cum += probs[ids[keep++]!]!;
      ids = ids.slice(0, Math.max(keep, 1));
    }
  } else ids = [];
  const pool = ids.length ? ids : null;
  let total = 0;
  if (pool) for (const i of pool) total += probs[i]!;
  else for (let i = 0; i < probs.length; i++) total += probs[i]!;
  let u = rng() * total;
  if (pool) {
    for (const i of pool) if ((u -= probs[i]!) < 0) return i;
    return pool[pool.length - 1]!;
  }
  for (let i = 0; i < probs.length; i++) if ((u -= probs[i]!) < 0) return i;
  return probs.length - 1;
}
