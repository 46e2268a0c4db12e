import { randomInt } from 'node:crypto';
import { InputError } from '../../errors.js';
import type { BpeTokenizer } from '../../protocol/compact/bpe.js';
import type { SampledSequence, Sampler, SamplingParams } from '../types.js';
import { seededRandom } from '../../random.js';
import { Model, type ModelConfig } from './model.js';

/**
 * Samples from a frozen copy of the local model's weights, with a KV cache (the model's per-layer
 * q|k|v rows: the prompt is run once, then one row per new token).
 *
 * Logprobs: each sampled token's logprob is log softmax(logits / temperature) at that token, taken
 * before top-k / top-p truncation. At temperature 1 this is bit-for-bit the learner's logprob for the
 * same weights (same kernels, and every row is computed the same way whether alone or in a batch),
 * so importance ratios start at exactly 1. At temperature 0 (greedy) it is the temperature-1 logprob.
 */
/** How long sample() computes before it lets other work on the event loop run. */
const YIELD_EVERY_MS = 10;

export class LocalSampler implements Sampler {
  private readonly model: Model;
  /**
   * KV caches of recent sequences (most recent last). An agent re-sends the whole episode every
   * turn, and a trainer interleaves many episodes: a new prompt resumes from the cached sequence
   * sharing its longest prefix, so only the new tokens are run.
   */
  private readonly cache: { tokens: number[]; kv: Float32Array }[] = [];
  private cacheBytes = 0;
  /** Most memory the KV caches may hold. */
  static cacheLimitBytes = 128 * 1024 * 1024;

  constructor(
    readonly modelPath: string,
    readonly config: ModelConfig,
    params: Float32Array,
    readonly tokenizer: BpeTokenizer,
    kernels: 'auto' | 'wasm-simd' | 'js' = 'auto',
  ) {
    this.model = new Model(config, { training: false, kernels });
    this.model.params.a.set(params);
  }

  /** Token positions run through the network so far (prompt rows not served by the cache, plus sampled ones). */
  get rowsRun(): number {
    return this.model.rowsRun;
  }

  /** Sampling calls run one at a time (they share the model's rows); the queue's tail. */
  private busy: Promise<unknown> = Promise.resolve();

  /**
   * Like sampleSync, but gives the event loop a turn every few milliseconds, so a server that
   * samples many tokens still answers other requests meanwhile. Calls are queued: the KV rows are
   * shared, so two samplings never interleave.
   */
  sample(prompt: number[], params: SamplingParams, numSamples = 1, onToken?: (t: SampledToken) => void): Promise<SampledSequence[]> {
    const run = this.busy.then(async () => {
      const steps = this.steps(prompt, params, numSamples);
      let slice = performance.now();
      for (let r = steps.next(); ; r = steps.next()) {
        if (r.done) return r.value;
        onToken?.(r.value);
        if (performance.now() - slice > YIELD_EVERY_MS) {
          await new Promise((wake) => setImmediate(wake));
          slice = performance.now();
        }
      }
    });
    this.busy = run.catch(() => undefined);
    return run;
  }

  sampleSync(prompt: number[], params: SamplingParams, numSamples = 1): SampledSequence[] {
    const steps = this.steps(prompt, params, numSamples);
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
    }
  }

  /** The sampling loop, pausing (yield) after each token with that token; returns the sequences. */
  private *steps(prompt: number[], params: SamplingParams, numSamples: number): Generator<SampledToken, SampledSequence[]> {
    const c = this.config, m = this.model, V = c.vocabSize;
    this.checkTokens(prompt, 'prompt');
    if (prompt.length === 0) throw new InputError('sampling: the prompt is empty');
    if (prompt.length >= c.context) throw new InputError(`sampling: prompt of ${prompt.length} tokens leaves no room in the model context of ${c.context}`);
    if (!Number.isInteger(params.maxTokens) || params.maxTokens < 1) throw new InputError(`sampling: maxTokens must be a whole number >= 1, got ${params.maxTokens}`);
    if (!(params.temperature >= 0)) throw new InputError(`sampling: temperature must be >= 0, got ${params.temperature}`);
    if (params.topP !== undefined && !(params.topP > 0 && params.topP <= 1)) throw new InputError(`sampling: topP must be in (0, 1], got ${params.topP}`);
    if (params.topK !== undefined && !(Number.isInteger(params.topK) && (params.topK === -1 || params.topK >= 1))) throw new InputError(`sampling: topK must be -1 or a whole number >= 1, got ${params.topK}`);
    if (!Number.isInteger(numSamples) || numSamples < 1) throw new InputError(`sampling: numSamples must be a whole number >= 1, got ${numSamples}`);
    const stop = new Set(params.stop ?? []);
    const stopStrings = (params.stopStrings ?? []).filter((x) => x.length > 0);
    const topN = params.topLogprobs ?? 0;
    if (!(Number.isInteger(topN) && topN >= 0 && topN <= 20)) throw new InputError(`sampling: topLogprobs must be a whole number in [0, 20], got ${params.topLogprobs}`);
    const rng = seededRandom(params.seed ?? randomInt(2 ** 31));
    const temp = params.temperature;
    const P = prompt.length;
    // Resume from the longest cached prefix; the last prompt row always runs (its logits are needed).
    const from = Math.min(this.restore(prompt), P - 1);
    m.forward(prompt, from, P - 1);
    const out: SampledSequence[] = [];
    for (let s = 0; s < numSamples; s++) {
      const seq = prompt.slice();
      const tokens: number[] = [], logprobs: number[] = [], tops: { token: number; logprob: number }[][] = [];
      let stopReason: SampledSequence['stopReason'] = 'length';
      // Rows < P hold the prompt (the cache); each sample overwrites only rows from P on.
      for (;;) {
        const row = m.logits.a.subarray((seq.length - 1) * V, seq.length * V);
        // One softmax per token gives both the distribution and the chosen token's logprob.
        const t = temp > 0 ? temp : 1;
        const lse = this.distribution(row, t);
        const tok = temp > 0 ? pick(m.rowScratch.a, params.topK ?? -1, params.topP ?? 1, rng) : argmax(row);
        // The kernel's own arithmetic for the learner's logprob: f32(logit - lse).
        const lpOf = (i: number) => Math.fround((t === 1 ? row[i]! : Math.fround(row[i]! / t)) - lse);
        const logprob = lpOf(tok);
        logprobs.push(logprob);
        const top = topN ? topIds(m.rowScratch.a, topN).map((i) => ({ token: i, logprob: lpOf(i) })) : undefined;
        if (top) tops.push(top);
        tokens.push(tok);
        seq.push(tok);
        yield { sample: s, token: tok, logprob, ...(top ? { top } : {}) };
        if (stop.has(tok) || (stopStrings.length && this.endsWithStop(tokens, stopStrings))) {
          stopReason = 'stop';
          break;
        }
        if (tokens.length >= params.maxTokens || seq.length >= c.context) break;
        m.forward(seq, seq.length - 1);
      }
      out.push({ tokens, logprobs, stopReason, ...(topN ? { topLogprobs: tops } : {}) });
      // Rows run: every token but the last sampled one.
      this.remember(seq.slice(0, -1));
    }
    return out;
  }

  /**
   * Whether the text written so far contains a stop string that the last token completed (the
   * text before that token did not contain it). The stop token is kept, as with stop token ids.
   */
  private endsWithStop(tokens: number[], stopStrings: string[]): boolean {
    const text = this.tokenizer.decode(tokens);
    const before = this.tokenizer.decode(tokens.slice(0, -1));
    return stopStrings.some((x) => text.includes(x) && !before.includes(x));
  }

  /** Load the cached KV rows sharing the longest prefix with `tokens`; returns that prefix length. */
  private restore(tokens: number[]): number {
    let best = -1, bestLen = 0;
    this.cache.forEach((e, i) => {
      const n = Math.min(e.tokens.length, tokens.length);
      let k = 0;
      while (k < n && e.tokens[k] === tokens[k]) k++;
      if (k > bestLen) {
        bestLen = k;
        best = i;
      }
    });
    if (best < 0) return 0;
    const e = this.cache[best]!;
    // The entry stores rows [0, e.tokens.length); the layout is per layer, so copy layer by layer.
    const w = 3 * this.config.dModel, n = e.tokens.length;
    const rows = new Float32Array(this.config.nLayers * bestLen * w);
    for (let l = 0; l < this.config.nLayers; l++) rows.set(e.kv.subarray(l * n * w, l * n * w + bestLen * w), l * bestLen * w);
    this.model.importKV(rows, bestLen);
    this.cache.push(...this.cache.splice(best, 1));
    return bestLen;
  }

  private remember(tokens: number[]): void {
    if (tokens.length === 0) return;
    // A sequence that extends a cached one replaces it.
    for (let i = this.cache.length - 1; i >= 0; i--) {
      const e = this.cache[i]!;
      if (e.tokens.length <= tokens.length && e.tokens.every((t, k) => t === tokens[k])) {
        this.cacheBytes -= e.kv.byteLength;
        this.cache.splice(i, 1);
      }
    }
    const kv = this.model.exportKV(tokens.length);
    this.cache.push({ tokens, kv });
    this.cacheBytes += kv.byteLength;
    while (this.cacheBytes > LocalSampler.cacheLimitBytes && this.cache.length > 1) this.cacheBytes -= this.cache.shift()!.kv.byteLength;
  }

  /** Queued behind any sampling in progress: both use the model's rows. */
  computeLogprobs(tokens: number[]): Promise<(number | null)[]> {
    const run = this.busy.then(() => this.computeLogprobsSync(tokens));
    this.busy = run.catch(() => undefined);
    return run;
  }

  computeLogprobsSync(tokens: number[]): (number | null)[] {
    this.checkTokens(tokens, 'tokens');
    if (tokens.length > this.config.context) throw new InputError(`computeLogprobs: ${tokens.length} tokens exceed the model context of ${this.config.context}`);
    if (tokens.length === 0) return [];
    const m = this.model;
    // Every row's logits are needed, so no cache here: run the whole sequence.
    m.forward(tokens.slice(0, -1), 0);
    m.logprobs(tokens.slice(1));
    return [null, ...Array.from(m.lp.a.subarray(0, tokens.length - 1))];
  }

  private checkTokens(tokens: number[], what: string): void {
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (!Number.isInteger(t) || t < 0 || t >= this.config.vocabSize) throw new InputError(`sampling: ${what}[${i}] = ${t} is not a token id of this model (vocabulary ${this.config.vocabSize})`);
    }
  }

  /** softmax(row / temperature) into rowScratch, through the learner's kernel; returns its log-sum-exp. */
  private distribution(row: Float32Array, temp: number): number {
    const m = this.model;
    this.scaled(row, temp);
    m.targets.a[0] = -1;
    m.k.softmaxRows(m.rowScratch, m.targets, m.lp, m.entropy, m.rowLse, 1, this.config.vocabSize);
    return m.rowLse.a[0]!;
  }

  private scaled(row: Float32Array, temp: number): void {
    const s = this.model.rowScratch.a;
    if (temp === 1) s.set(row);
    else for (let i = 0; i < row.length; i++) s[i] = row[i]! / temp;
  }
}

/** One token as it is sampled (for streaming). */
export interface SampledToken {
  sample: number;
  token: number;
  logprob: number;
  top?: { token: number; logprob: number }[];
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
