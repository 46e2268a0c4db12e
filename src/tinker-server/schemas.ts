import { z } from 'zod';
import { InputError } from '../errors.js';
import { HttpError } from '../http/request.js';
import { ModelInputSchema, WireDatumSchema } from '../backend/tinker/wire.js';

/**
 * The request bodies `sleuth serve-tinker` takes (the official SDK's shapes; unknown fields pass
 * through, as the hosted server lets them), and the ranges their numbers must lie in.
 */

const LoraSchema = z.object({ rank: z.number().int().min(1).max(1024), seed: z.number().int().nullish(), train_mlp: z.boolean().optional(), train_attn: z.boolean().optional(), train_unembed: z.boolean().optional(), alpha: z.number().optional() });
export const CreateModelSchema = z.object({ session_id: z.string(), model_seq_id: z.number().int().min(0), base_model: z.string(), lora_config: LoraSchema.nullish() }).passthrough();
const ModelReq = { model_id: z.string(), seq_id: z.number().int().min(1) };
export const ForwardBackwardSchema = z.object({
  ...ModelReq,
  forward_backward_input: z.object({ data: z.array(WireDatumSchema), loss_fn: z.string(), loss_fn_config: z.record(z.string(), z.number()).nullish() }),
}).passthrough();
const AdamSchema = z.object({
  learning_rate: z.number().default(1e-4),
  beta1: z.number().default(0.9),
  beta2: z.number().default(0.95),
  eps: z.number().default(1e-12),
  weight_decay: z.number().default(0),
  grad_clip_norm: z.number().default(0),
});
export const OptimSchema = z.object({ ...ModelReq, adam_params: AdamSchema }).passthrough();
export const SaveSchema = z.object({ ...ModelReq, path: z.string().nullish(), sampling_session_seq_id: z.number().int().min(0).nullish(), ttl_seconds: z.number().int().min(1).nullish(), overwrite: z.boolean().nullish() }).passthrough();
export const LoadSchema = z.object({ ...ModelReq, path: z.string(), optimizer: z.boolean().default(true) }).passthrough();
const SamplingParamsSchema = z.object({
  max_tokens: z.number().int().nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string()), z.array(z.number().int())]).nullish(),
  temperature: z.number().default(1),
  top_k: z.number().int().default(-1),
  top_p: z.number().default(1),
});
export type SamplingParamsBody = z.infer<typeof SamplingParamsSchema>;
export const WeightsInfoSchema = z.object({ tinker_path: z.string() }).passthrough();
export const TtlSchema = z.object({ ttl_seconds: z.number().int().min(1).nullable() });
export const TelemetrySchema = z.object({ events: z.array(z.unknown()) }).passthrough();
export const SampleSchema = z.object({
  prompt: ModelInputSchema,
  num_samples: z.number().int().min(1).max(256).default(1),
  sampling_params: SamplingParamsSchema,
  sampling_session_id: z.string().nullish(),
  seq_id: z.number().int().nullish(),
  base_model: z.string().nullish(),
  model_path: z.string().nullish(),
  prompt_logprobs: z.boolean().nullish(),
  topk_prompt_logprobs: z.number().int().min(0).nullish(),
}).passthrough();

/** What hyperparameters may be: finite, and inside these ranges (larger is a bug, not a setting). */
export const ADAM_RANGES: Record<string, [number, number, string]> = {
  learning_rate: [0, 1, '0 <= learning_rate <= 1'],
  beta1: [0, 1 - Number.EPSILON, '0 <= beta1 < 1'],
  beta2: [0, 1 - Number.EPSILON, '0 <= beta2 < 1'],
  eps: [Number.MIN_VALUE, 1, '0 < eps <= 1'],
  weight_decay: [0, 1, '0 <= weight_decay <= 1'],
  grad_clip_norm: [0, 1e6, '0 <= grad_clip_norm <= 1e6 (0 = off)'],
};

const NAME = /^[A-Za-z0-9_-]{1,200}$/;

/** A checkpoint name as given in a save's `path`. */
export function checkName(name: string | null | undefined, what: string): string {
  if (!name || !NAME.test(name)) throw new InputError(`${what}: path '${name ?? ''}' must be a name of 1-200 letters, digits, '_' or '-'`);
  return name;
}

/** A whole-number query parameter in [min, max] (400 otherwise). */
export function intParam(url: URL, name: string, dflt: number, min: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return dflt;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min || v > max) throw new HttpError(400, `query parameter ${name} must be a whole number in [${min}, ${max}], got '${raw}'`);
  return v;
}

export function isStringRecord(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}
