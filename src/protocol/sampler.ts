/**
 * The model's side of the token protocol: a prompt's tokens in, sampled tokens (and their logprobs)
 * out. The token-level agent drives one; a training backend's `saveWeightsForSampler` returns one.
 */

export interface SamplingParams {
  maxTokens: number;
  temperature: number;
  topP?: number;
  topK?: number;
  /** Stop on any of these token ids (the stop token is included in the output). */
  stop?: number[];
  /** Stop once the written text contains any of these strings (the completing token is included). */
  stopStrings?: string[];
  seed?: number;
  /** Also return this many most likely tokens (0-20) and their logprobs at each position. */
  topLogprobs?: number;
}

export interface SampledSequence {
  tokens: number[];
  logprobs: number[];
  stopReason: 'stop' | 'length';
  /** With SamplingParams.topLogprobs: per position, the most likely tokens, most likely first. */
  topLogprobs?: { token: number; logprob: number }[][];
}

export interface Sampler {
  /** Model name or path the weights came from, for the rollout record. */
  readonly modelPath: string;
  sample(prompt: number[], params: SamplingParams, numSamples?: number): Promise<SampledSequence[]>;
  /** Logprob of each token given its prefix (first entry null), for checking train/infer parity. */
  computeLogprobs(tokens: number[]): Promise<(number | null)[]>;
}
