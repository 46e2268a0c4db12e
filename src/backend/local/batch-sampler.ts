import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BpeTokenizer } from '../../protocol/compact/bpe.js';
import type { SampledSequence, Sampler, SamplingParams } from '../types.js';
import { DecodeEngine } from './batch.js';
import { checkSampling, requestSeed } from './decode.js';
import type { ModelConfig } from './model.js';
import { LocalSampler } from './sampler.js';

/** What the main thread sends a decoding worker, and what comes back. */
export interface DecodeRequest {
  id: number;
  version: number;
  /** The weights, the first time this worker is sent this version. */
  params?: Float32Array;
  prompt: number[];
  sampling: SamplingParams & { seed: number };
  numSamples: number;
}

export type DecodeReply = { id: number; sequences: SampledSequence[]; rowsRun: number } | { id: number; error: string };

/** Where batched decoding runs: engines in worker threads, or one on this thread. */
export interface DecodeHost {
  decode(version: number, params: Float32Array, prompt: number[], sampling: SamplingParams & { seed: number }, numSamples: number): Promise<SampledSequence[]>;
  readonly rowsRun: number;
  close(): Promise<void>;
}

/** Sequences in flight per engine: an episode keeps its slot (its KV cache) between turns. */
const SLOTS_PER_ENGINE = 24;

/** The compiled worker script; absent when running from TypeScript sources (tests), so no workers then. */
function workerFile(): string | null {
  const path = fileURLToPath(new URL('./sampler-worker.js', import.meta.url));
  return existsSync(path) ? path : null;
}

/** Decoding threads: one per core up to 2 (the main thread meanwhile runs the environment). */
export function defaultDecodeThreads(): number {
  return workerFile() ? Math.min(2, availableParallelism()) : 0;
}

/** One engine on this thread (no workers, or threads 0). */
export class InThreadHost implements DecodeHost {
  private readonly engine: DecodeEngine;
  constructor(config: ModelConfig, tokenizer: BpeTokenizer, kernels: 'auto' | 'wasm-simd' | 'js', slots = SLOTS_PER_ENGINE) {
    this.engine = new DecodeEngine(config, tokenizer, kernels, slots);
  }
  get rowsRun(): number {
    return this.engine.rowsRun;
  }
  decode(version: number, params: Float32Array, prompt: number[], sampling: SamplingParams & { seed: number }, numSamples: number): Promise<SampledSequence[]> {
    return this.engine.submit({ version, params, prompt, sampling, numSamples });
  }
  async close(): Promise<void> {}
}

/**
 * A prompt follows the worker holding its longest prefix only while that worker has at most this
 * many more requests in flight than the least busy one. The old limit (half the 24 slots) was above
 * the trainer's concurrency of 8, so one worker took every request and the other idled.
 */
const MAX_IMBALANCE = 2;

/**
 * Engines in worker threads. A prompt goes to the worker whose recent sequences share a longer
 * prefix with it than the least busy worker's do (an episode's earlier turn, or its group's
 * prompt: that worker holds the KV rows), unless that worker is busier by more than MAX_IMBALANCE;
 * else to the one with the fewest requests in flight. A prefix every worker holds (the system
 * prompt) does not count.
 */
export class WorkerHost implements DecodeHost {
  private readonly workers: { w: Worker; inFlight: number; recent: number[][]; sent: Set<number>; rowsRun: number; requests: number }[];
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (s: SampledSequence[]) => void; reject: (e: Error) => void; worker: number }>();

  constructor(config: ModelConfig, tokenizer: BpeTokenizer, kernels: 'auto' | 'wasm-simd' | 'js', threads: number, slots = SLOTS_PER_ENGINE) {
    const file = workerFile();
    if (!file) throw new Error('decoding workers need the compiled backend (npm run build)');
    this.workers = Array.from({ length: threads }, (_, i) => {
      const w = new Worker(file, { workerData: { config, tokenizer: tokenizer.data, kernels, slots } });
      w.on('message', (msg: DecodeReply) => {
        const p = this.waiting.get(msg.id);
        if (!p) return;
        this.waiting.delete(msg.id);
        const me = this.workers[i]!;
        me.inFlight -= 1;
        if (me.inFlight === 0) me.w.unref();
        if ('error' in msg) p.reject(new Error(`decoding worker: ${msg.error}`));
        else {
          me.rowsRun = msg.rowsRun;
          p.resolve(msg.sequences);
        }
      });
      w.on('error', (err) => {
        for (const [id, p] of this.waiting) if (p.worker === i) (this.waiting.delete(id), p.reject(err));
        this.workers[i]!.inFlight = 0;
        w.unref();
      });
      // Idle workers must not keep a finished command alive; decode() refs a worker while it has
      // requests in flight. (After the listeners: adding a 'message' listener refs the port again.)
      w.unref();
      return { w, inFlight: 0, recent: [], sent: new Set<number>(), rowsRun: 0, requests: 0 };
    });
  }

  get rowsRun(): number {
    return this.workers.reduce((s, w) => s + w.rowsRun, 0);
  }

  /** Decode requests each worker was sent (how the load was spread). */
  get requestsPerWorker(): number[] {
    return this.workers.map((w) => w.requests);
  }

  decode(version: number, params: Float32Array, prompt: number[], sampling: SamplingParams & { seed: number }, numSamples: number): Promise<SampledSequence[]> {
    const i = this.route(prompt);
    const me = this.workers[i]!;
    me.requests += 1;
    const id = this.next++;
    const req: DecodeRequest = { id, version, prompt, sampling, numSamples };
    if (!me.sent.has(version)) {
      // The worker keeps this version and the one before it (sampler-worker.ts): mirror that here.
      for (const v of me.sent) if (v < version - 1) me.sent.delete(v);
      me.sent.add(version);
      req.params = params.slice();
    }
    // Ref'd while it has requests in flight: an await on an unref'd worker alone would let the
    // process exit mid-episode.
    if (me.inFlight++ === 0) me.w.ref();
    return new Promise<SampledSequence[]>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, worker: i });
      me.w.postMessage(req, req.params ? [req.params.buffer as ArrayBuffer] : []);
    }).then((seqs) => {
      me.recent.push([...prompt, ...(seqs[0]?.tokens ?? [])]);
      if (me.recent.length > SLOTS_PER_ENGINE) me.recent.shift();
      return seqs;
    });
  }

  private route(prompt: number[]): number {
    const shared = this.workers.map((w) => {
      let longest = 0;
      for (const r of w.recent) {
        const n = Math.min(r.length, prompt.length);
        let k = 0;
        while (k < n && r[k] === prompt[k]) k++;
        longest = Math.max(longest, k);
      }
      return longest;
    });
    const least = this.workers.reduce((b, w, i) => (w.inFlight < this.workers[b]!.inFlight ? i : b), 0);
    const best = shared.reduce((b, n, i) => (n > shared[b]! ? i : b), least);
    // A prefix is worth following only when it saves real work over the least busy worker's, and
    // only while that keeps both workers busy.
    if (shared[best]! - shared[least]! >= 32 && this.workers[best]!.inFlight <= this.workers[least]!.inFlight + MAX_IMBALANCE) return best;
    return least;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((x) => x.w.terminate()));
  }
}

let versions = 0;

/**
 * A sampler that decodes every call's sequences together with the other calls in flight (batched,
 * in worker threads when the backend is compiled): for the same seed, the same tokens and logprobs
 * as LocalSampler. computeLogprobs runs on this thread, through the single-sequence path.
 */
export class BatchSampler implements Sampler {
  private readonly version = ++versions;
  private readonly params: Float32Array;
  private single: LocalSampler | undefined;

  constructor(
    readonly modelPath: string,
    readonly config: ModelConfig,
    params: Float32Array,
    readonly tokenizer: BpeTokenizer,
    private readonly host: DecodeHost,
    private readonly kernels: 'auto' | 'wasm-simd' | 'js' = 'auto',
  ) {
    this.params = params.slice();
  }

  /** Token positions the host's engines have run (all samplers sharing the host). */
  get rowsRun(): number {
    return this.host.rowsRun;
  }

  async sample(prompt: number[], params: SamplingParams, numSamples = 1): Promise<SampledSequence[]> {
    checkSampling(this.config, prompt, params, numSamples);
    const { seed: _, ...rest } = params;
    return this.host.decode(this.version, this.params, prompt, { ...rest, seed: requestSeed(params) }, numSamples);
  }

  computeLogprobs(tokens: number[]): Promise<(number | null)[]> {
    this.single ??= new LocalSampler(this.modelPath, this.config, this.params, this.tokenizer, this.kernels);
    return this.single.computeLogprobs(tokens);
  }
}
