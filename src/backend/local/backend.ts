import { join, resolve } from 'node:path';
import { InputError, NumericalError } from '../../errors.js';
import { BpeTokenizer } from '../../protocol/compact/bpe.js';
import type { AdamParams, Datum, ForwardBackwardResult, LossConfig, LossFn, TrainingBackend } from '../types.js';
import { validateDatums } from '../validate.js';
import { readCheckpoint, writeCheckpoint, type CheckpointHeader } from './checkpoint.js';
import { accumulateGradients, splitByTokens, summarize, type TrainRows } from './gradients.js';
import { defaultThreads, GradientWorkers } from './gradient-workers.js';
import { Model, ModelConfigSchema, paramShapes, type ModelConfig } from './model.js';
import { LocalSampler } from './sampler.js';
import { BatchSampler, defaultDecodeThreads, InThreadHost, WorkerHost, type DecodeHost } from './batch-sampler.js';

/**
 * Largest weight magnitude the float32 model can run: the product of two weights past 2^64
 * overflows float32, so the next forward pass would give infinities and NaN (a learning rate of
 * 1e30 puts weights near 1e30 while they are still finite numbers).
 */
const MAX_WEIGHT = 2 ** 64;

/** A loss that is not a number stops training before its gradient is applied. */
function finite(r: ForwardBackwardResult): ForwardBackwardResult {
  if (!Number.isFinite(r.loss)) throw new NumericalError(`the loss is not finite (${r.loss})`);
  return r;
}

/**
 * The local training backend: Tinker's interface (docs/reference/TINKER_API.md) over the small CPU model.
 *  - forwardBackward sums per-token losses over tokens and datums (no averaging) and adds the
 *    gradient to the accumulated one; gradients accumulate across calls until optimStep.
 *  - optimStep: Adam with bias correction, decoupled weight decay (AdamW) on weight matrices
 *    only (not on biases, norms), and optional clipping of the global gradient norm first.
 *  - saveWeightsForSampler writes a weights-only checkpoint and returns a sampler on a frozen copy.
 *  - saveState / loadState: weights, Adam moments and step. Gradients accumulated but not yet
 *    applied are not saved (call optimStep first).
 */

/**
 * The default size (with DEFAULT_VOCAB = 2048): 0.28M parameters, small enough for the demo's SFT
 * and GRPO to run in minutes on two cores (see bench/results/local.json); the same as the trainer's
 * default base model.
 */
export const DEFAULT_MODEL: Omit<ModelConfig, 'vocabSize'> = { context: 768, dModel: 64, nLayers: 2, nHeads: 2 };

/**
 * The long-episode size (with DEFAULT_VOCAB: 1.3M parameters): a context of 2,048 tokens for
 * invoice and multi-search episodes, shipped as src/backend/local/assets/local-long.sampler.ckpt.
 */
export const LONG_MODEL: Omit<ModelConfig, 'vocabSize'> = { context: 2048, dModel: 128, nLayers: 4, nHeads: 4 };

export interface LocalBackendOptions {
  /** A checkpoint to start from (weights, tokenizer, and Adam state if it is a 'state' checkpoint). */
  checkpoint?: string;
  /** With no checkpoint: the tokenizer (it fixes vocabSize) and the model size. */
  tokenizer?: BpeTokenizer;
  config?: Partial<Omit<ModelConfig, 'vocabSize'>>;
  /** Seed of the weight initialisation (no checkpoint). */
  seed?: number;
  /** Where saveState and saveWeightsForSampler write (default .sleuth/checkpoints). */
  dir?: string;
  kernels?: 'auto' | 'wasm-simd' | 'js';
  /** Threads for forwardBackward (default: up to 2, see defaultThreads). */
  threads?: number;
  /** Decoding worker threads of the batched sampler (default: up to 2; 0: decode on this thread). */
  decodeThreads?: number;
  /** How forwardBackward spends its work (default 'loss-rows'; see TrainRows). */
  trainRows?: TrainRows;
  /** What saveWeightsForSampler returns (default 'batched'; see LocalBackend.sampling). */
  sampling?: SamplingPath;
}

/**
 * 'batched': saveWeightsForSampler's samplers decode all calls in flight together, in worker
 * threads (BatchSampler); 'single': one sequence at a time on this thread (LocalSampler), the
 * old path. Both give the same tokens and logprobs for a seed.
 */
export type SamplingPath = 'batched' | 'single';

const NAME = /^[A-Za-z0-9_.-]{1,200}$/;

export class LocalBackend implements TrainingBackend {
  readonly kind = 'local' as const;
  readonly baseModel: string;
  readonly model: Model;
  readonly tokenizer: BpeTokenizer;
  readonly dir: string;
  /** Optimiser steps taken. */
  step = 0;
  private readonly adamM: Float32Array;
  private readonly adamV: Float32Array;
  /** Which parameters get weight decay (1) or not (0). */
  private readonly decayMask: Uint8Array;
  private pendingDatums = 0;
  private readonly kernelsKind: 'auto' | 'wasm-simd' | 'js';
  /** Threads forwardBackward uses (this one included); set before the first call. */
  threads: number;
  /**
   * forwardBackward's path: 'loss-rows' for training; 'all-rows' where every position's logprob is
   * wanted (the Tinker API's forward_backward returns them) and as the bench's old path.
   */
  trainRows: TrainRows;
  sampling: SamplingPath;
  private workers: GradientWorkers | undefined;
  /** Decoding worker threads (0 when the compiled worker is absent: decoding on this thread); read when the first batched sampler is made. */
  decodeThreads: number;
  private decodeHost: DecodeHost | undefined;

  constructor(config: ModelConfig, tokenizer: BpeTokenizer, opts: { dir?: string; kernels?: 'auto' | 'wasm-simd' | 'js'; baseModel?: string; threads?: number; decodeThreads?: number; trainRows?: TrainRows; sampling?: SamplingPath } = {}) {
    if (config.vocabSize !== tokenizer.vocabSize) throw new InputError(`model vocabSize ${config.vocabSize} does not match the tokenizer's ${tokenizer.vocabSize}`);
    this.model = new Model(config, { training: true, kernels: opts.kernels });
    this.tokenizer = tokenizer;
    this.dir = resolve(opts.dir ?? '.sleuth/checkpoints');
    this.baseModel = opts.baseModel ?? `local:d${config.dModel}-l${config.nLayers}-h${config.nHeads}-v${config.vocabSize}`;
    this.adamM = new Float32Array(this.model.nParams);
    this.adamV = new Float32Array(this.model.nParams);
    this.decayMask = new Uint8Array(this.model.nParams);
    let off = 0;
    for (const s of paramShapes(config)) {
      if (s.matrix) this.decayMask.fill(1, off, off + s.size);
      off += s.size;
    }
    this.kernelsKind = opts.kernels ?? 'auto';
    this.threads = opts.threads ?? defaultThreads();
    this.decodeThreads = Math.min(opts.decodeThreads ?? defaultDecodeThreads(), defaultDecodeThreads());
    this.trainRows = opts.trainRows ?? 'loss-rows';
    this.sampling = opts.sampling ?? 'batched';
  }

  get config(): ModelConfig {
    return this.model.config;
  }

  get contextLimit(): number {
    return this.model.config.context;
  }

  /**
   * With threads > 1 and more than one datum, the datums are split (balanced by tokens) between
   * worker threads, each with its own copy of the weights; their gradients are added in shard
   * order, so results are deterministic for a given thread count. The main thread only waits: a
   * trainer sampling the next batch meanwhile (maxStaleness > 0) runs its episodes there.
   */
  async forwardBackward(datums: Datum[], lossFn: LossFn, config: LossConfig = {}): Promise<ForwardBackwardResult> {
    const shards = this.threads > 1 && datums.length > 1 ? splitByTokens(datums, this.threads, this.trainRows) : [datums];
    if (shards.length === 1) return this.forwardBackwardSync(datums, lossFn, config);
    this.validate(datums, lossFn);
    // One worker per shard; `threads` may have grown since the workers started.
    if (this.workers && this.workers.count < shards.length) {
      await this.workers.close();
      this.workers = undefined;
    }
    const workers = (this.workers ??= new GradientWorkers(this.config, this.threads, this.kernelsKind));
    const parts = await workers.run(this.model.params.a, shards, lossFn, config, this.trainRows);
    const g = this.model.grads!.a;
    for (const p of parts) for (let i = 0; i < g.length; i++) g[i]! += p.grads![i]!;
    this.pendingDatums += datums.length;
    return finite(summarize(parts, lossFn));
  }

  /** Stop the worker threads (idle ones are unref'd, so they never keep a finished process alive). */
  async close(): Promise<void> {
    await this.workers?.close();
    this.workers = undefined;
    await this.decodeHost?.close();
    this.decodeHost = undefined;
  }

  forwardBackwardSync(datums: Datum[], lossFn: LossFn, config: LossConfig = {}): ForwardBackwardResult {
    this.validate(datums, lossFn);
    const part = accumulateGradients(this.model, datums, lossFn, config, true, this.trainRows);
    this.pendingDatums += datums.length;
    return finite(summarize([part], lossFn));
  }

  /** Tinker's forward: the loss and logprobs of forwardBackward, with no gradient accumulated. */
  forwardSync(datums: Datum[], lossFn: LossFn, config: LossConfig = {}): ForwardBackwardResult {
    this.validate(datums, lossFn);
    return summarize([accumulateGradients(this.model, datums, lossFn, config, false)], lossFn);
  }

  /** Check datums against this model (token ids, lengths, finite values); throws InputError. */
  validate(datums: Datum[], lossFn: LossFn): void {
    validateDatums(datums, lossFn, { context: this.config.context, vocabSize: this.config.vocabSize });
  }

  async optimStep(adam: AdamParams): Promise<{ metrics: Record<string, number> }> {
    return { metrics: this.optimStepSync(adam) };
  }

  optimStepSync(adam: AdamParams): Record<string, number> {
    for (const [k, v] of Object.entries(adam)) if (!Number.isFinite(v)) throw new InputError(`optimStep: ${k} must be a finite number, got ${v}`);
    const { learningRate: lr, beta1, beta2, eps, weightDecay, gradClipNorm } = adam;
    const p = this.model.params.a, g = this.model.grads!.a, M = this.adamM, Vv = this.adamV;
    let sq = 0;
    for (let i = 0; i < g.length; i++) sq += g[i]! * g[i]!;
    const norm = Math.sqrt(sq);
    // Refused before any weight changes: the weights stay those of the last good step.
    if (!Number.isFinite(norm)) throw new NumericalError(`the gradient is not finite (norm ${norm})`);
    const scale = gradClipNorm > 0 && norm > gradClipNorm ? gradClipNorm / norm : 1;
    this.step += 1;
    const bc1 = 1 - beta1 ** this.step, bc2 = 1 - beta2 ** this.step;
    let blownUp: number | undefined;
    for (let i = 0; i < p.length; i++) {
      const gi = g[i]! * scale;
      M[i] = beta1 * M[i]! + (1 - beta1) * gi;
      Vv[i] = beta2 * Vv[i]! + (1 - beta2) * gi * gi;
      const update = M[i]! / bc1 / (Math.sqrt(Vv[i]! / bc2) + eps);
      p[i] = p[i]! - lr * (update + (this.decayMask[i] ? weightDecay * p[i]! : 0));
      if (!(Math.abs(p[i]!) <= MAX_WEIGHT)) blownUp = p[i]!;
    }
    if (blownUp !== undefined) throw new NumericalError(`a weight became ${blownUp} after the update`);
    this.model.zeroGrads();
    const metrics = { step: this.step, grad_norm: norm, grad_clipped: scale < 1 ? 1 : 0, learning_rate: lr, datums: this.pendingDatums };
    this.pendingDatums = 0;
    return metrics;
  }

  async saveWeightsForSampler(name: string): Promise<LocalSampler | BatchSampler> {
    if (this.sampling === 'single') return this.saveWeightsForLocalSampler(name);
    const path = this.pathFor(name, 'sampler');
    this.write(path, name, 'sampler');
    return this.batchSampler(path);
  }

  /** saveWeightsForSampler with the single-sequence sampler (streaming, prompt logprobs: the servers'). */
  saveWeightsForLocalSampler(name: string): LocalSampler {
    const path = this.pathFor(name, 'sampler');
    this.write(path, name, 'sampler');
    return new LocalSampler(path, this.config, this.model.params.a, this.tokenizer, this.kernelsKind);
  }

  /** A batched sampler on the current weights; all of them share this backend's decoding threads. */
  batchSampler(name: string): BatchSampler {
    this.decodeHost ??= this.decodeThreads > 0 ? new WorkerHost(this.config, this.tokenizer, this.kernelsKind, this.decodeThreads) : new InThreadHost(this.config, this.tokenizer, this.kernelsKind);
    return new BatchSampler(name, this.config, this.model.params.a, this.tokenizer, this.decodeHost, this.kernelsKind);
  }

  /** A single-sequence sampler on the current weights without writing a file (for evaluation inside a process). */
  samplerInMemory(name = 'memory'): LocalSampler {
    return new LocalSampler(`${this.baseModel}@${name}`, this.config, this.model.params.a, this.tokenizer, this.kernelsKind);
  }

  async saveState(name: string): Promise<string> {
    const path = this.pathFor(name, 'state');
    this.write(path, name, 'state');
    return path;
  }

  async loadState(path: string): Promise<void> {
    this.loadStateSync(path);
  }

  /**
   * Forget the optimiser: Adam's moments to zero and the step count to 0 (so its bias correction
   * starts over). A run that starts fresh from another run's state checkpoint calls this; keeping
   * the old moments would carry the other run's gradient history into the first updates.
   */
  resetOptimizer(): void {
    this.adamM.fill(0);
    this.adamV.fill(0);
    this.step = 0;
  }

  loadStateSync(path: string): void {
    const { header, tensors } = readCheckpoint(path);
    if (JSON.stringify(header.config) !== JSON.stringify(this.config)) throw new InputError(`checkpoint ${path}: model config ${JSON.stringify(header.config)} differs from this backend's ${JSON.stringify(this.config)}`);
    if (JSON.stringify(header.tokenizer) !== JSON.stringify(this.tokenizer.data)) throw new InputError(`checkpoint ${path}: its tokenizer differs from this backend's`);
    this.model.params.a.set(tensors.params!);
    this.adamM.set(tensors.adamM ?? new Float32Array(this.adamM.length));
    this.adamV.set(tensors.adamV ?? new Float32Array(this.adamV.length));
    this.step = header.step;
    this.model.zeroGrads();
    this.pendingDatums = 0;
  }

  private pathFor(name: string, kind: 'sampler' | 'state'): string {
    if (!NAME.test(name)) throw new InputError(`checkpoint name '${name}' must be 1-200 letters, digits, '.', '_' or '-'`);
    return join(this.dir, `${name}.${kind}.ckpt`);
  }

  private write(path: string, name: string, kind: 'sampler' | 'state'): void {
    const n = this.model.nParams;
    const header: CheckpointHeader = {
      format: 'sleuth-local-lm',
      version: 1,
      kind,
      name,
      config: this.config,
      tokenizer: this.tokenizer.data,
      step: this.step,
      tensors: kind === 'state' ? [{ name: 'params', length: n }, { name: 'adamM', length: n }, { name: 'adamV', length: n }] : [{ name: 'params', length: n }],
    };
    writeCheckpoint(path, header, { params: this.model.params.a, adamM: this.adamM, adamV: this.adamV });
  }
}

/** A backend from a checkpoint, or a freshly initialised model for a tokenizer and size. */
export function createLocalBackend(opts: LocalBackendOptions): LocalBackend {
  if (opts.checkpoint) {
    const { header, tensors } = readCheckpoint(opts.checkpoint);
    const b = new LocalBackend(header.config, new BpeTokenizer(header.tokenizer), { dir: opts.dir, kernels: opts.kernels, threads: opts.threads, decodeThreads: opts.decodeThreads, trainRows: opts.trainRows, sampling: opts.sampling });
    b.model.params.a.set(tensors.params!);
    if (header.kind === 'state') b.loadStateSync(opts.checkpoint);
    else b.step = header.step;
    return b;
  }
  if (!opts.tokenizer) throw new InputError('createLocalBackend: give a checkpoint, or a tokenizer (and optionally a config) for a new model');
  const parsed = ModelConfigSchema.safeParse({ ...DEFAULT_MODEL, ...opts.config, vocabSize: opts.tokenizer.vocabSize });
  if (!parsed.success) throw new InputError(`local model config: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ')}`);
  const b = new LocalBackend(parsed.data, opts.tokenizer, { dir: opts.dir, kernels: opts.kernels, threads: opts.threads, decodeThreads: opts.decodeThreads, trainRows: opts.trainRows, sampling: opts.sampling });
  b.model.init(opts.seed ?? 0);
  return b;
}

/** A sampler straight from a checkpoint file (for `local:PATH` agents and `sleuth serve`). */
export function loadSampler(path: string, kernels: 'auto' | 'wasm-simd' | 'js' = 'auto'): LocalSampler {
  const { header, tensors } = readCheckpoint(path);
  return new LocalSampler(path, header.config, tensors.params!, new BpeTokenizer(header.tokenizer), kernels);
}
