import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import { InputError } from '../../errors.js';
import { detailOf, statusError, TinkerHttp, TinkerRequestError, TinkerServerError, TransportError, type CallOptions, type HttpOptions } from './http.js';
import { API, CreateModelResult, CreateSessionReply, FutureReply, SamplingSessionReply, type Flavor } from './wire.js';

/**
 * The Tinker REST client: one session per client with a heartbeat every 10 s (§8), requests that
 * return futures resolved by polling retrieve_future (§6), and per-model seq_id numbering so the
 * server runs a model's requests in submission order (§3).
 */

export interface ClientOptions extends HttpOptions {
  flavor: Flavor;
  /** Heartbeat period (§8: 10 s); 0 turns it off. */
  heartbeatMs?: number;
  /** Per-poll timeout: hosted long-polls up to 45 s, SkyRL up to 300 s (§6). */
  pollTimeoutMs?: number;
  /** Consecutive 5xx / bare-400 poll replies tolerated before giving up. */
  maxPollErrors?: number;
  tags?: string[];
}

/** A submitted request: enough to poll it and, on 410, to submit it again with the same seq_id. */
export interface Submitted {
  path: string;
  body: Record<string, unknown>;
  requestId: string;
}

const SDK_VERSION = 'sleuth-0.1.0';

export class TinkerClient {
  readonly http: TinkerHttp;
  readonly flavor: Flavor;
  readonly sessionId: string;
  private readonly pollTimeoutMs: number;
  private readonly maxPollErrors: number;
  private readonly log: (line: string) => void;
  private readonly seqs = new Map<string, number>();
  private modelSeq = 0;
  private samplingSeq = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private lastHeartbeatOk = Date.now();
  private warnedHeartbeat = false;

  private constructor(http: TinkerHttp, sessionId: string, o: ClientOptions) {
    this.http = http;
    this.flavor = o.flavor;
    this.sessionId = sessionId;
    this.pollTimeoutMs = o.pollTimeoutMs ?? (o.flavor === 'skyrl' ? 310_000 : 45_000);
    this.maxPollErrors = o.maxPollErrors ?? 50;
    this.log = o.log ?? (() => {});
  }

  /** Create a session and start its heartbeat. */
  static async connect(o: ClientOptions): Promise<TinkerClient> {
    const http = new TinkerHttp(o);
    const raw = await http.call('POST', `${API}/create_session`, { tags: o.tags ?? ['sleuth'], user_metadata: null, sdk_version: SDK_VERSION, type: 'create_session' });
    const reply = parseReply(CreateSessionReply, raw, 'create_session');
    const log = o.log ?? (() => {});
    if (reply.info_message) log(`tinker: ${reply.info_message}`);
    if (reply.warning_message) log(`tinker: warning: ${reply.warning_message}`);
    if (reply.error_message) log(`tinker: error: ${reply.error_message}`);
    const client = new TinkerClient(http, reply.session_id, o);
    const period = o.heartbeatMs ?? 10_000;
    if (period > 0) {
      client.heartbeat = setInterval(() => void client.beat(), period);
      // The heartbeat must not keep a finished process alive.
      client.heartbeat.unref();
    }
    return client;
  }

  /** One heartbeat (§8: 10 s timeout, no retries); warn after 120 s without success. */
  async beat(): Promise<void> {
    try {
      const r = await this.http.send('POST', `${API}/session_heartbeat`, { session_id: this.sessionId, type: 'session_heartbeat' }, { timeoutMs: 10_000 });
      if (r.status >= 200 && r.status < 300) {
        this.lastHeartbeatOk = Date.now();
        this.warnedHeartbeat = false;
        return;
      }
    } catch {
      // Counted below.
    }
    if (!this.warnedHeartbeat && Date.now() - this.lastHeartbeatOk > 120_000) {
      this.warnedHeartbeat = true;
      this.log('tinker: warning: no successful session heartbeat for 120 s; the server may end the session and unload its models');
    }
  }

  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** The next seq_id of a training model (1, 2, 3, ...). */
  nextSeq(modelId: string): number {
    const s = (this.seqs.get(modelId) ?? 0) + 1;
    this.seqs.set(modelId, s);
    return s;
  }

  /** Requests a model has been sent (its first may be load_weights only while this is 0). */
  requestsSent(modelId: string): number {
    return this.seqs.get(modelId) ?? 0;
  }

  nextSamplingSessionSeq(): number {
    return this.samplingSeq++;
  }

  /** Submit a request that answers with a future. */
  async submit(path: string, body: Record<string, unknown>, opts: CallOptions = {}): Promise<Submitted> {
    const raw = await this.http.call('POST', `${API}/${path}`, body, opts);
    const reply = parseReply(FutureReply, raw, path);
    return { path, body, requestId: reply.request_id };
  }

  /** Submit and wait for the result. */
  async request<S extends z.ZodType>(path: string, body: Record<string, unknown>, schema: S): Promise<z.infer<S>> {
    return this.result(await this.submit(path, body), schema);
  }

  /**
   * Poll a future until it resolves (§6). try_again, 408, 5xx and client-side poll timeouts poll
   * again at once; 429 and dropped connections back off min(2^k, 30) s; 402 pauses for billing;
   * 410 submits the original request again (same seq_id: the server returns the original result).
   * A failure is a 200 {error, category} (hosted) or a 400 {detail} (SkyRL): both are final.
   */
  async result<S extends z.ZodType>(sub: Submitted, schema: S): Promise<z.infer<S>> {
    let k = 0, errors = 0, bare400 = 0;
    const billingSince = Date.now();
    for (;;) {
      let reply;
      try {
        reply = await this.http.send('POST', `${API}/retrieve_future`, { request_id: sub.requestId }, { timeoutMs: this.pollTimeoutMs });
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        if (err.timeout) continue;
        if (++errors > this.maxPollErrors) throw new TinkerServerError(`${sub.path}: ${err.message} (gave up polling after ${errors} failures)`);
        await sleep(this.http.backoffScale * Math.min(1000 * 2 ** k, 30_000));
        k += 1;
        continue;
      }
      if (reply.status === 429) {
        await sleep(this.http.backoffScale * Math.min(1000 * 2 ** k, 30_000));
        k += 1;
        continue;
      }
      k = 0;
      const body = reply.body as Record<string, unknown> | null;
      if (reply.status === 200) {
        if (body && body['type'] === 'try_again') continue;
        if (body && body['status'] === 'complete_metadata') continue;
        if (body && 'error' in body && body['error'] !== null && body['error'] !== undefined) {
          const msg = `${sub.path} failed: ${detailOf(body)}`;
          if (body['category'] === 'user') throw new TinkerRequestError(msg);
          throw new TinkerServerError(`${msg} (category ${String(body['category'] ?? 'unknown')})`);
        }
        return parseReply(schema, body, sub.path);
      }
      if (reply.status === 408) continue;
      if (reply.status >= 500) {
        if (++errors > this.maxPollErrors) throw new TinkerServerError(`${sub.path}: retrieve_future kept failing (HTTP ${reply.status}: ${detailOf(body)})`);
        continue;
      }
      if (reply.status === 402) {
        await this.http.billingPause(sub.path, billingSince);
        continue;
      }
      if (reply.status === 410) {
        this.log(`tinker: the future of ${sub.path} expired (HTTP 410); submitting it again`);
        const again = await this.submit(sub.path, sub.body);
        sub = { ...sub, requestId: again.requestId };
        continue;
      }
      if (reply.status === 400 && !detailOf(body)) {
        // A bare 400 may come from a proxy (hosted): retried a few times.
        if (++bare400 <= 3) continue;
      }
      if (reply.status === 400) throw new TinkerRequestError(`${sub.path} failed: ${detailOf(body) || 'HTTP 400'}`, 400);
      throw statusError('POST', `${API}/retrieve_future (${sub.path})`, reply);
    }
  }

  /**
   * The server's feature flags for this client (POST client/config, as the official SDK reads them
   * before anything else); {} from a server without the endpoint (SkyRL).
   */
  async clientConfig(): Promise<Record<string, unknown>> {
    try {
      const r = await this.http.call('POST', `${API}/client/config`, { sdk_version: SDK_VERSION });
      return (r && typeof r === 'object' ? r : {}) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof TinkerRequestError) return {};
      throw err;
    }
  }

  /** A sampling session on saved weights or a base model (create_sampling_session, as the SDK samples). */
  async createSamplingSession(target: { model_path: string } | { base_model: string }): Promise<string> {
    const r = await this.http.call('POST', `${API}/create_sampling_session`, { session_id: this.sessionId, sampling_session_seq_id: this.nextSamplingSessionSeq(), ...target, type: 'create_sampling_session' });
    return parseReply(SamplingSessionReply, r, 'create_sampling_session').sampling_session_id;
  }

  async capabilities(): Promise<Record<string, unknown>> {
    const r = await this.http.call('GET', `${API}/get_server_capabilities`);
    return (r && typeof r === 'object' ? r : {}) as Record<string, unknown>;
  }

  /** A LoRA training model on `baseModel`; lora_config is always sent (SkyRL requires it). */
  async createModel(baseModel: string, lora: { rank: number; seed?: number }): Promise<string> {
    const body = {
      session_id: this.sessionId,
      model_seq_id: this.modelSeq++,
      base_model: baseModel,
      lora_config: { rank: lora.rank, ...(lora.seed !== undefined ? { seed: lora.seed } : {}), train_mlp: true, train_attn: true, train_unembed: true },
      type: 'create_model',
    };
    const r = await this.request('create_model', body, CreateModelResult);
    return r.model_id;
  }

  async getInfo(modelId: string): Promise<Record<string, unknown>> {
    const r = await this.http.call('POST', `${API}/get_info`, { model_id: modelId, type: 'get_info' });
    return (r && typeof r === 'object' ? r : {}) as Record<string, unknown>;
  }

  /** An idempotency key for a logical request (exposed for tests of replay). */
  static newKey(): string {
    return `sleuth-${randomUUID()}`;
  }
}

function parseReply<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new TinkerServerError(`${what}: unexpected reply from the server (${issue.path.join('.') || 'body'}: ${issue.message}): ${JSON.stringify(raw).slice(0, 300)}`);
  }
  return r.data;
}

/** Validate user-facing options early, naming the option. */
export function checkBaseUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InputError(`--base-url '${url}' is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InputError(`--base-url '${url}' must be http:// or https://`);
  return u;
}
