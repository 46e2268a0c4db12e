import { InputError } from '../../errors.js';
import type { BpeTokenizer } from '../../protocol/compact/bpe.js';
import type { SampledSequence, Sampler, SamplingParams } from '../types.js';
import { checkSampling, checkTokens, requestSeed, sampleSeed, SequenceDecoder, type SampledToken } from './decode.js';
import { Model, type ModelConfig } from './model.js';

export type { SampledToken } from './decode.js';

/**
 * Samples from a frozen copy of the local model's weights, one sequence at a time, with a KV cache
 * (the model's per-layer q|k|v rows: the prompt is run once, then one row per new token). Tokens
 * and logprobs are chosen by SequenceDecoder (decode.ts), as in the batched sampler (batch.ts);
 * at temperature 1 the logprobs are bit-for-bit the learner's (same kernels, and every row is
 * computed the same way whether alone or in a batch), so importance ratios start at exactly 1.
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
    checkSampling(c, prompt, params, numSamples);
    const seed = requestSeed(params);
    const P = prompt.length;
    // Resume from the longest cached prefix; the last prompt row always runs (its logits are needed).
    const from = Math.min(this.restore(prompt), P - 1);
    m.forward(prompt, from, P - 1);
    const out: SampledSequence[] = [];
    for (let s = 0; s < numSamples; s++) {
      const dec = new SequenceDecoder(prompt, params, sampleSeed(seed, s), s, c.context, this.tokenizer);
      // Rows < P hold the prompt (the cache); each sample overwrites only rows from P on.
      for (;;) {
        const n = dec.seq.length;
        yield dec.next(m.logits.a.subarray((n - 1) * V, n * V), m);
        if (dec.done) break;
        m.forward(dec.seq, dec.seq.length - 1);
      }
      out.push(dec.result());
      // Rows run: every token but the last sampled one.
      this.remember(dec.seq.slice(0, -1));
    }
    return out;
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
    checkTokens(this.config, tokens, 'tokens');
    if (tokens.length > this.config.context) throw new InputError(`computeLogprobs: ${tokens.length} tokens exceed the model context of ${this.config.context}`);
    if (tokens.length === 0) return [];
    const m = this.model;
    // Every row's logits are needed, so no cache here: run the whole sequence.
    m.forward(tokens.slice(0, -1), 0);
    m.logprobs(tokens.slice(1));
    return [null, ...Array.from(m.lp.a.subarray(0, tokens.length - 1))];
  }
}
