import { randomUUID } from 'node:crypto';
import { HttpError } from '../http/request.js';
import type { Flavor } from '../backend/tinker/wire.js';
import { ok, type FutureRecord, type Reply } from './futures.js';
import type { SamplingParamsBody } from './schemas.js';

/**
 * Where the two dialects `sleuth serve-tinker` speaks differ. Hosted Tinker's: failed futures are
 * 200 {error, category}, pending polls answer try_again, loss summed. SkyRL's: failed futures are
 * 400 {detail}, pending polls answer 408, lora_config and max_tokens required, stop only as a list,
 * each sequence's loss divided by its Σ weights and gradients averaged over sequences.
 *
 * --flavor skyrl emulates SkyRL tx 0.3.0 as it really behaves: it ignores idempotency keys,
 * loss_fn_config and grad_clip_norm; answers 422 for loss_fn cispo and 409 "already exists" for a
 * save under a name already used (a retried save included); returns prompt_logprobs for every
 * prompt token but the first, with no leading null.
 */
export interface Dialect {
  readonly flavor: Flavor;
  /** Whether a repeated X-Idempotency-Key gets the first reply (SkyRL runs the request again). */
  readonly idempotencyKeys: boolean;
  /** Whether a request that fails its checks is queued all the same, its future failing in seq_id order (SkyRL), rather than refused at once. */
  readonly checksWhenRun: boolean;
  /** Whether each sequence's loss is divided by its Σ weights and gradients averaged over the step's sequences (SkyRL). */
  readonly meanOverSequences: boolean;
  /** A new training model's id. */
  modelId(sessionId: string, modelSeqId: number): string;
  /** What create_model refuses beyond the schema. */
  checkCreateModel(body: { lora_config?: unknown }): void;
  /** What is refused at submission, before the request's own checks. */
  refuseAtSubmission(kind: string, modelId: string, body: Record<string, unknown>): void;
  /** The loss_fn_config honoured (SkyRL's request model has none: dropped, as it does). */
  lossFnConfig(config: Record<string, number> | null | undefined): Record<string, number>;
  /** The gradient clip honoured (SkyRL ignores grad_clip_norm). */
  gradClipNorm(asked: number): number;
  /** What asample refuses beyond the schema. */
  checkSampling(p: SamplingParamsBody): void;
  /** Prompt logprobs as answered (SkyRL: none for the first prompt token). */
  promptLogprobs(logprobs: (number | null)[]): (number | null)[];
  /** The path a sampler checkpoint is answered with. */
  samplerPath(tinkerPath: string, modelId: string, name: string): string;
  /** The answer to a submission: the future's id. */
  submitted(id: string): Record<string, unknown>;
  /** A poll that found the future still pending. */
  stillPending(id: string): Reply;
  /** A poll that found the future failed. */
  failed(error: NonNullable<FutureRecord['error']>): Reply;
}

const tinker: Dialect = {
  flavor: 'tinker',
  idempotencyKeys: true,
  checksWhenRun: false,
  meanOverSequences: false,
  modelId: (sessionId, modelSeqId) => `${sessionId}:train:${modelSeqId}`,
  checkCreateModel: () => {},
  refuseAtSubmission: () => {},
  lossFnConfig: (config) => config ?? {},
  gradClipNorm: (asked) => asked,
  checkSampling: () => {},
  promptLogprobs: (logprobs) => logprobs,
  samplerPath: (tinkerPath) => tinkerPath,
  submitted: (id) => ({ request_id: id }),
  stillPending: (id) => ok({ type: 'try_again', request_id: id, queue_state: 'active' }),
  failed: (error) => ok({ error: error.message, category: error.category }),
};

/** SkyRL tx 0.3.0: its checkpoint rows exist from submission on, so the names it was asked to save are remembered. */
function skyrl(): Dialect {
  const saved = new Set<string>();
  return {
    flavor: 'skyrl',
    idempotencyKeys: false,
    checksWhenRun: true,
    meanOverSequences: true,
    modelId: () => `model_${randomUUID().slice(0, 8)}`,
    checkCreateModel(body) {
      if (!body.lora_config) throw new HttpError(422, 'create_model: lora_config is required');
    },
    refuseAtSubmission(kind, modelId, body) {
      const input = body['forward_backward_input'];
      if ((kind === 'forward_backward' || kind === 'forward') && typeof input === 'object' && input !== null && (input as Record<string, unknown>)['loss_fn'] === 'cispo') {
        throw new HttpError(422, "forward_backward_input.loss_fn: Input should be 'cross_entropy', 'importance_sampling' or 'ppo'");
      }
      if ((kind === 'save_weights' || kind === 'save_weights_for_sampler') && typeof body['path'] === 'string') {
        const key = `${modelId} ${kind} ${body['path']}`;
        if (saved.has(key)) throw new HttpError(409, `checkpoint '${body['path']}' already exists for model ${modelId}`);
        saved.add(key);
      }
    },
    lossFnConfig: () => ({}),
    gradClipNorm: () => 0,
    checkSampling(p) {
      if (!(typeof p.max_tokens === 'number' && p.max_tokens > 0)) throw new HttpError(422, 'asample: sampling_params.max_tokens is required and must be > 0');
      if (typeof p.stop === 'string') throw new HttpError(422, 'asample: sampling_params.stop must be a list');
    },
    promptLogprobs: (logprobs) => logprobs.slice(1),
    samplerPath: (_tinkerPath, modelId, name) => `tinker://${modelId}/${name}`,
    submitted: (id) => ({ request_id: id, future_id: id, status: 'pending' }),
    stillPending: () => {
      throw new HttpError(408, 'timed out waiting for the result');
    },
    failed: (error) => {
      throw new HttpError(error.category === 'user' ? 400 : 500, error.message);
    },
  };
}

export function dialectOf(flavor: Flavor): Dialect {
  return flavor === 'skyrl' ? skyrl() : tinker;
}
