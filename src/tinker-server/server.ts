import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { InputError, isInputError } from '../errors.js';
import { BpeTokenizer } from '../protocol/compact/bpe.js';
import { LocalBackend } from '../backend/local/backend.js';
import { readCheckpoint } from '../backend/local/checkpoint.js';
import type { LocalSampler } from '../backend/local/sampler.js';
import { isLossFn, LOSS_NAMES, LOSSES } from '../backend/losses.js';
import type { Datum, LossFn } from '../backend/types.js';
import { decodeForwardBackwardRequest, encodeForwardBackwardOutput, encodeSampleResponse, PROTO_CONTENT_TYPE } from './proto.js';
import { checkpointJson, RunRegistry, runJson, type CheckpointType } from './registry.js';
import { decompressCapped, OverCap } from '../http/decompress.js';
import { API, inputTokens, ModelInputSchema, WireDatumSchema, type Flavor } from '../backend/tinker/wire.js';

/**
 * `sleuth serve-tinker`: the Tinker REST API (docs/reference/TINKER_API.md §4) served over sleuth's local CPU
 * backend, on 127.0.0.1. It speaks either dialect (`flavor`): hosted Tinker's (failed futures are
 * 200 {error, category}, pending polls answer try_again, loss summed) or SkyRL's (failed futures
 * are 400 {detail}, pending polls answer 408, lora_config and max_tokens required, stop only as a
 * list, each sequence's loss divided by its Σ weights and gradients averaged over sequences).
 *
 * --flavor skyrl emulates SkyRL tx 0.3.0 as it really behaves: it ignores idempotency keys,
 * loss_fn_config and grad_clip_norm; answers 422 for loss_fn cispo and 409 "already exists" for a
 * save under a name already used (a retried save included); returns prompt_logprobs for every
 * prompt token but the first, with no leading null.
 *
 * Futures are real: a request is checked when it arrives (a bad one is answered 4xx at once), then
 * queued, and runs after its reply is sent; a model's requests run in seq_id order (a later seq_id
 * waits for the earlier ones); a repeated (model_id, seq_id) returns the original future (409 if
 * its body differs); a repeated X-Idempotency-Key returns the first reply. A seq_id whose request
 * was rejected at the HTTP level counts as spent: the official SDK numbers its requests before
 * sending them and never reuses a number, so waiting for it would stall the model for ever.
 * The "LoRA" is the whole local model: the rank is recorded, not used.
 *
 * Wire formats (the official SDK 0.25.0's): JSON everywhere, plus protobuf (tinker_public.proto,
 * optionally zstd- or gzip-compressed) for forward_backward bodies, and protobuf results of
 * forward_backward, forward and sampling for a retrieve_future that sends
 * `Accept: application/x-protobuf`. Also served: forward (SDK <= 0.24), weights_info, the training
 * runs and checkpoints listing (with delete and TTL), client/config (what this server really
 * supports), client/dynamic_config and telemetry (accepted, not kept).
 *
 * Faults for tests: rules `ENDPOINT:NTH=FAULT[@AFTER]` act on the NTH request to an endpoint:
 * 429 (with retry-after AFTER seconds, or retry-after-ms with `@200ms`), 402, 408, 410, 500, 502,
 * 503, 400 (a bare 400, no body), try_again (a pending answer even if the future is done), lose
 * (the request is carried out but its reply is never sent: the connection is cut) and drop (the
 * connection is cut before the request is read).
 */

export type FaultKind = '429' | '402' | '408' | '410' | '500' | '502' | '503' | '400' | 'try_again' | 'lose' | 'drop';
export interface FaultRule {
  endpoint: string;
  nth: number;
  fault: FaultKind;
  retryAfter?: { seconds: number } | { ms: number };
}

const FAULTS = new Set(['429', '402', '408', '410', '500', '502', '503', '400', 'try_again', 'lose', 'drop']);

/** Parse a fault script, e.g. `forward_backward:1=429@0.2,optim_step:1=lose,retrieve_future:2=try_again`. */
export function parseFaults(script: string, source = 'faults'): FaultRule[] {
  if (!script.trim()) return [];
  return script.split(',').map((raw) => {
    const rule = raw.trim();
    const m = /^([a-z_/]+):(\d+)=([a-z_0-9]+)(?:@(\d+(?:\.\d+)?)(ms)?)?$/.exec(rule);
    if (!m) throw new InputError(`${source}: rule '${rule}' must look like ENDPOINT:NTH=FAULT[@SECONDS|@NNNms], e.g. forward_backward:1=429@0.2`);
    if (!FAULTS.has(m[3]!)) throw new InputError(`${source}: rule '${rule}': unknown fault '${m[3]}' (one of ${[...FAULTS].join(', ')})`);
    const nth = Number(m[2]);
    if (nth < 1) throw new InputError(`${source}: rule '${rule}': NTH counts from 1`);
    const out: FaultRule = { endpoint: m[1]!, nth, fault: m[3] as FaultKind };
    if (m[4] !== undefined) out.retryAfter = m[5] ? { ms: Number(m[4]) } : { seconds: Number(m[4]) };
    return out;
  });
}

export interface TinkerServerOptions {
  /** The local checkpoint every training model starts from (its weights; Adam starts fresh). */
  checkpoint: string;
  /** The base model name clients ask for (default 'base'); the checkpoint path is accepted too. */
  modelName?: string;
  /** Where saved weights and sampler weights go. */
  dir: string;
  flavor?: Flavor;
  /** How long retrieve_future waits for a pending result before answering try_again / 408. */
  pollTimeoutMs?: number;
  faults?: FaultRule[];
  /** When set, requests must carry exactly this X-API-Key (otherwise any non-empty key is accepted). */
  apiKey?: string;
  kernels?: 'auto' | 'wasm-simd' | 'js';
  /** The largest request body accepted, before and after decompression (default 256 MiB); larger gets 413. */
  maxBodyBytes?: number;
  log?: (line: string) => void;
}

interface FutureRecord {
  state: 'pending' | 'done' | 'failed';
  /** When it settled (futures are forgotten FUTURE_TTL_MS later). */
  settledAt?: number;
  result?: unknown;
  error?: { message: string; category: 'user' | 'server' };
  waiters: (() => void)[];
  /** The result's protobuf message, where the SDK may ask for one. */
  proto?: 'forward_backward' | 'sample';
}

interface Job {
  kind: string;
  /** The checked request, ready to run (absent once run, or when it was rejected). */
  work?: () => Promise<unknown>;
  record: FutureRecord;
  hash: string;
  /** The HTTP-level rejection of this seq_id (re-sent for a repeat of the same request). */
  rejected?: HttpError;
}

interface ModelState {
  id: string;
  rank: number;
  backend: LocalBackend;
  /** The next seq_id to run. */
  nextSeq: number;
  /** Requests by seq_id: queued, running or done (for dedup and ordering). */
  bySeq: Map<number, Job>;
  running: boolean;
  /** Datums accumulated since the last optim_step (SkyRL's mean over sequences). */
  accumulated: number;
  unloaded: boolean;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const MAX_BODY = 256 * 1024 * 1024;
/** POST endpoints (a GET, PUT or DELETE on one is 405). */
const POST_ENDPOINTS = new Set(['client/config', 'client/dynamic_config', 'telemetry', 'create_session', 'session_heartbeat', 'create_model', 'get_info', 'weights_info', 'forward', 'forward_backward', 'optim_step', 'save_weights', 'load_weights', 'save_weights_for_sampler', 'create_sampling_session', 'asample', 'unload_model', 'retrieve_future']);
/** What hyperparameters may be: finite, and inside these ranges (larger is a bug, not a setting). */
const ADAM_RANGES: Record<string, [number, number, string]> = {
  learning_rate: [0, 1, '0 <= learning_rate <= 1'],
  beta1: [0, 1 - Number.EPSILON, '0 <= beta1 < 1'],
  beta2: [0, 1 - Number.EPSILON, '0 <= beta2 < 1'],
  eps: [Number.MIN_VALUE, 1, '0 < eps <= 1'],
  weight_decay: [0, 1, '0 <= weight_decay <= 1'],
  grad_clip_norm: [0, 1e6, '0 <= grad_clip_norm <= 1e6 (0 = off)'],
};
const NAME = /^[A-Za-z0-9_-]{1,200}$/;
const IDEMPOTENCY_LIMIT = 20_000;
/** How long a settled future can still be retrieved (hosted promises expire too: 410). */
const FUTURE_TTL_MS = 30 * 60_000;

const LoraSchema = z.object({ rank: z.number().int().min(1).max(1024), seed: z.number().int().nullish(), train_mlp: z.boolean().optional(), train_attn: z.boolean().optional(), train_unembed: z.boolean().optional(), alpha: z.number().optional() });
const CreateModelSchema = z.object({ session_id: z.string(), model_seq_id: z.number().int().min(0), base_model: z.string(), lora_config: LoraSchema.nullish() }).passthrough();
const ModelReq = { model_id: z.string(), seq_id: z.number().int().min(1) };
const ForwardBackwardSchema = z.object({
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
const OptimSchema = z.object({ ...ModelReq, adam_params: AdamSchema }).passthrough();
const SaveSchema = z.object({ ...ModelReq, path: z.string().nullish(), sampling_session_seq_id: z.number().int().min(0).nullish(), ttl_seconds: z.number().int().min(1).nullish(), overwrite: z.boolean().nullish() }).passthrough();
const LoadSchema = z.object({ ...ModelReq, path: z.string(), optimizer: z.boolean().default(true) }).passthrough();
const SamplingParamsSchema = z.object({
  max_tokens: z.number().int().nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string()), z.array(z.number().int())]).nullish(),
  temperature: z.number().default(1),
  top_k: z.number().int().default(-1),
  top_p: z.number().default(1),
});
const WeightsInfoSchema = z.object({ tinker_path: z.string() }).passthrough();
const TtlSchema = z.object({ ttl_seconds: z.number().int().min(1).nullable() });
const TelemetrySchema = z.object({ events: z.array(z.unknown()) }).passthrough();
const SampleSchema = z.object({
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

export class TinkerServer {
  readonly server: Server;
  readonly flavor: Flavor;
  readonly modelName: string;
  private readonly o: TinkerServerOptions;
  private readonly dir: string;
  private readonly header: ReturnType<typeof readCheckpoint>['header'];
  private readonly baseParams: Float32Array;
  private readonly tokenizer: BpeTokenizer;
  private readonly sessions = new Map<string, { lastHeartbeat: number; models: Map<number, string> }>();
  readonly models = new Map<string, ModelState>();
  private readonly futures = new Map<string, FutureRecord>();
  private readonly samplers = new Map<string, LocalSampler>();
  private readonly samplingSessions = new Map<string, { sampler: LocalSampler; path?: string }>();
  private baseSampler: LocalSampler | undefined;
  private readonly idempotent = new Map<string, Promise<Reply>>();
  /** Requests received per endpoint (the fault rules count with it). */
  readonly requestCounts = new Map<string, number>();
  /** Training runs and their checkpoints, for the listing endpoints. */
  readonly runs = new RunRegistry();
  private readonly maxBody: number;
  private readonly log: (line: string) => void;

  constructor(o: TinkerServerOptions) {
    this.o = o;
    this.flavor = o.flavor ?? 'tinker';
    this.modelName = o.modelName ?? 'base';
    this.dir = resolve(o.dir);
    const { header, tensors } = readCheckpoint(o.checkpoint);
    this.header = header;
    this.baseParams = tensors.params!;
    this.tokenizer = new BpeTokenizer(header.tokenizer);
    this.log = o.log ?? (() => {});
    this.maxBody = o.maxBodyBytes ?? MAX_BODY;
    this.server = createServer((req, res) => void this.handle(req, res));
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  private readonly sweeper: NodeJS.Timeout;

  /** Forget futures settled long ago, so a long run does not grow the server without bound. */
  private sweep(now = Date.now()): void {
    for (const [id, r] of this.futures) if (r.settledAt !== undefined && now - r.settledAt > FUTURE_TTL_MS) this.futures.delete(id);
    this.runs.expire(now);
  }

  listen(port: number, host = '127.0.0.1'): Promise<number> {
    return new Promise((ok, fail) => {
      this.server.once('error', fail);
      this.server.listen(port, host, () => {
        const a = this.server.address();
        ok(typeof a === 'object' && a ? a.port : port);
      });
    });
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    this.server.closeAllConnections();
    return new Promise((ok) => this.server.close(() => ok()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const endpoint = url.pathname.startsWith(`${API}/`) ? url.pathname.slice(API.length + 1) : url.pathname;
    const n = (this.requestCounts.get(endpoint) ?? 0) + 1;
    this.requestCounts.set(endpoint, n);
    const rule = this.o.faults?.find((f) => f.endpoint === endpoint && f.nth === n);
    const fault = rule?.fault;
    if (fault === 'drop') {
      req.socket.destroy();
      return;
    }
    let reply: Reply;
    try {
      if (rule && fault !== 'lose' && fault !== 'try_again' && fault !== '410') {
        const headers: Record<string, string> = {};
        if (rule.retryAfter) {
          if ('ms' in rule.retryAfter) headers['retry-after-ms'] = String(rule.retryAfter.ms);
          else headers['retry-after'] = String(rule.retryAfter.seconds);
        }
        // Drain the body so the connection can be reused.
        await readBody(req, this.maxBody);
        reply = { status: Number(fault), body: fault === '400' ? '' : { detail: `injected fault ${fault}` }, headers };
      } else {
        reply = await this.route(req, url, endpoint, fault);
      }
    } catch (err) {
      reply = errorReply(err, this.log);
    }
    if (fault === 'lose') {
      // Carried out (and remembered under its idempotency key), but the reply never arrives.
      req.socket.destroy();
      return;
    }
    send(res, reply);
  }

  private async route(req: IncomingMessage, url: URL, endpoint: string, fault: FaultKind | undefined): Promise<Reply> {
    const apiKey = req.headers['x-api-key'];
    if (typeof apiKey !== 'string' || !apiKey || (this.o.apiKey !== undefined && apiKey !== this.o.apiKey)) {
      await readBody(req, this.maxBody);
      throw new HttpError(401, 'invalid or missing X-API-Key');
    }
    const method = req.method ?? 'GET';
    if (method !== 'POST') {
      if (POST_ENDPOINTS.has(endpoint)) throw new HttpError(405, `${method} ${url.pathname}: use POST`, { allow: 'POST' });
      const raw = await readBody(req, this.maxBody);
      return this.rest(method, endpoint, url, raw);
    }
    const { body, forwardOnly } = await this.readRequest(req, endpoint);
    if (endpoint === 'retrieve_future') return this.retrieve(body, fault, String(req.headers['accept'] ?? ''));
    if (endpoint === 'session_heartbeat') return this.heartbeat(body);
    const target = forwardOnly ? 'forward' : endpoint;
    const idem = req.headers['x-idempotency-key'];
    // SkyRL has no idempotency keys: a repeated request runs again.
    if (typeof idem !== 'string' || !idem || this.flavor === 'skyrl') return this.post(target, body);
    const key = `${target} ${idem}`;
    const seen = this.idempotent.get(key);
    if (seen) return seen;
    const p = this.post(target, body).catch((err) => errorReply(err, this.log));
    this.idempotent.set(key, p);
    if (this.idempotent.size > IDEMPOTENCY_LIMIT) this.idempotent.delete(this.idempotent.keys().next().value!);
    // A server error is not the request's answer: a retry with the same key may run it again.
    void p.then((r) => {
      if (r.status >= 500) this.idempotent.delete(key);
    });
    return p;
  }

  /**
   * A POST body as a JSON object: JSON (the default), or for forward_backward the SDK's protobuf
   * ForwardBackwardRequest; either may be zstd- or gzip-compressed (Content-Encoding).
   */
  private async readRequest(req: IncomingMessage, endpoint: string): Promise<{ body: Record<string, unknown>; forwardOnly?: boolean }> {
    const raw = await readBody(req, this.maxBody);
    const encoding = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    let bytes: Uint8Array = raw;
    try {
      if (encoding === 'zstd' || encoding === 'gzip') bytes = await decompressCapped(raw, encoding, this.maxBody);
      else if (encoding !== 'identity') throw new HttpError(415, `Content-Encoding '${encoding}' is not accepted (identity, zstd or gzip)`);
    } catch (err) {
      if (err instanceof HttpError) throw err;
      if (err instanceof OverCap) throw new HttpError(413, `request body over ${this.maxBody} bytes once decompressed`);
      throw new HttpError(400, `request body is not valid ${encoding} (${(err as Error).message})`);
    }
    if (bytes.length > this.maxBody) throw new HttpError(413, `request body over ${this.maxBody} bytes once decompressed`);
    const type = String(req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
    if (type === PROTO_CONTENT_TYPE) {
      if (endpoint !== 'forward_backward') throw new HttpError(415, `${API}/${endpoint} takes application/json; protobuf bodies are accepted by forward_backward only`);
      const decoded = decodeForwardBackwardRequest(bytes);
      return { body: decoded.body, forwardOnly: decoded.forwardOnly };
    }
    if (type !== 'application/json') throw new HttpError(415, `Content-Type '${type}' is not accepted: send application/json (or application/x-protobuf to forward_backward)`);
    try {
      const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
      const v = text.length ? JSON.parse(text) : {};
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
      return { body: v as Record<string, unknown> };
    } catch (err) {
      throw new HttpError(400, `request body is not a JSON object (${(err as Error).message})`);
    }
  }

  /** GET, PUT and DELETE: health, capabilities, samplers, and the training runs and checkpoints listing. */
  private rest(method: string, endpoint: string, url: URL, raw: Buffer): Reply {
    const parts = endpoint.split('/').map((x) => decodeURIComponent(x));
    const page = <T>(items: T[]) => {
      const limit = intParam(url, 'limit', 20, 1, 1000), offset = intParam(url, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
      return { items: items.slice(offset, offset + limit), cursor: { offset, limit, total_count: items.length } };
    };
    if (method === 'GET') {
      if (endpoint === 'healthz') return ok({ status: 'ok' });
      if (endpoint === 'get_server_capabilities') return ok({ supported_models: [{ model_name: this.modelName, max_context_length: this.header.config.context }], sleuth_flavor: this.flavor });
      if (parts[0] === 'samplers' && parts.length === 2) {
        const s = this.samplingSessions.get(parts[1]!);
        if (!s) throw new HttpError(404, `sampler '${parts[1]}' not found`);
        return ok({ sampler_id: parts[1], base_model: this.modelName, model_path: s.path ?? null });
      }
      if (endpoint === 'training_runs') {
        const { items, cursor } = page(this.runs.list());
        return ok({ training_runs: items.map(runJson), cursor });
      }
      if (endpoint === 'checkpoints') {
        const all = this.runs.list().flatMap((r) => [...r.checkpoints.values()]).sort((a, b) => b.time.getTime() - a.time.getTime());
        const { items, cursor } = page(all);
        return ok({ checkpoints: items.map(checkpointJson), cursor });
      }
      if (parts[0] === 'training_runs' && (parts.length === 2 || (parts.length === 3 && parts[2] === 'checkpoints'))) {
        const run = this.runs.get(parts[1]!);
        if (!run) throw new HttpError(404, `training run '${parts[1]}' not found`);
        if (parts.length === 2) return ok(runJson(run));
        return ok({ checkpoints: [...run.checkpoints.values()].sort((a, b) => b.time.getTime() - a.time.getTime()).map(checkpointJson), cursor: null });
      }
    }
    // training_runs/RUN/checkpoints/(weights|sampler_weights)/NAME[/ttl]
    if (parts[0] === 'training_runs' && parts[2] === 'checkpoints' && (parts.length === 5 || (parts.length === 6 && parts[5] === 'ttl'))) {
      const [runId, checkpointId] = [parts[1]!, `${parts[3]}/${parts[4]}`];
      if (method === 'DELETE' && parts.length === 5) {
        if (!this.runs.deleteCheckpoint(runId, checkpointId)) throw new HttpError(404, `checkpoint '${checkpointId}' of training run '${runId}' not found`);
        return { status: 204, body: '' };
      }
      if (method === 'PUT' && parts.length === 6) {
        const c = this.runs.checkpoint(runId, checkpointId);
        if (!c) throw new HttpError(404, `checkpoint '${checkpointId}' of training run '${runId}' not found`);
        let v: unknown;
        try {
          v = JSON.parse(raw.toString('utf8') || '{}');
        } catch (err) {
          throw new HttpError(400, `request body is not a JSON object (${(err as Error).message})`);
        }
        const r = TtlSchema.safeParse(v);
        if (!r.success) throw new HttpError(400, `ttl: ttl_seconds must be a whole number >= 1, or null to remove the expiry`);
        this.runs.setTtl(c, r.data.ttl_seconds);
        return { status: 204, body: '' };
      }
      throw new HttpError(405, `${method} ${url.pathname} is not supported`, { allow: parts.length === 5 ? 'DELETE' : 'PUT' });
    }
    throw new HttpError(404, `no such endpoint: ${method} ${url.pathname}`);
  }

  /** The SDK's feature flags, set to what this server really does (ClientConfigResponse). */
  private clientConfig(): Record<string, unknown> {
    return {
      pjwt_auth_enabled: false,
      credential_default_source: 'api_key',
      // HTTP/1.1 over node:http: the SDK's default httpx transport is the right one.
      use_pyqwest_transport: false,
      // A model's requests run in seq_id order however they arrive.
      parallel_fwdbwd_chunks: true,
      proto_compress_fwdbwd: true,
      fwdbwd_max_chunk_len: 1024,
      fwdbwd_max_chunk_bytes_count: Math.min(5_000_000, Math.floor(this.maxBody / 2)),
      sample_no_retries: false,
      create_model_via_load_weights: false,
    };
  }

  private async post(endpoint: string, body: Record<string, unknown>): Promise<Reply> {
    switch (endpoint) {
      case 'client/config':
        return ok(this.clientConfig());
      case 'client/dynamic_config':
        return ok({ refresh_interval_sec: 300 });
      case 'telemetry':
        // Accepted so the SDK does not log a failure per call; this server keeps no telemetry.
        parse(TelemetrySchema, body, 'telemetry');
        return ok({ status: 'accepted' });
      case 'weights_info':
        return this.weightsInfo(body);
      case 'create_session': {
        const id = `sess_${randomUUID().slice(0, 8)}`;
        this.sessions.set(id, { lastHeartbeat: Date.now(), models: new Map() });
        return ok({ session_id: id, info_message: `sleuth serve-tinker (${this.flavor} dialect) over the local model ${this.modelName}` });
      }
      case 'create_model':
        return this.createModel(body);
      case 'get_info':
        return this.info(body);
      case 'forward': {
        // SDK <= 0.24 sends forward_input; the protobuf forward_backward sets forward_only instead.
        const { forward_input: input, ...rest } = body;
        return this.enqueue('forward', input === undefined ? body : { ...rest, forward_backward_input: input });
      }
      case 'forward_backward':
      case 'optim_step':
      case 'save_weights':
      case 'load_weights':
      case 'save_weights_for_sampler':
        return this.enqueue(endpoint, body);
      case 'create_sampling_session':
        return this.createSamplingSession(body);
      case 'asample':
        return this.asample(body);
      case 'unload_model': {
        const m = this.model(body);
        m.unloaded = true;
        this.models.delete(m.id);
        return this.future(async () => ({ model_id: m.id }));
      }
      default:
        throw new HttpError(404, `no such endpoint: POST ${API}/${endpoint}`);
    }
  }

  private heartbeat(body: Record<string, unknown>): Reply {
    const s = this.sessions.get(String(body['session_id']));
    if (!s) throw new HttpError(404, `session '${String(body['session_id'])}' not found`);
    s.lastHeartbeat = Date.now();
    return ok({ type: 'session_heartbeat' });
  }

  private createModel(raw: Record<string, unknown>): Reply {
    const body = parse(CreateModelSchema, raw, 'create_model');
    const session = this.sessions.get(body.session_id);
    if (!session) throw new HttpError(404, `session '${body.session_id}' not found`);
    if (this.flavor === 'skyrl' && !body.lora_config) throw new HttpError(422, 'create_model: lora_config is required');
    if (body.base_model !== this.modelName && resolve(body.base_model) !== resolve(this.o.checkpoint)) {
      throw new HttpError(400, `create_model: base_model '${body.base_model}' is not served here; this server serves '${this.modelName}'`);
    }
    // A repeated (session, model_seq_id) is the same model.
    let id = session.models.get(body.model_seq_id);
    if (!id) {
      id = this.flavor === 'tinker' ? `${body.session_id}:train:${body.model_seq_id}` : `model_${randomUUID().slice(0, 8)}`;
      const backend = new LocalBackend(this.header.config, this.tokenizer, { dir: join(this.dir, safeDir(id)), ...(this.o.kernels ? { kernels: this.o.kernels } : {}), baseModel: this.modelName, trainRows: 'all-rows' });
      backend.model.params.a.set(this.baseParams);
      const rank = body.lora_config?.rank ?? 32;
      this.models.set(id, { id, rank, backend, nextSeq: 1, bySeq: new Map(), running: false, accumulated: 0, unloaded: false });
      session.models.set(body.model_seq_id, id);
      const meta = body['user_metadata'];
      this.runs.add({ id, baseModel: this.modelName, rank, owner: 'local', ...(isStringRecord(meta) ? { userMetadata: meta } : {}) });
    }
    const modelId = id;
    const r = this.future(async () => ({ model_id: modelId }));
    return { status: 200, body: { ...(r.body as object), model_id: modelId } };
  }

  private info(body: Record<string, unknown>): Reply {
    const m = this.model(body);
    return ok({
      model_id: m.id,
      model_data: { model_name: this.modelName, base_model: this.modelName, arch: 'sleuth-local-lm', tokenizer_id: 'sleuth-bpe', lora_config: { rank: m.rank }, sleuth_tokenizer: this.tokenizer.data },
      is_lora: true,
      lora_rank: m.rank,
      model_name: this.modelName,
    });
  }

  /** What create_training_client_from_state reads before it creates the model to load into. */
  private weightsInfo(raw: Record<string, unknown>): Reply {
    const { tinker_path: path } = parse(WeightsInfoSchema, raw, 'weights_info');
    const p = parsePath(path);
    if (!p) throw new HttpError(400, `weights_info: '${path}' is not a tinker://RUN/weights/NAME or tinker://RUN/sampler_weights/NAME path`);
    const run = this.runs.get(p.modelId);
    const kind = p.kind === 'weights' ? 'weights' : 'sampler_weights';
    if (!run || !run.checkpoints.has(`${kind}/${p.name}`)) throw new HttpError(404, `weights_info: no checkpoint '${path}' on this server`);
    return ok({ base_model: run.baseModel, is_lora: true, lora_rank: run.rank, train_unembed: true, train_mlp: true, train_attn: true });
  }

  private model(body: Record<string, unknown>): ModelState {
    const id = body['model_id'];
    if (typeof id !== 'string') throw new HttpError(422, 'model_id is required');
    const m = this.models.get(id);
    if (!m) throw new HttpError(404, `model '${id}' not found`);
    return m;
  }

  /**
   * A model request: checked now (4xx at once if bad), deduplicated on (model_id, seq_id) and run
   * in seq_id order. A rejected request still spends its seq_id.
   */
  private enqueue(kind: string, body: Record<string, unknown>): Reply {
    const m = this.model(body);
    this.runs.touch(m.id);
    const seq = body['seq_id'];
    if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 1) throw new HttpError(422, `${kind}: seq_id must be a whole number >= 1`);
    if (this.flavor === 'skyrl') {
      try {
        this.skyrlChecks(kind, m, body);
      } catch (err) {
        // Refused at the HTTP level: this emulation orders by seq_id (SkyRL does not), so the
        // seq_id must not hold up later requests; a retry of a queued request keeps its job.
        if (!m.bySeq.has(seq) && seq >= m.nextSeq) {
          m.bySeq.set(seq, { kind, record: { state: 'failed', waiters: [] }, hash: '', rejected: asHttpError(err) });
          void this.pump(m);
        }
        throw err;
      }
    }
    const { type: _type, ...rest } = body;
    const hash = createHash('sha256').update(kind + JSON.stringify(rest)).digest('hex');
    const existing = m.bySeq.get(seq);
    if (existing) {
      if (existing.hash !== hash) throw new HttpError(409, `${kind}: seq_id ${seq} of model ${m.id} was already used by a different request`, { 'x-should-retry': 'false' });
      if (existing.rejected) throw existing.rejected;
      // The original future, under a fresh id (the old one may have expired).
      return this.register(existing.record);
    }
    if (seq < m.nextSeq) throw new HttpError(409, `${kind}: seq_id ${seq} of model ${m.id} has already run`, { 'x-should-retry': 'false' });
    const record: FutureRecord = { state: 'pending', waiters: [], ...(kind === 'forward_backward' || kind === 'forward' ? { proto: 'forward_backward' as const } : {}) };
    let work: () => Promise<unknown>;
    try {
      work = this.prepare(kind, m, body, seq);
    } catch (err) {
      const rejected = asHttpError(err);
      if (rejected.status >= 500) throw rejected;
      if (this.flavor === 'skyrl') {
        // SkyRL queues first and checks when it runs: the future fails, in seq_id order.
        work = () => Promise.reject(err);
      } else {
        m.bySeq.set(seq, { kind, record, hash, rejected });
        void this.pump(m);
        throw rejected;
      }
    }
    m.bySeq.set(seq, { kind, work, record, hash });
    void this.pump(m);
    return this.register(record);
  }

  private async pump(m: ModelState): Promise<void> {
    if (m.running) return;
    m.running = true;
    try {
      for (;;) {
        const job = m.bySeq.get(m.nextSeq);
        if (!job) break;
        if (job.rejected) {
          m.nextSeq += 1;
          continue;
        }
        if (job.record.state !== 'pending' || !job.work) break;
        // Reply first, work later: the request's future is pending when its submission returns.
        await new Promise((r) => setImmediate(r));
        try {
          settle(job.record, 'done', await job.work());
        } catch (err) {
          settle(job.record, 'failed', undefined, errorOf(err, this.log));
        }
        // Only the hash is needed from now on (to recognise a resubmission).
        delete job.work;
        m.nextSeq += 1;
      }
    } finally {
      m.running = false;
    }
  }

  /** Check a model request against the model (throws 4xx) and return the work that carries it out. */
  private prepare(kind: string, m: ModelState, body: Record<string, unknown>, seq: number): () => Promise<unknown> {
    const b = m.backend;
    switch (kind) {
      case 'forward':
      case 'forward_backward': {
        const r = parse(ForwardBackwardSchema, body, kind);
        const lossFn = r.forward_backward_input.loss_fn;
        if (!isLossFn(lossFn)) throw new InputError(`${kind}: loss_fn '${lossFn}' is not supported here (${LOSS_NAMES.join(', ')})`);
        // SkyRL's request model has no loss_fn_config: dropped, as it does.
        const cfg = this.flavor === 'skyrl' ? {} : (r.forward_backward_input.loss_fn_config ?? {});
        for (const [k, v] of Object.entries(cfg)) {
          if (!['clip_low_threshold', 'clip_high_threshold'].includes(k) || !LOSSES[lossFn].clip) throw new InputError(`${kind}: loss_fn_config key '${k}' is not accepted for ${lossFn}`);
          if (!(Number.isFinite(v) && v >= 0 && v <= 1e6)) throw new InputError(`${kind}: loss_fn_config.${k} must be a finite number in [0, 1e6], got ${v}`);
        }
        if (cfg['clip_low_threshold'] !== undefined && cfg['clip_high_threshold'] !== undefined && !(cfg['clip_low_threshold'] <= cfg['clip_high_threshold'])) throw new InputError(`${kind}: loss_fn_config.clip_low_threshold must not exceed clip_high_threshold`);
        if (r.forward_backward_input.data.length === 0) throw new InputError(`${kind}: forward_backward_input.data is empty`);
        const datums = r.forward_backward_input.data.map((d, i) => this.toDatum(d, i, lossFn, kind));
        b.validate(datums, lossFn);
        const loss = {
          ...(cfg['clip_low_threshold'] !== undefined ? { clipLowThreshold: cfg['clip_low_threshold'] } : {}),
          ...(cfg['clip_high_threshold'] !== undefined ? { clipHighThreshold: cfg['clip_high_threshold'] } : {}),
        };
        return async () => {
          const res = kind === 'forward' ? b.forwardSync(datums, lossFn, loss) : b.forwardBackwardSync(datums, lossFn, loss);
          if (kind === 'forward_backward') m.accumulated += datums.length;
          return {
            loss_fn_output_type: 'TensorData',
            loss_fn_outputs: res.logprobs.map((lp) => ({ logprobs: { data: lp, dtype: 'float32', shape: [lp.length] } })),
            metrics: res.metrics,
          };
        };
      }
      case 'optim_step': {
        const a = parse(OptimSchema, body, 'optim_step').adam_params;
        for (const [k, v] of Object.entries(a)) {
          const [lo, hi, rule] = ADAM_RANGES[k]!;
          if (!(Number.isFinite(v) && v >= lo && v <= hi)) throw new InputError(`optim_step: adam_params.${k} = ${v} is out of range (${rule})`);
        }
        return async () => {
          // SkyRL averages the accumulated gradients over the step's sequences before Adam.
          if (this.flavor === 'skyrl' && m.accumulated > 1) {
            const g = b.model.grads!.a;
            for (let i = 0; i < g.length; i++) g[i] = g[i]! / m.accumulated;
          }
          m.accumulated = 0;
          // SkyRL ignores grad_clip_norm.
          const metrics = b.optimStepSync({ learningRate: a.learning_rate, beta1: a.beta1, beta2: a.beta2, eps: a.eps, weightDecay: a.weight_decay, gradClipNorm: this.flavor === 'skyrl' ? 0 : a.grad_clip_norm });
          return { metrics };
        };
      }
      case 'save_weights': {
        const r = parse(SaveSchema, body, 'save_weights');
        const name = checkName(r.path, 'save_weights');
        this.checkOverwrite(m, 'training', name, r.overwrite);
        return async () => {
          const file = await b.saveState(name);
          return { path: this.runs.addCheckpoint(m.id, { type: 'training', name, file, ttlSeconds: r.ttl_seconds }).tinkerPath };
        };
      }
      case 'load_weights': {
        const r = parse(LoadSchema, body, 'load_weights');
        if (seq !== 1) throw new InputError('load_weights must be the first request of a model (create a new model to load into)');
        const file = this.fileOf(r.path, 'state');
        return async () => {
          if (r.optimizer) b.loadStateSync(file);
          else {
            // Weights only (create_training_client_from_state): the optimiser starts over, as the
            // SDK documents, its step count with its moments. Fresh moments with the old step
            // count would bias-correct the first updates as if they had history: steps of the wrong size.
            b.model.params.a.set(readCheckpoint(file).tensors.params!);
            b.resetOptimizer();
          }
          return { path: r.path, model_id: m.id };
        };
      }
      case 'save_weights_for_sampler': {
        const r = parse(SaveSchema, body, 'save_weights_for_sampler');
        if (r.sampling_session_seq_id !== null && r.sampling_session_seq_id !== undefined && !r.path) {
          return async () => {
            const id = `samp_${randomUUID().slice(0, 8)}`;
            this.samplingSessions.set(id, { sampler: b.samplerInMemory(id) });
            return { sampling_session_id: id };
          };
        }
        const name = checkName(r.path, 'save_weights_for_sampler');
        return async () => {
          const sampler = b.saveWeightsForLocalSampler(name);
          const entry = this.runs.addCheckpoint(m.id, { type: 'sampler', name, file: sampler.modelPath, ttlSeconds: r.ttl_seconds });
          const path = this.flavor === 'tinker' ? entry.tinkerPath : `tinker://${m.id}/${name}`;
          this.samplers.set(path, sampler);
          return { path };
        };
      }
      default:
        throw new Error(`unknown model request ${kind}`);
    }
  }

  /** Names SkyRL has been asked to save, per model and kind: its checkpoint rows exist from submission on. */
  private readonly skyrlSaved = new Set<string>();

  /** What SkyRL tx 0.3.0 refuses at submission: cispo (not in its loss_fn literal), and a save name used before. */
  private skyrlChecks(kind: string, m: ModelState, body: Record<string, unknown>): void {
    const input = body['forward_backward_input'];
    if ((kind === 'forward_backward' || kind === 'forward') && typeof input === 'object' && input !== null && (input as Record<string, unknown>)['loss_fn'] === 'cispo') {
      throw new HttpError(422, "forward_backward_input.loss_fn: Input should be 'cross_entropy', 'importance_sampling' or 'ppo'");
    }
    if ((kind === 'save_weights' || kind === 'save_weights_for_sampler') && typeof body['path'] === 'string') {
      const key = `${m.id} ${kind} ${body['path']}`;
      if (this.skyrlSaved.has(key)) throw new HttpError(409, `checkpoint '${body['path']}' already exists for model ${m.id}`);
      this.skyrlSaved.add(key);
    }
  }

  /** The SDK sends overwrite: false by default; a name already saved is then refused (400). */
  private checkOverwrite(m: ModelState, type: CheckpointType, name: string, overwrite: boolean | null | undefined): void {
    const id = `${type === 'training' ? 'weights' : 'sampler_weights'}/${name}`;
    if (overwrite === false && this.runs.checkpoint(m.id, id)) throw new InputError(`save_weights: checkpoint '${name}' of model ${m.id} exists; pass overwrite=true to replace it`);
  }

  private toDatum(d: z.infer<typeof WireDatumSchema>, i: number, lossFn: LossFn, kind: string): Datum {
    const input = inputTokens(d.model_input);
    const f = d.loss_fn_inputs;
    const bad = (msg: string) => new InputError(`${kind}: datum ${i}: ${msg}`);
    if (!f['target_tokens']) throw bad('loss_fn_inputs.target_tokens is required');
    let weights = f['weights']?.data ?? new Array<number>(input.length).fill(1);
    if (this.flavor === 'skyrl') {
      // SkyRL: each token's loss is divided by the sequence's Σ weights.
      const total = weights.reduce((a, w) => a + w, 0);
      if (total > 0) weights = weights.map((w) => w / total);
    }
    const datum: Datum = { inputTokens: input, targetTokens: f['target_tokens'].data, weights };
    if (LOSSES[lossFn].rl) {
      if (!f['logprobs'] || !f['advantages']) throw bad(`${lossFn} needs loss_fn_inputs.logprobs and advantages`);
      datum.logprobs = f['logprobs'].data;
      datum.advantages = f['advantages'].data;
    }
    return datum;
  }

  private createSamplingSession(body: Record<string, unknown>): Reply {
    const path = body['model_path'];
    const base = body['base_model'];
    const sampler = typeof path === 'string' ? this.samplerAt(path) : this.base(typeof base === 'string' ? base : this.modelName);
    const id = `samp_${randomUUID().slice(0, 8)}`;
    this.samplingSessions.set(id, { sampler, ...(typeof path === 'string' ? { path } : {}) });
    return ok({ sampling_session_id: id });
  }

  private asample(raw: Record<string, unknown>): Reply {
    const r = parse(SampleSchema, raw, 'asample');
    const p = r.sampling_params;
    if (this.flavor === 'skyrl' && !(typeof p.max_tokens === 'number' && p.max_tokens > 0)) throw new HttpError(422, 'asample: sampling_params.max_tokens is required and must be > 0');
    if (typeof p.stop === 'string' && this.flavor === 'skyrl') throw new HttpError(422, 'asample: sampling_params.stop must be a list');
    const stop = typeof p.stop === 'string' ? [p.stop] : p.stop ?? [];
    const stopIds = stop.filter((x): x is number => typeof x === 'number');
    const stopStrings = stop.filter((x): x is string => typeof x === 'string');
    const maxTokens = p.max_tokens ?? 128;
    const bad = (msg: string) => new InputError(`asample: sampling_params.${msg}`);
    if (!(maxTokens >= 1)) throw bad(`max_tokens must be >= 1, got ${maxTokens}`);
    if (!(Number.isFinite(p.temperature) && p.temperature >= 0 && p.temperature <= 100)) throw bad(`temperature must be a finite number in [0, 100], got ${p.temperature}`);
    if (!(Number.isFinite(p.top_p) && p.top_p > 0 && p.top_p <= 1)) throw bad(`top_p must be in (0, 1], got ${p.top_p}`);
    if (!(p.top_k === -1 || p.top_k >= 1)) throw bad(`top_k must be -1 (off) or >= 1, got ${p.top_k}`);
    if (stopStrings.some((x) => x.length === 0)) throw bad('stop strings must not be empty');
    if (r.topk_prompt_logprobs) throw new InputError('asample: topk_prompt_logprobs is not supported by this server (send 0)');
    let sampler: LocalSampler;
    if (r.sampling_session_id) {
      const s = this.samplingSessions.get(r.sampling_session_id);
      if (!s) throw new HttpError(404, `sampling session '${r.sampling_session_id}' not found`);
      sampler = s.sampler;
    } else if (r.model_path) sampler = this.samplerAt(r.model_path);
    else if (r.base_model) sampler = this.base(r.base_model);
    else throw new HttpError(422, 'asample: give sampling_session_id, model_path or base_model');
    const prompt = inputTokens(r.prompt);
    const params = { maxTokens, temperature: p.temperature, topP: p.top_p, topK: p.top_k, stop: stopIds, stopStrings, ...(p.seed !== null && p.seed !== undefined ? { seed: p.seed } : {}) };
    return this.future(async () => {
      // The sampler yields to the event loop as it goes: other requests are served meanwhile.
      const sequences = await sampler.sample(prompt, params, r.num_samples);
      const out: Record<string, unknown> = { type: 'sample', sequences: sequences.map((s) => ({ tokens: s.tokens, logprobs: s.logprobs, stop_reason: s.stopReason })) };
      if (r.prompt_logprobs) {
        const lps = await sampler.computeLogprobs(prompt);
        // SkyRL: no entry for the first prompt token.
        out['prompt_logprobs'] = this.flavor === 'skyrl' ? lps.slice(1) : lps;
      }
      return out;
    }, 'sample');
  }

  private base(name: string): LocalSampler {
    if (name !== this.modelName) throw new HttpError(400, `base_model '${name}' is not served here; this server serves '${this.modelName}'`);
    if (!this.baseSampler) {
      const b = new LocalBackend(this.header.config, this.tokenizer, { dir: this.dir, baseModel: this.modelName, trainRows: 'all-rows', ...(this.o.kernels ? { kernels: this.o.kernels } : {}) });
      b.model.params.a.set(this.baseParams);
      this.baseSampler = b.samplerInMemory('base');
    }
    return this.baseSampler;
  }

  /** A sampler on saved sampler weights, by either path form (§11); loaded from disk after a restart. */
  private samplerAt(path: string): LocalSampler {
    const parsed = parsePath(path);
    const canonical = parsed ? [`tinker://${parsed.modelId}/sampler_weights/${parsed.name}`, `tinker://${parsed.modelId}/${parsed.name}`] : [path];
    for (const p of canonical) {
      const s = this.samplers.get(p);
      if (s) return s;
    }
    const file = this.fileOf(path, 'sampler');
    const { header, tensors } = readCheckpoint(file);
    const b = new LocalBackend(header.config, new BpeTokenizer(header.tokenizer), { dir: this.dir, baseModel: this.modelName, trainRows: 'all-rows' });
    b.model.params.a.set(tensors.params!);
    const s = b.samplerInMemory(path);
    this.samplers.set(path, s);
    return s;
  }

  private fileOf(path: string, kind: 'state' | 'sampler'): string {
    const p = parsePath(path);
    if (!p || (kind === 'state' && p.kind !== 'weights') || (kind === 'sampler' && p.kind === 'weights')) throw new InputError(`'${path}' is not a ${kind === 'state' ? 'tinker://MODEL/weights/NAME' : 'tinker://MODEL/sampler_weights/NAME'} path`);
    const file = join(this.dir, safeDir(p.modelId), `${p.name}.${kind}.ckpt`);
    if (!existsSync(file)) throw new InputError(`'${path}': no such checkpoint on this server`);
    return file;
  }

  /** A future for work not tied to a model's order. */
  private future(work: () => Promise<unknown>, proto?: FutureRecord['proto']): Reply {
    const record: FutureRecord = { state: 'pending', waiters: [], ...(proto ? { proto } : {}) };
    setImmediate(() => {
      work().then(
        (r) => settle(record, 'done', r),
        (err) => settle(record, 'failed', undefined, errorOf(err, this.log)),
      );
    });
    return this.register(record);
  }

  private register(record: FutureRecord): Reply {
    const id = `req_${randomUUID()}`;
    this.futures.set(id, record);
    return ok(this.flavor === 'skyrl' ? { request_id: id, future_id: id, status: 'pending' } : { request_id: id });
  }

  /** A future's state; a forward_backward or sample result as protobuf when Accept asks for it. */
  private async retrieve(body: Record<string, unknown>, fault: FaultKind | undefined, accept: string): Promise<Reply> {
    const id = body['request_id'];
    if (typeof id !== 'string') throw new HttpError(422, 'retrieve_future: request_id is required');
    const record = this.futures.get(id);
    if (!record) throw new HttpError(404, `future '${id}' not found`);
    if (fault === '410') {
      // The promise expired: its id is gone; the work (and its result) are not.
      this.futures.delete(id);
      throw new HttpError(410, `future '${id}' expired`);
    }
    if (record.state === 'pending' && fault !== 'try_again') {
      await new Promise<void>((wake) => {
        const t = setTimeout(wake, this.o.pollTimeoutMs ?? 5_000);
        record.waiters.push(() => {
          clearTimeout(t);
          wake();
        });
      });
    }
    if (record.state === 'pending' || fault === 'try_again') {
      if (this.flavor === 'skyrl') throw new HttpError(408, 'timed out waiting for the result');
      return ok({ type: 'try_again', request_id: id, queue_state: 'active' });
    }
    if (record.state === 'done') {
      if (record.proto && accept.includes(PROTO_CONTENT_TYPE)) {
        const bytes = record.proto === 'sample' ? encodeSampleResponse(record.result as Parameters<typeof encodeSampleResponse>[0]) : encodeForwardBackwardOutput(record.result as Parameters<typeof encodeForwardBackwardOutput>[0]);
        return { status: 200, body: Buffer.from(bytes), headers: { 'content-type': PROTO_CONTENT_TYPE } };
      }
      return ok(record.result);
    }
    const e = record.error!;
    if (this.flavor === 'skyrl') throw new HttpError(e.category === 'user' ? 400 : 500, e.message);
    return ok({ error: e.message, category: e.category });
  }
}

function settle(record: FutureRecord, state: 'done' | 'failed', result?: unknown, error?: FutureRecord['error']): void {
  record.state = state;
  record.settledAt = Date.now();
  if (state === 'done') record.result = result;
  else record.error = error!;
  for (const w of record.waiters.splice(0)) w();
}

function errorOf(err: unknown, log: (line: string) => void): FutureRecord['error'] {
  if (isInputError(err)) return { message: err.message, category: 'user' };
  log(`serve-tinker: internal error: ${(err as Error).stack ?? String(err)}`);
  return { message: (err as Error).message, category: 'server' };
}

function errorReply(err: unknown, log: (line: string) => void): Reply {
  if (err instanceof HttpError) return { status: err.status, body: { detail: err.message }, headers: err.headers };
  if (isInputError(err)) return { status: 400, body: { detail: err.message } };
  log(`serve-tinker: internal error: ${(err as Error).stack ?? String(err)}`);
  return { status: 500, body: { detail: (err as Error).message } };
}

function ok(body: unknown): Reply {
  return { status: 200, body };
}

function send(res: ServerResponse, r: Reply): void {
  const body = Buffer.isBuffer(r.body) ? r.body : Buffer.from(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
  res.writeHead(r.status, { 'content-type': 'application/json', 'content-length': body.length, ...(r.status === 413 ? { connection: 'close' } : {}), ...r.headers });
  res.end(body);
}

/**
 * The whole body, up to `limit` bytes. A larger body is read to its end but not kept, then
 * answered 413: the client, still sending, would otherwise see a reset rather than the answer.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size <= limit) parts.push(b);
      else parts.length = 0;
    });
    req.on('end', () => (size > limit ? fail(new HttpError(413, `request body of ${size} bytes is over the limit of ${limit} bytes`)) : ok(Buffer.concat(parts))));
    req.on('error', fail);
  });
}

function asHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (isInputError(err)) return new HttpError(400, err.message);
  return new HttpError(500, (err as Error).message);
}

function intParam(url: URL, name: string, dflt: number, min: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return dflt;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min || v > max) throw new HttpError(400, `query parameter ${name} must be a whole number in [${min}, ${max}], got '${raw}'`);
  return v;
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new HttpError(422, `${what}: ${i.path.join('.') || 'body'}: ${i.message}`);
  }
  return r.data;
}

function checkName(name: string | null | undefined, what: string): string {
  if (!name || !NAME.test(name)) throw new InputError(`${what}: path '${name ?? ''}' must be a name of 1-200 letters, digits, '_' or '-'`);
  return name;
}

/** `tinker://MODEL/weights/NAME`, `tinker://MODEL/sampler_weights/NAME` or SkyRL's `tinker://MODEL/NAME`. */
export function parsePath(path: string): { modelId: string; kind: 'weights' | 'sampler_weights' | 'plain'; name: string } | undefined {
  const m = /^tinker:\/\/([^/]+)\/(?:(weights|sampler_weights)\/)?([A-Za-z0-9_-]+)$/.exec(path);
  if (!m) return undefined;
  return { modelId: m[1]!, kind: (m[2] as 'weights' | 'sampler_weights' | undefined) ?? 'plain', name: m[3]! };
}

function safeDir(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_');
}
