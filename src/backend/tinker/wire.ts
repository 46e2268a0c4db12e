import { z } from 'zod';
import { InputError } from '../../errors.js';
import { LOSSES } from '../losses.js';
import type { AdamParams, Datum, LossConfig, LossFn, SampledSequence, SamplingParams } from '../types.js';

/**
 * Tinker's JSON wire shapes (TINKER_API.md §4, §5, §10, §11), shared by the client and by
 * `sleuth serve-tinker`. Replies are validated with zod where they enter the client; requests are
 * validated where they enter the server. Ids and paths are opaque strings (§1 rule 2).
 */

export const API = '/api/v1';

/** The two dialects (§6, §9, §11): hosted Tinker and SkyRL's tx server. */
export type Flavor = 'tinker' | 'skyrl';

export const TensorDataSchema = z.object({
  data: z.array(z.number()),
  dtype: z.enum(['int64', 'float32']).optional(),
  shape: z.array(z.number().int().min(0)).optional(),
});
export type TensorData = z.infer<typeof TensorDataSchema>;

export const ModelInputSchema = z.object({
  chunks: z.array(z.object({ type: z.literal('encoded_text').optional(), tokens: z.array(z.number().int().min(0)) })),
});
export type ModelInput = z.infer<typeof ModelInputSchema>;

export const WireDatumSchema = z.object({
  model_input: ModelInputSchema,
  loss_fn_inputs: z.record(z.string(), TensorDataSchema),
});
export type WireDatum = z.infer<typeof WireDatumSchema>;

export function modelInput(tokens: number[]): ModelInput {
  return { chunks: [{ type: 'encoded_text', tokens }] };
}

export function inputTokens(m: ModelInput): number[] {
  return m.chunks.flatMap((c) => c.tokens);
}

const f32 = (data: number[]): TensorData => ({ data, dtype: 'float32', shape: [data.length] });

/**
 * A sleuth Datum in Tinker's shape. Always sends `weights` and, for RL losses, logprobs and
 * advantages (zero at masked positions, §9 "Consequences"), each with dtype and shape (§1 rule 3).
 */
export function toWireDatum(d: Datum, lossFn: LossFn, advantages?: number[]): WireDatum {
  const inputs: Record<string, TensorData> = {
    target_tokens: { data: d.targetTokens, dtype: 'int64', shape: [d.targetTokens.length] },
    weights: f32(d.weights),
  };
  if (LOSSES[lossFn].rl) {
    inputs['logprobs'] = f32(d.logprobs ?? []);
    inputs['advantages'] = f32(advantages ?? d.advantages ?? []);
  }
  return { model_input: modelInput(d.inputTokens), loss_fn_inputs: inputs };
}

export function lossFnConfig(lossFn: LossFn, c: LossConfig = {}): Record<string, number> | undefined {
  if (!LOSSES[lossFn].clip) return undefined;
  const out: Record<string, number> = {};
  if (c.clipLowThreshold !== undefined) out['clip_low_threshold'] = c.clipLowThreshold;
  if (c.clipHighThreshold !== undefined) out['clip_high_threshold'] = c.clipHighThreshold;
  return Object.keys(out).length ? out : undefined;
}

/** All six Adam fields, always (§10: older servers default the missing ones differently). */
export function adamParams(a: AdamParams) {
  return { learning_rate: a.learningRate, beta1: a.beta1, beta2: a.beta2, eps: a.eps, weight_decay: a.weightDecay, grad_clip_norm: a.gradClipNorm };
}

/** Sampling params with what SkyRL requires (max_tokens; stop, when given, as a list: §11); no stop field when there is none, as the SDK sends. */
export function samplingParams(p: SamplingParams) {
  if (p.stop?.length && p.stopStrings?.length) throw new InputError('sampling: give stop token ids or stop strings, not both (Tinker takes one list of one kind)');
  const stop = p.stop?.length ? p.stop : (p.stopStrings ?? []);
  return {
    max_tokens: p.maxTokens,
    temperature: p.temperature,
    top_p: p.topP ?? 1,
    top_k: p.topK ?? -1,
    ...(stop.length ? { stop } : {}),
    ...(p.seed !== undefined ? { seed: p.seed } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------------------------

export const CreateSessionReply = z.object({
  session_id: z.string().min(1),
  info_message: z.string().nullish(),
  warning_message: z.string().nullish(),
  error_message: z.string().nullish(),
});

/** A submitted request: resolve it with retrieve_future (§6). */
export const FutureReply = z.object({ request_id: z.string().min(1), model_id: z.string().nullish() });

export const CreateModelResult = z.object({ model_id: z.string().min(1) });

export const SamplingSessionReply = z.object({ sampling_session_id: z.string().min(1) });

export const ForwardBackwardResultSchema = z.object({
  loss_fn_output_type: z.string().optional(),
  loss_fn_outputs: z.array(z.record(z.string(), TensorDataSchema)),
  metrics: z.record(z.string(), z.number()).default({}),
});
export type WireForwardBackwardResult = z.infer<typeof ForwardBackwardResultSchema>;

export const OptimStepResultSchema = z.object({ metrics: z.record(z.string(), z.number()).nullish() });

export const PathResult = z.object({ path: z.string().min(1) });

export const SamplerResult = z.union([z.object({ path: z.string().min(1) }), z.object({ sampling_session_id: z.string().min(1) })]);

export const SampleResultSchema = z.object({
  sequences: z.array(z.object({ tokens: z.array(z.number().int()), logprobs: z.array(z.number()).nullish(), stop_reason: z.enum(['stop', 'length']) })),
  prompt_logprobs: z.array(z.number().nullable()).nullish(),
});

export function fromWireSequences(r: z.infer<typeof SampleResultSchema>): SampledSequence[] {
  return r.sequences.map((s) => {
    if (!s.logprobs || s.logprobs.length !== s.tokens.length) throw new Error(`the server returned ${s.logprobs?.length ?? 'no'} logprobs for ${s.tokens.length} sampled tokens`);
    return { tokens: s.tokens, logprobs: s.logprobs, stopReason: s.stop_reason };
  });
}

/** Merge metrics of chunked requests by their reduction suffix (`name:sum`, `name:mean`, ...). */
export function mergeMetrics(parts: { metrics: Record<string, number>; weight: number }[]): Record<string, number> {
  const out: Record<string, number> = {};
  const weights: Record<string, number> = {};
  for (const { metrics, weight } of parts) {
    for (const [k, v] of Object.entries(metrics)) {
      const reduction = k.slice(k.lastIndexOf(':') + 1);
      if (!(k in out)) {
        out[k] = reduction === 'mean' ? v * weight : v;
        weights[k] = weight;
        continue;
      }
      if (reduction === 'sum') out[k] = out[k]! + v;
      else if (reduction === 'mean') {
        out[k] = out[k]! + v * weight;
        weights[k] = weights[k]! + weight;
      } else if (reduction === 'min') out[k] = Math.min(out[k]!, v);
      else if (reduction === 'max') out[k] = Math.max(out[k]!, v);
      else out[k] = v;
    }
  }
  for (const k of Object.keys(out)) if (k.endsWith(':mean')) out[k] = weights[k] ? out[k]! / weights[k]! : 0;
  return out;
}
