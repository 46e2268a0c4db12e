import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { InputError, isInputError } from '../../errors.js';
import { BpeTokenizer } from '../../protocol/compact/bpe.js';
import { LocalBackend } from '../local/backend.js';
import { readCheckpoint } from '../local/checkpoint.js';
import type { LocalSampler } from '../local/sampler.js';
import type { Datum, LossFn } from '../types.js';
import { API, inputTokens, ModelInputSchema, WireDatumSchema, type Flavor } from './wire.js';

/**
 * `sleuth serve-tinker`: the Tinker REST API (TINKER_API.md §4) served over sleuth's local CPU
 * backend, on 127.0.0.1. It speaks either dialect (`flavor`): hosted Tinker's (failed futures are
 * 200 {error, category}, pending polls answer try_again, loss summed) or SkyRL's (failed futures
 * are 400 {detail}, pending polls answer 408, lora_config and max_tokens required, stop only as a
 * list, each sequence's loss divided by its Σ weights and gradients averaged over sequences).
 *
 * Futures are real: a request is queued and runs after its reply is sent; a model's requests run
 * in seq_id order (a later seq_id waits for the earlier ones); a repeated (model_id, seq_id)
 * returns the original future (409 if its body differs); a repeated X-Idempotency-Key returns the
 * first reply. The "LoRA" is the whole local model: the rank is recorded, not used.
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
  log?: (line: string) => void;
}

interface FutureRecord {
  state: 'pending' | 'done' | 'failed';
  /** When it settled (futures are forgotten FUTURE_TTL_MS later). */
  settledAt?: number;
  result?: unknown;
  error?: { message: string; category: 'user' | 'server' };
  waiters: (() => void)[];
}

interface Job {
  kind: string;
  body: Record<string, unknown>;
  record: FutureRecord;
  hash: string;
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
const SaveSchema = z.object({ ...ModelReq, path: z.string().nullish(), sampling_session_seq_id: z.number().int().min(0).nullish() }).passthrough();
const LoadSchema = z.object({ ...ModelReq, path: z.string(), optimizer: z.boolean().default(true) }).passthrough();
const SamplingParamsSchema = z.object({
  max_tokens: z.number().int().nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string()), z.array(z.number().int())]).nullish(),
  temperature: z.number().default(1),
  top_k: z.number().int().default(-1),
  top_p: z.number().default(1),
});
const SampleSchema = z.object({
  prompt: ModelInputSchema,
  num_samples: z.number().int().min(1).max(256).default(1),
  sampling_params: SamplingParamsSchema,
  sampling_session_id: z.string().nullish(),
  seq_id: z.number().int().nullish(),
  base_model: z.string().nullish(),
  model_path: z.string().nullish(),
  prompt_logprobs: z.boolean().nullish(),
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
  private readonly samplingSessions = new Map<string, LocalSampler>();
  private baseSampler: LocalSampler | undefined;
  private readonly idempotent = new Map<string, Promise<Reply>>();
  /** Requests received per endpoint (the fault rules count with it). */
  readonly requestCounts = new Map<string, number>();
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
    this.server = createServer((req, res) => void this.handle(req, res));
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  private readonly sweeper: NodeJS.Timeout;

  /** Forget futures settled long ago, so a long run does not grow the server without bound. */
  private sweep(now = Date.now()): void {
    for (const [id, r] of this.futures) if (r.settledAt !== undefined && now - r.settledAt > FUTURE_TTL_MS) this.futures.delete(id);
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
        await readBody(req);
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
      await readBody(req);
      throw new HttpError(401, 'invalid or missing X-API-Key');
    }
    if (req.method === 'GET') {
      if (endpoint === 'healthz') return ok({ status: 'ok' });
      if (endpoint === 'get_server_capabilities') return ok({ supported_models: [{ model_name: this.modelName, max_context_length: this.header.config.context }], sleuth_flavor: this.flavor });
      const m = /^samplers\/(.+)$/.exec(endpoint);
      if (m) {
        if (!this.samplingSessions.has(m[1]!)) throw new HttpError(404, `sampler '${m[1]}' not found`);
        return ok({ sampler_id: m[1], base_model: this.modelName });
      }
      throw new HttpError(404, `no such endpoint: GET ${url.pathname}`);
    }
    if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not supported`);
    const raw = await readBody(req);
    let body: Record<string, unknown>;
    try {
      const v = raw.length ? JSON.parse(raw.toString('utf8')) : {};
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
      body = v as Record<string, unknown>;
    } catch (err) {
      throw new HttpError(400, `request body is not a JSON object (${(err as Error).message})`);
    }
    if (endpoint === 'retrieve_future') return this.retrieve(body, fault);
    if (endpoint === 'session_heartbeat') return this.heartbeat(body);
    const idem = req.headers['x-idempotency-key'];
    if (typeof idem !== 'string' || !idem) return this.post(endpoint, body);
    const key = `${endpoint} ${idem}`;
    const seen = this.idempotent.get(key);
    if (seen) return seen;
    const p = this.post(endpoint, body).catch((err) => errorReply(err, this.log));
    this.idempotent.set(key, p);
    if (this.idempotent.size > IDEMPOTENCY_LIMIT) this.idempotent.delete(this.idempotent.keys().next().value!);
    // A server error is not the request's answer: a retry with the same key may run it again.
    void p.then((r) => {
      if (r.status >= 500) this.idempotent.delete(key);
    });
    return p;
  }

  private async post(endpoint: string, body: Record<string, unknown>): Promise<Reply> {
    switch (endpoint) {
      case 'client/config':
        return ok({});
      case 'create_session': {
        const id = `sess_${randomUUID().slice(0, 8)}`;
        this.sessions.set(id, { lastHeartbeat: Date.now(), models: new Map() });
        return ok({ session_id: id, info_message: `sleuth serve-tinker (${this.flavor} dialect) over the local model ${this.modelName}` });
      }
      case 'create_model':
        return this.createModel(body);
      case 'get_info':
        return this.info(body);
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
      const backend = new LocalBackend(this.header.config, this.tokenizer, { dir: join(this.dir, safeDir(id)), ...(this.o.kernels ? { kernels: this.o.kernels } : {}), baseModel: this.modelName });
      backend.model.params.a.set(this.baseParams);
      this.models.set(id, { id, rank: body.lora_config?.rank ?? 32, backend, nextSeq: 1, bySeq: new Map(), running: false, accumulated: 0, unloaded: false });
      session.models.set(body.model_seq_id, id);
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

  private model(body: Record<string, unknown>): ModelState {
    const id = body['model_id'];
    if (typeof id !== 'string') throw new HttpError(422, 'model_id is required');
    const m = this.models.get(id);
    if (!m) throw new HttpError(404, `model '${id}' not found`);
    return m;
  }

  /** A model request: deduplicated on (model_id, seq_id) and run in seq_id order. */
  private enqueue(kind: string, body: Record<string, unknown>): Reply {
    const m = this.model(body);
    const seq = body['seq_id'];
    if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 1) throw new HttpError(422, `${kind}: seq_id must be a whole number >= 1`);
    const { type: _type, ...rest } = body;
    const hash = createHash('sha256').update(kind + JSON.stringify(rest)).digest('hex');
    const existing = m.bySeq.get(seq);
    if (existing) {
      if (existing.hash !== hash) throw new HttpError(409, `${kind}: seq_id ${seq} of model ${m.id} was already used by a different request`, { 'x-should-retry': 'false' });
      // The original future, under a fresh id (the old one may have expired).
      return this.register(existing.record);
    }
    if (seq < m.nextSeq) throw new HttpError(409, `${kind}: seq_id ${seq} of model ${m.id} has already run`, { 'x-should-retry': 'false' });
    const record: FutureRecord = { state: 'pending', waiters: [] };
    m.bySeq.set(seq, { kind, body, record, hash });
    void this.pump(m);
    return this.register(record);
  }

  private async pump(m: ModelState): Promise<void> {
    if (m.running) return;
    m.running = true;
    try {
      for (;;) {
        const job = m.bySeq.get(m.nextSeq);
        if (!job || job.record.state !== 'pending') break;
        // Reply first, work later: the request's future is pending when its submission returns.
        await new Promise((r) => setImmediate(r));
        try {
          settle(job.record, 'done', await this.run(m, job, m.nextSeq));
        } catch (err) {
          settle(job.record, 'failed', undefined, errorOf(err, this.log));
        }
        // Only the hash is needed from now on (to recognise a resubmission).
        job.body = {};
        m.nextSeq += 1;
      }
    } finally {
      m.running = false;
    }
  }

  private async run(m: ModelState, job: Job, seq: number): Promise<unknown> {
    const b = m.backend;
    switch (job.kind) {
      case 'forward_backward': {
        const r = parse(ForwardBackwardSchema, job.body, 'forward_backward');
        const lossFn = r.forward_backward_input.loss_fn;
        if (!['cross_entropy', 'importance_sampling', 'ppo', 'cispo'].includes(lossFn)) throw new InputError(`forward_backward: loss_fn '${lossFn}' is not supported here (cross_entropy, importance_sampling, ppo, cispo)`);
        const cfg = r.forward_backward_input.loss_fn_config ?? {};
        for (const k of Object.keys(cfg)) if (!['clip_low_threshold', 'clip_high_threshold'].includes(k) || lossFn === 'importance_sampling' || lossFn === 'cross_entropy') throw new InputError(`forward_backward: loss_fn_config key '${k}' is not accepted for ${lossFn}`);
        const datums = r.forward_backward_input.data.map((d, i) => this.toDatum(d, i, lossFn as LossFn));
        const res = b.forwardBackwardSync(datums, lossFn as LossFn, {
          ...(cfg['clip_low_threshold'] !== undefined ? { clipLowThreshold: cfg['clip_low_threshold'] } : {}),
          ...(cfg['clip_high_threshold'] !== undefined ? { clipHighThreshold: cfg['clip_high_threshold'] } : {}),
        });
        m.accumulated += datums.length;
        return {
          loss_fn_output_type: 'TensorData',
          loss_fn_outputs: res.logprobs.map((lp) => ({ logprobs: { data: lp, dtype: 'float32', shape: [lp.length] } })),
          metrics: res.metrics,
        };
      }
      case 'optim_step': {
        const a = parse(OptimSchema, job.body, 'optim_step').adam_params;
        // SkyRL averages the accumulated gradients over the step's sequences before Adam.
        if (this.flavor === 'skyrl' && m.accumulated > 1) {
          const g = b.model.grads!.a;
          for (let i = 0; i < g.length; i++) g[i] = g[i]! / m.accumulated;
        }
        m.accumulated = 0;
        const metrics = b.optimStepSync({ learningRate: a.learning_rate, beta1: a.beta1, beta2: a.beta2, eps: a.eps, weightDecay: a.weight_decay, gradClipNorm: a.grad_clip_norm });
        return { metrics };
      }
      case 'save_weights': {
        const r = parse(SaveSchema, job.body, 'save_weights');
        const name = checkName(r.path, 'save_weights');
        await b.saveState(name);
        return { path: `tinker://${m.id}/weights/${name}` };
      }
      case 'load_weights': {
        const r = parse(LoadSchema, job.body, 'load_weights');
        if (seq !== 1) throw new InputError('load_weights must be the first request of a model (create a new model to load into)');
        const file = this.fileOf(r.path, 'state');
        const { header, tensors } = readCheckpoint(file);
        if (r.optimizer) b.loadStateSync(file);
        else {
          b.model.params.a.set(tensors.params!);
          b.step = header.step;
        }
        return { path: r.path, model_id: m.id };
      }
      case 'save_weights_for_sampler': {
        const r = parse(SaveSchema, job.body, 'save_weights_for_sampler');
        if (r.sampling_session_seq_id !== null && r.sampling_session_seq_id !== undefined && !r.path) {
          const id = `samp_${randomUUID().slice(0, 8)}`;
          this.samplingSessions.set(id, b.samplerInMemory(id));
          return { sampling_session_id: id };
        }
        const name = checkName(r.path, 'save_weights_for_sampler');
        const sampler = await b.saveWeightsForSampler(name);
        const path = this.flavor === 'tinker' ? `tinker://${m.id}/sampler_weights/${name}` : `tinker://${m.id}/${name}`;
        this.samplers.set(path, sampler);
        return { path };
      }
      default:
        throw new Error(`unknown model request ${job.kind}`);
    }
  }

  private toDatum(d: z.infer<typeof WireDatumSchema>, i: number, lossFn: LossFn): Datum {
    const input = inputTokens(d.model_input);
    const f = d.loss_fn_inputs;
    const bad = (msg: string) => new InputError(`forward_backward: datum ${i}: ${msg}`);
    if (!f['target_tokens']) throw bad('loss_fn_inputs.target_tokens is required');
    let weights = f['weights']?.data ?? new Array<number>(input.length).fill(1);
    if (this.flavor === 'skyrl') {
      // SkyRL: each token's loss is divided by the sequence's Σ weights.
      const total = weights.reduce((a, w) => a + w, 0);
      if (total > 0) weights = weights.map((w) => w / total);
    }
    const datum: Datum = { inputTokens: input, targetTokens: f['target_tokens'].data, weights };
    if (lossFn !== 'cross_entropy') {
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
    this.samplingSessions.set(id, sampler);
    return ok({ sampling_session_id: id });
  }

  private asample(raw: Record<string, unknown>): Reply {
    const r = parse(SampleSchema, raw, 'asample');
    const p = r.sampling_params;
    if (this.flavor === 'skyrl' && !(typeof p.max_tokens === 'number' && p.max_tokens > 0)) throw new HttpError(422, 'asample: sampling_params.max_tokens is required and must be > 0');
    if (typeof p.stop === 'string' && this.flavor === 'skyrl') throw new HttpError(422, 'asample: sampling_params.stop must be a list');
    const stop = p.stop ?? [];
    if (typeof stop === 'string' || stop.some((s) => typeof s === 'string')) throw new HttpError(422, 'asample: this server stops on token ids only (stop as a list of integers)');
    let sampler: LocalSampler;
    if (r.sampling_session_id) {
      const s = this.samplingSessions.get(r.sampling_session_id);
      if (!s) throw new HttpError(404, `sampling session '${r.sampling_session_id}' not found`);
      sampler = s;
    } else if (r.model_path) sampler = this.samplerAt(r.model_path);
    else if (r.base_model) sampler = this.base(r.base_model);
    else throw new HttpError(422, 'asample: give sampling_session_id, model_path or base_model');
    const prompt = inputTokens(r.prompt);
    return this.future(async () => {
      const sequences = sampler.sampleSync(prompt, { maxTokens: p.max_tokens ?? 128, temperature: p.temperature, topP: p.top_p, topK: p.top_k, stop: stop as number[], ...(p.seed !== null && p.seed !== undefined ? { seed: p.seed } : {}) }, r.num_samples);
      const out: Record<string, unknown> = { type: 'sample', sequences: sequences.map((s) => ({ tokens: s.tokens, logprobs: s.logprobs, stop_reason: s.stopReason })) };
      if (r.prompt_logprobs) out['prompt_logprobs'] = await sampler.computeLogprobs(prompt);
      return out;
    });
  }

  private base(name: string): LocalSampler {
    if (name !== this.modelName) throw new HttpError(400, `base_model '${name}' is not served here; this server serves '${this.modelName}'`);
    if (!this.baseSampler) {
      const b = new LocalBackend(this.header.config, this.tokenizer, { dir: this.dir, baseModel: this.modelName, ...(this.o.kernels ? { kernels: this.o.kernels } : {}) });
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
    const b = new LocalBackend(header.config, new BpeTokenizer(header.tokenizer), { dir: this.dir, baseModel: this.modelName });
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
  private future(work: () => Promise<unknown>): Reply {
    const record: FutureRecord = { state: 'pending', waiters: [] };
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

  private async retrieve(body: Record<string, unknown>, fault: FaultKind | undefined): Promise<Reply> {
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
    if (record.state === 'done') return ok(record.result);
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
  const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
  res.writeHead(r.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...r.headers });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size > MAX_BODY) {
        fail(new HttpError(413, `request body over ${MAX_BODY} bytes`));
        req.destroy();
        return;
      }
      parts.push(b);
    });
    req.on('end', () => ok(Buffer.concat(parts)));
    req.on('error', fail);
  });
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
