import type { BpeTokenizer } from '../../protocol/compact/bpe.js';
import type { SampledSequence, SamplingParams } from '../types.js';
import { sampleSeed, SequenceDecoder } from './decode.js';
import { Model, type ModelConfig } from './model.js';

/**
 * Batched decoding on one thread: every sequence in flight has a KV cache of its own (a slot of the
 * model), and each step runs one new row for all of them at once (Model.decodeRows), so the
 * weights are read once per step rather than once per sequence. Requests that arrive while a batch
 * runs join it at the next step (the loop gives the event loop a turn between steps).
 *
 * The slots double as the prefix cache: an episode's next turn re-sends the whole episode, and the
 * slot holding its previous turn (or any slot sharing the prompt's longest prefix, such as a
 * group's first rollout) lets the prompt resume there, so only new rows run. Tokens are chosen by
 * SequenceDecoder, as in the single-sequence sampler, so for the same seed both write the same
 * tokens with the same logprobs (bit for bit: each row is computed as it would be alone).
 */
export interface DecodeJob {
  /** Which weights: jobs of another version wait until the batch in flight has finished. */
  version: number;
  params: Float32Array;
  prompt: number[];
  /** With the seed fixed by the caller. */
  sampling: SamplingParams & { seed: number };
  numSamples: number;
}

interface Slot {
  /** Tokens whose KV rows the slot holds (rows [0, tokens.length)). */
  tokens: number[];
  busy: boolean;
  lastUsed: number;
}

interface Queued {
  job: DecodeJob;
  next: number;
  remaining: number;
  results: SampledSequence[];
  resolve: (r: SampledSequence[]) => void;
  reject: (e: Error) => void;
}

/** Most memory the slots' KV caches of one engine may take. */
const SLOT_BYTES = 256 * 2 ** 20;

/** Slots for a model: `wanted`, fewer when their KV caches would pass SLOT_BYTES. */
export function slotsFor(config: ModelConfig, wanted: number): number {
  const perSlot = config.nLayers * config.context * 3 * config.dModel * 4;
  return Math.max(1, Math.min(wanted, Math.floor(SLOT_BYTES / perSlot)));
}

export class DecodeEngine {
  readonly model: Model;
  private readonly slots: Slot[];
  private readonly queue: Queued[] = [];
  private active: { dec: SequenceDecoder; slot: number; q: Queued }[] = [];
  private loaded = -1;
  private running = false;
  private clock = 0;

  constructor(
    readonly config: ModelConfig,
    private readonly tokenizer: BpeTokenizer,
    kernels: 'auto' | 'wasm-simd' | 'js',
    slots: number,
  ) {
    this.model = new Model(config, { training: false, kernels, kvSlots: slotsFor(config, slots) });
    this.slots = Array.from({ length: this.model.kvSlots }, () => ({ tokens: [], busy: false, lastUsed: 0 }));
  }

  /** Token positions run so far. */
  get rowsRun(): number {
    return this.model.rowsRun;
  }

  /** Queue a job; it resolves with one sequence per sample, in sample order. Its input must have been checked (checkSampling). */
  submit(job: DecodeJob): Promise<SampledSequence[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ job, next: 0, remaining: job.numSamples, results: [], resolve, reject });
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length || this.active.length) {
        this.admit();
        if (this.active.length) this.step();
        await new Promise((wake) => setImmediate(wake));
      }
    } catch (err) {
      for (const q of new Set([...this.queue, ...this.active.map((a) => a.q)])) q.reject(err as Error);
      this.queue.length = 0;
      this.active = [];
      for (const s of this.slots) s.busy = false;
    } finally {
      this.running = false;
    }
  }

  /** Start as many queued samples as there are free slots, in order. */
  private admit(): void {
    while (this.queue.length) {
      const q = this.queue[0]!;
      if (q.job.version !== this.loaded) {
        // New weights: only once the batch in flight is done; every cached row is stale then.
        if (this.active.length) return;
        this.model.params.a.set(q.job.params);
        this.loaded = q.job.version;
        for (const s of this.slots) s.tokens = [];
      }
      const slot = this.prefill(q.job.prompt);
      if (slot < 0) return;
      const s = q.next++;
      if (q.next === q.job.numSamples) this.queue.shift();
      const dec = new SequenceDecoder(q.job.prompt, q.job.sampling, sampleSeed(q.job.sampling.seed, s), s, this.config.context, this.tokenizer);
      const P = q.job.prompt.length, V = this.config.vocabSize;
      dec.next(this.model.logits.a.subarray((P - 1) * V, P * V), this.model);
      if (dec.done) this.finish(dec, slot, q);
      else this.active.push({ dec, slot, q });
    }
  }

  /**
   * Take a slot for `prompt` and run the prompt's rows not already cached, the last one with its
   * logits (in logits row P - 1); returns the slot, or -1 when every slot is busy.
   */
  private prefill(prompt: number[]): number {
    const P = prompt.length;
    let best = -1, bestLen = 0;
    this.slots.forEach((s, i) => {
      const n = Math.min(s.tokens.length, P);
      let k = 0;
      while (k < n && s.tokens[k] === prompt[k]) k++;
      if (k > bestLen || (k === bestLen && k > 0 && best >= 0 && this.slots[best]!.busy && !s.busy)) {
        best = i;
        bestLen = k;
      }
    });
    let slot = best >= 0 && !this.slots[best]!.busy ? best : -1;
    if (slot < 0) {
      // The least recently used free slot; a busy slot's prompt rows are copied there.
      for (let i = 0; i < this.slots.length; i++) if (!this.slots[i]!.busy && (slot < 0 || this.slots[i]!.lastUsed < this.slots[slot]!.lastUsed)) slot = i;
      if (slot < 0) return -1;
      if (best >= 0 && bestLen > 0) this.model.copySlot(best, slot, bestLen);
      else bestLen = 0;
    }
    const from = Math.min(bestLen, P - 1);
    const s = this.slots[slot]!;
    s.busy = true;
    s.tokens = prompt.slice();
    this.model.useSlot(slot);
    this.model.forward(prompt, from, P - 1);
    return slot;
  }

  /** One new row for every active sequence. */
  private step(): void {
    const V = this.config.vocabSize, a = this.active;
    const slots = a.map((x) => x.slot), tokens = a.map((x) => x.dec.seq.at(-1)!), positions = a.map((x) => x.dec.seq.length - 1);
    this.model.decodeRows(slots, tokens, positions);
    const still: typeof a = [];
    a.forEach((x, b) => {
      this.slots[x.slot]!.tokens.push(tokens[b]!);
      x.dec.next(this.model.logits.a.subarray(b * V, (b + 1) * V), this.model);
      if (x.dec.done) this.finish(x.dec, x.slot, x.q);
      else still.push(x);
    });
    this.active = still;
  }

  private finish(dec: SequenceDecoder, slot: number, q: Queued): void {
    const s = this.slots[slot]!;
    s.busy = false;
    s.lastUsed = ++this.clock;
    q.results[dec.sample] = dec.result();
    if (--q.remaining === 0) q.resolve(q.results);
  }
}
