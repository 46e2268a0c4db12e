import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { InputError } from '../errors.js';
import { closeServer, listen } from '../http/lifecycle.js';
import { asHttpError, checkBody, HttpError, jsonObject, mediaType, parseJson, readBody, readDecodedBody } from '../http/request.js';
import { send, sendJson } from '../http/response.js';
import { BpeTokenizer } from '../protocol/compact/bpe.js';
import { LocalBackend } from '../backend/local/backend.js';
import { readCheckpoint } from '../backend/local/checkpoint.js';
import { isLossFn, LOSS_NAMES, LOSSES } from '../backend/losses.js';
import type { Datum, LossFn } from '../backend/types.js';
import { API, inputTokens, type Flavor, type WireDatum } from '../backend/tinker/wire.js';
import { dialectOf, type Dialect } from './dialect.js';
import { FaultPlan, injectedReply, type FaultKind, type FaultRule } from './faults.js';
import { errorReply, Futures, IdempotentReplies, ok, pendingRecord, SeqQueue, type FutureRecord, type Reply } from './futures.js';
import { decodeForwardBackwardRequest, encodeForwardBackwardOutput, encodeSampleResponse, PROTO_CONTENT_TYPE } from './proto.js';
import { checkpointFile, modelDir, parsePath, RunRegistry, type CheckpointType } from './registry.js';
import { clientConfig, POST_ENDPOINTS, restRoute } from './routes.js';
import { Samplers } from './sampling.js';
import { ADAM_RANGES, checkName, CreateModelSchema, ForwardBackwardSchema, isStringRecord, LoadSchema, OptimSchema, SaveSchema, TelemetrySchema, WeightsInfoSchema } from './schemas.js';

/**
 * `sleuth serve-tinker`: the Tinker REST API (docs/reference/TINKER_API.md §4) served over sleuth's
 * local CPU backend, on 127.0.0.1, in either dialect (hosted Tinker's or SkyRL's: dialect.ts).
 * Requests become futures, run in seq_id order per model, deduplicated by seq_id and idempotency
 * key (futures.ts); faults can be injected for tests (faults.ts). The "LoRA" is the whole local
 * model: the rank is recorded, not used.
 *
 * Wire formats (the official SDK 0.25.0's): JSON everywhere, plus protobuf (tinker_public.proto,
 * optionally zstd- or gzip-compressed) for forward_backward bodies, and protobuf results of
 * forward_backward, forward and sampling for a retrieve_future that sends
 * `Accept: application/x-protobuf`. Also served: forward (SDK <= 0.24), weights_info, the training
 * runs and checkpoints listing (with delete and TTL; routes.ts), client/config (what this server
 * really supports), client/dynamic_config and telemetry (accepted, not kept).
 */

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

interface ModelState {
  id: string;
  rank: number;
  backend: LocalBackend;
  queue: SeqQueue;
  /** Datums accumulated since the last optim_step (SkyRL's mean over sequences). */
  accumulated: number;
}

const MAX_BODY = 256 * 1024 * 1024;

export class TinkerServer {
  readonly server: Server;
  readonly flavor: Flavor;
  readonly modelName: string;
  readonly models = new Map<string, ModelState>();
  /** Training runs and their checkpoints, for the listing endpoints. */
  readonly runs = new RunRegistry();
  private readonly o: TinkerServerOptions;
  private readonly dialect: Dialect;
  private readonly dir: string;
  private readonly header: ReturnType<typeof readCheckpoint>['header'];
  private readonly baseParams: Float32Array;
  private readonly tokenizer: BpeTokenizer;
  private readonly sessions = new Map<string, { lastHeartbeat: number; models: Map<number, string> }>();
  private readonly futures: Futures;
  private readonly idempotent = new IdempotentReplies();
  private readonly samplers: Samplers;
  private readonly faults: FaultPlan;
  private readonly maxBody: number;
  private readonly log: (line: string) => void;
  private readonly sweeper: NodeJS.Timeout;

  constructor(o: TinkerServerOptions) {
    this.o = o;
    this.flavor = o.flavor ?? 'tinker';
    this.dialect = dialectOf(this.flavor);
    this.modelName = o.modelName ?? 'base';
    this.dir = resolve(o.dir);
    const { header, tensors } = readCheckpoint(o.checkpoint);
    this.header = header;
    this.baseParams = tensors.params!;
    this.tokenizer = new BpeTokenizer(header.tokenizer);
    this.log = o.log ?? (() => {});
    this.maxBody = o.maxBodyBytes ?? MAX_BODY;
    this.futures = new Futures(this.log);
    this.faults = new FaultPlan(o.faults);
    this.samplers = new Samplers({ dir: this.dir, modelName: this.modelName, header, tokenizer: this.tokenizer, baseParams: this.baseParams, ...(o.kernels ? { kernels: o.kernels } : {}) }, this.dialect);
    this.server = createServer((req, res) => void this.handle(req, res));
    // Forget futures and checkpoints past their time, so a long run does not grow the server without bound.
    this.sweeper = setInterval(() => {
      this.futures.sweep();
      this.runs.expire();
    }, 60_000);
    this.sweeper.unref();
  }

  /** Requests received per endpoint (the fault rules count with it). */
  get requestCounts(): ReadonlyMap<string, number> {
    return this.faults.counts;
  }

  listen(port: number, host = '127.0.0.1'): Promise<number> {
    return listen(this.server, port, host);
  }

  /** Stop, cutting connections: a retrieve_future may be waiting out its poll. */
  close(): Promise<void> {
    clearInterval(this.sweeper);
    return closeServer(this.server, { cut: true });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const endpoint = url.pathname.startsWith(`${API}/`) ? url.pathname.slice(API.length + 1) : url.pathname;
    const rule = this.faults.next(endpoint);
    if (rule?.fault === 'drop') {
      req.socket.destroy();
      return;
    }
    let reply: Reply;
    try {
      const injected = rule && injectedReply(rule);
      if (injected) {
        // Drain the body so the connection can be reused.
        await readBody(req, this.maxBody);
        reply = injected;
      } else {
        reply = await this.route(req, url, endpoint, rule?.fault);
      }
    } catch (err) {
      reply = errorReply(err, this.log);
    }
    if (rule?.fault === 'lose') {
      // Carried out (and remembered under its idempotency key), but the reply never arrives.
      req.socket.destroy();
      return;
    }
    const headers = { 'content-type': 'application/json', ...reply.headers };
    if (typeof reply.body === 'string' || reply.body instanceof Uint8Array) send(res, reply.status, reply.body, headers);
    else sendJson(res, reply.status, reply.body, headers);
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
      return restRoute({ flavor: this.flavor, modelName: this.modelName, contextLength: this.header.config.context, runs: this.runs, samplers: this.samplers }, method, endpoint, url, raw);
    }
    const { body, forwardOnly } = await this.readRequest(req, endpoint);
    if (endpoint === 'retrieve_future') return this.retrieve(body, fault, String(req.headers['accept'] ?? ''));
    if (endpoint === 'session_heartbeat') return this.heartbeat(body);
    const target = forwardOnly ? 'forward' : endpoint;
    const key = req.headers['x-idempotency-key'];
    if (typeof key !== 'string' || !key || !this.dialect.idempotencyKeys) return this.post(target, body);
    return this.idempotent.reply(`${target} ${key}`, () => this.post(target, body).catch((err) => errorReply(err, this.log)));
  }

  /**
   * A POST body as a JSON object: JSON (the default), or for forward_backward the SDK's protobuf
   * ForwardBackwardRequest; either may be zstd- or gzip-compressed (Content-Encoding).
   */
  private async readRequest(req: IncomingMessage, endpoint: string): Promise<{ body: Record<string, unknown>; forwardOnly?: boolean }> {
    const bytes = await readDecodedBody(req, this.maxBody);
    const type = mediaType(req);
    if (type === PROTO_CONTENT_TYPE) {
      if (endpoint !== 'forward_backward') throw new HttpError(415, `${API}/${endpoint} takes application/json; protobuf bodies are accepted by forward_backward only`);
      const decoded = decodeForwardBackwardRequest(bytes);
      return { body: decoded.body, forwardOnly: decoded.forwardOnly };
    }
    if (type !== 'application/json') throw new HttpError(415, `Content-Type '${type}' is not accepted: send application/json (or application/x-protobuf to forward_backward)`);
    return { body: bytes.length ? jsonObject(parseJson(bytes)) : {} };
  }

  private async post(endpoint: string, body: Record<string, unknown>): Promise<Reply> {
    switch (endpoint) {
      case 'client/config':
        return ok(clientConfig(this.maxBody));
      case 'client/dynamic_config':
        return ok({ refresh_interval_sec: 300 });
      case 'telemetry':
        // Accepted so the SDK does not log a failure per call; this server keeps no telemetry.
        checkBody(TelemetrySchema, body, 'telemetry');
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
        return ok({ sampling_session_id: this.samplers.createSession(body) });
      case 'asample':
        return this.future(this.samplers.sample(body), 'sample');
      case 'unload_model': {
        const m = this.model(body);
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
    const body = checkBody(CreateModelSchema, raw, 'create_model');
    const session = this.sessions.get(body.session_id);
    if (!session) throw new HttpError(404, `session '${body.session_id}' not found`);
    this.dialect.checkCreateModel(body);
    if (body.base_model !== this.modelName && resolve(body.base_model) !== resolve(this.o.checkpoint)) {
      throw new HttpError(400, `create_model: base_model '${body.base_model}' is not served here; this server serves '${this.modelName}'`);
    }
    // A repeated (session, model_seq_id) is the same model.
    let id = session.models.get(body.model_seq_id);
    if (!id) {
      id = this.dialect.modelId(body.session_id, body.model_seq_id);
      const backend = new LocalBackend(this.header.config, this.tokenizer, { dir: modelDir(this.dir, id), ...(this.o.kernels ? { kernels: this.o.kernels } : {}), baseModel: this.modelName, trainRows: 'all-rows' });
      backend.model.params.a.set(this.baseParams);
      const rank = body.lora_config?.rank ?? 32;
      this.models.set(id, { id, rank, backend, queue: new SeqQueue(this.log), accumulated: 0 });
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
    const { tinker_path: path } = checkBody(WeightsInfoSchema, raw, 'weights_info');
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
    try {
      this.dialect.refuseAtSubmission(kind, m.id, body);
    } catch (err) {
      // Refused at the HTTP level: this emulation orders by seq_id (SkyRL does not), so the
      // seq_id must not hold up later requests.
      m.queue.spend(seq, kind, asHttpError(err));
      throw err;
    }
    const { type: _type, ...rest } = body;
    const hash = createHash('sha256').update(kind + JSON.stringify(rest)).digest('hex');
    const existing = m.queue.job(seq);
    if (existing) {
      if (existing.hash !== hash) throw new HttpError(409, `${kind}: seq_id ${seq} of model ${m.id} was already used by a different request`, { 'x-should-retry': 'false' });
      if (existing.rejected) throw existing.rejected;
      // The original future, under a fresh id (the old one may have expired).
      return this.submitted(existing.record);
    }
    if (m.queue.ran(seq)) throw new HttpError(409, `${kind}: seq_id ${seq} of model ${m.id} has already run`, { 'x-should-retry': 'false' });
    const record = pendingRecord(kind === 'forward_backward' || kind === 'forward' ? 'forward_backward' : undefined);
    let work: () => Promise<unknown>;
    try {
      work = this.prepare(kind, m, body, seq);
    } catch (err) {
      const rejected = asHttpError(err);
      if (rejected.status >= 500) throw rejected;
      if (!this.dialect.checksWhenRun) {
        m.queue.add(seq, { kind, record, hash, rejected });
        throw rejected;
      }
      work = () => Promise.reject(err);
    }
    m.queue.add(seq, { kind, work, record, hash });
    return this.submitted(record);
  }

  /** Check a model request against the model (throws 4xx) and return the work that carries it out. */
  private prepare(kind: string, m: ModelState, body: Record<string, unknown>, seq: number): () => Promise<unknown> {
    const b = m.backend;
    switch (kind) {
      case 'forward':
      case 'forward_backward': {
        const r = checkBody(ForwardBackwardSchema, body, kind);
        const lossFn = r.forward_backward_input.loss_fn;
        if (!isLossFn(lossFn)) throw new InputError(`${kind}: loss_fn '${lossFn}' is not supported here (${LOSS_NAMES.join(', ')})`);
        const cfg = this.dialect.lossFnConfig(r.forward_backward_input.loss_fn_config);
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
        const a = checkBody(OptimSchema, body, 'optim_step').adam_params;
        for (const [k, v] of Object.entries(a)) {
          const [lo, hi, rule] = ADAM_RANGES[k]!;
          if (!(Number.isFinite(v) && v >= lo && v <= hi)) throw new InputError(`optim_step: adam_params.${k} = ${v} is out of range (${rule})`);
        }
        return async () => {
          if (this.dialect.meanOverSequences && m.accumulated > 1) {
            const g = b.model.grads!.a;
            for (let i = 0; i < g.length; i++) g[i] = g[i]! / m.accumulated;
          }
          m.accumulated = 0;
          const metrics = b.optimStepSync({ learningRate: a.learning_rate, beta1: a.beta1, beta2: a.beta2, eps: a.eps, weightDecay: a.weight_decay, gradClipNorm: this.dialect.gradClipNorm(a.grad_clip_norm) });
          return { metrics };
        };
      }
      case 'save_weights': {
        const r = checkBody(SaveSchema, body, 'save_weights');
        const name = checkName(r.path, 'save_weights');
        this.checkOverwrite(m, 'training', name, r.overwrite);
        return async () => {
          const file = await b.saveState(name);
          return { path: this.runs.addCheckpoint(m.id, { type: 'training', name, file, ttlSeconds: r.ttl_seconds }).tinkerPath };
        };
      }
      case 'load_weights': {
        const r = checkBody(LoadSchema, body, 'load_weights');
        if (seq !== 1) throw new InputError('load_weights must be the first request of a model (create a new model to load into)');
        const file = checkpointFile(this.dir, r.path, 'state');
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
        const r = checkBody(SaveSchema, body, 'save_weights_for_sampler');
        if (r.sampling_session_seq_id !== null && r.sampling_session_seq_id !== undefined && !r.path) {
          return async () => ({ sampling_session_id: this.samplers.openSession((id) => b.samplerInMemory(id)) });
        }
        const name = checkName(r.path, 'save_weights_for_sampler');
        return async () => {
          const sampler = b.saveWeightsForLocalSampler(name);
          const entry = this.runs.addCheckpoint(m.id, { type: 'sampler', name, file: sampler.modelPath, ttlSeconds: r.ttl_seconds });
          const path = this.dialect.samplerPath(entry.tinkerPath, m.id, name);
          this.samplers.remember(path, sampler);
          return { path };
        };
      }
      default:
        throw new Error(`unknown model request ${kind}`);
    }
  }

  /** The SDK sends overwrite: false by default; a name already saved is then refused (400). */
  private checkOverwrite(m: ModelState, type: CheckpointType, name: string, overwrite: boolean | null | undefined): void {
    const id = `${type === 'training' ? 'weights' : 'sampler_weights'}/${name}`;
    if (overwrite === false && this.runs.checkpoint(m.id, id)) throw new InputError(`save_weights: checkpoint '${name}' of model ${m.id} exists; pass overwrite=true to replace it`);
  }

  private toDatum(d: WireDatum, i: number, lossFn: LossFn, kind: string): Datum {
    const input = inputTokens(d.model_input);
    const f = d.loss_fn_inputs;
    const bad = (msg: string) => new InputError(`${kind}: datum ${i}: ${msg}`);
    if (!f['target_tokens']) throw bad('loss_fn_inputs.target_tokens is required');
    let weights = f['weights']?.data ?? new Array<number>(input.length).fill(1);
    if (this.dialect.meanOverSequences) {
      // Each token's loss is divided by the sequence's Σ weights.
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

  /** A future for work not tied to a model's order. */
  private future(work: () => Promise<unknown>, proto?: FutureRecord['proto']): Reply {
    return ok(this.dialect.submitted(this.futures.run(work, proto).id));
  }

  /** A queued request's answer: its future's (new) id. */
  private submitted(record: FutureRecord): Reply {
    return ok(this.dialect.submitted(this.futures.add(record)));
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
    if (fault !== 'try_again') await Futures.wait(record, this.o.pollTimeoutMs ?? 5_000);
    if (record.state === 'pending' || fault === 'try_again') return this.dialect.stillPending(id);
    if (record.state === 'failed') return this.dialect.failed(record.error!);
    if (record.proto && accept.includes(PROTO_CONTENT_TYPE)) {
      const bytes = record.proto === 'sample' ? encodeSampleResponse(record.result as Parameters<typeof encodeSampleResponse>[0]) : encodeForwardBackwardOutput(record.result as Parameters<typeof encodeForwardBackwardOutput>[0]);
      return { status: 200, body: Buffer.from(bytes), headers: { 'content-type': PROTO_CONTENT_TYPE } };
    }
    return ok(record.result);
  }
}
