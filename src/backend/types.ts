import type { LossConfig, LossFn } from './losses.js';
import type { Sampler } from '../protocol/sampler.js';

// The sampler contract sits above the backends, with the token protocol the agent drives it through;
// it is re-exported here because every backend returns one.
export type { SampledSequence, Sampler, SamplingParams } from '../protocol/sampler.js';

export type { LossConfig, LossFn };

/**
 * The training backend has Tinker's shape (docs/reference/TINKER_API.md), so the trainer
 * drives the local CPU model and a remote Tinker (or SkyRL) server through one interface.
 * The backend knows nothing about rewards; the trainer knows nothing about the backend.
 */

/**
 * One training sequence, next-token convention: inputTokens = tokens[:-1], targetTokens = tokens[1:];
 * every per-token array has the length of inputTokens. Masked (inserted) positions have weight 0,
 * advantage 0 and logprob 0.
 */
export interface Datum {
  inputTokens: number[];
  targetTokens: number[];
  /** cross_entropy per-token weights; for RL losses, 1 on model-written tokens and 0 elsewhere. */
  weights: number[];
  /** Sampler logprobs of targetTokens (RL losses). */
  logprobs?: number[];
  /** Per-token advantages (RL losses). */
  advantages?: number[];
}


export interface ForwardBackwardResult {
  /** Summed loss over all tokens of all datums (Tinker's reduction). */
  loss: number;
  /** Learner logprobs of each datum's targetTokens. */
  logprobs: number[][];
  metrics: Record<string, number>;
}

export interface AdamParams {
  learningRate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** 0 = off. */
  gradClipNorm: number;
}

export interface TrainingBackend {
  readonly kind: 'local' | 'tinker';
  readonly baseModel: string;
  /** Longest training sequence (inputTokens) the model takes, when the backend knows it. */
  readonly contextLimit: number | undefined;
  forwardBackward(datums: Datum[], lossFn: LossFn, config?: LossConfig): Promise<ForwardBackwardResult>;
  optimStep(adam: AdamParams): Promise<{ metrics: Record<string, number> }>;
  /**
   * Optional: forwardBackward and optimStep submitted back to back, then both awaited. A remote
   * backend (Tinker) saves a round trip and a server clock cycle per step (docs/reference/TINKER_API.md §1 rule 4).
   */
  forwardBackwardAndStep?(datums: Datum[], lossFn: LossFn, config: LossConfig, adam: AdamParams): Promise<{ forwardBackward: ForwardBackwardResult; optim: { metrics: Record<string, number> } }>;
  saveWeightsForSampler(name: string): Promise<Sampler>;
  /** Weights and optimiser state; returns the path (or tinker:// URI) it was saved to. */
  saveState(name: string): Promise<string>;
  loadState(path: string): Promise<void>;
  /** Stop what the backend started (worker threads, connections); the backend is unusable after. */
  close(): Promise<void>;
}
