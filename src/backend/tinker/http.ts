import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { InputError } from '../../errors.js';

/**
 * HTTP for the Tinker client: JSON over fetch, with the retry and back-off rules of
 * docs/reference/TINKER_API.md §7 for ordinary calls and §6 for future polls (in client.ts). The API key goes
 * only into the X-API-Key header: it is never part of a message, a log line or a file.
 */

/** Authentication failed (401/403): a missing, wrong or expired key. */
export class TinkerAuthError extends InputError {}
/** The server refused the request itself (400/404/409/422, or a failed future in the user category). */
export class TinkerRequestError extends InputError {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}
/** 409 on a call made with conflictIsFinal; afterRetry: an earlier attempt of the same call may have done it. */
export class TinkerConflictError extends TinkerRequestError {
  constructor(
    message: string,
    readonly afterRetry: boolean,
  ) {
    super(message, 409);
  }
}
/** Billing is paused (402) for longer than the client waits. */
export class TinkerBillingError extends Error {}
/** The server kept failing (5xx, timeouts, dropped connections) past the retry budget. */
export class TinkerServerError extends Error {}

export interface HttpOptions {
  baseUrl: string;
  apiKey: string;
  /** Retries of one ordinary call (Stainless default 10). */
  maxRetries?: number;
  /** Per-request timeout (§2: 60 s). */
  timeoutMs?: number;
  /** Multiplies computed back-off sleeps (not server-given retry-after); tests shrink it. */
  backoffScale?: number;
  /** How long to keep retrying while billing is paused (402), and how often (§6: 1 h, 5 s). */
  billingMaxPauseMs?: number;
  billingRetryMs?: number;
  log?: (line: string) => void;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

/** A connection-level failure (reset, refused, dropped) or a client-side timeout. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly timeout: boolean,
    /** The request may have reached the server (anything but a refused connection or an unknown host). */
    readonly maybeSent = true,
  ) {
    super(message);
  }
}

/** Connection errors that mean the request never left this machine. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export interface CallOptions {
  idempotencyKey?: string;
  /**
   * false: after a failure that may have reached the server (a dropped connection, a timeout, 500,
   * 502, 504), do not retry: the server does not honour idempotency keys (SkyRL), so a retry could
   * run the request twice. Default true.
   */
  retryMaybeRan?: boolean;
  /** 409 is an answer, not a reason to retry: thrown as TinkerConflictError. */
  conflictIsFinal?: boolean;
}

export class TinkerHttp {
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  readonly backoffScale: number;
  readonly billingMaxPauseMs: number;
  readonly billingRetryMs: number;
  private readonly apiKey: string;
  private readonly log: (line: string) => void;

  constructor(o: HttpOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    this.apiKey = o.apiKey;
    this.maxRetries = o.maxRetries ?? 10;
    this.timeoutMs = o.timeoutMs ?? 60_000;
    this.backoffScale = o.backoffScale ?? 1;
    this.billingMaxPauseMs = o.billingMaxPauseMs ?? 3_600_000;
    this.billingRetryMs = o.billingRetryMs ?? 5_000;
    this.log = o.log ?? (() => {});
  }

  /** One HTTP exchange, no retries. Throws TransportError on connection failures and timeouts. */
  async send(method: 'GET' | 'POST', path: string, body: unknown, opts: { idempotencyKey?: string; timeoutMs?: number; headers?: Record<string, string> } = {}): Promise<Reply> {
    const headers: Record<string, string> = { 'X-API-Key': this.apiKey, Accept: 'application/json', ...opts.headers };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (opts.idempotencyKey) headers['X-Idempotency-Key'] = opts.idempotencyKey;
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(opts.timeoutMs ?? this.timeoutMs),
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const timeout = e.name === 'TimeoutError' || e.name === 'AbortError';
      throw new TransportError(`${method} ${path}: ${timeout ? 'timed out' : `connection failed (${e.cause?.code ?? e.cause?.message ?? e.message})`}`, timeout, timeout || !NOT_SENT.has(e.cause?.code ?? ''));
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw new TransportError(`${method} ${path}: the connection dropped while reading the reply (${(err as Error).message})`, false);
    }
    let parsed: unknown = text;
    if (text.length) {
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON (a proxy's error page): keep the text for the error message.
      }
    } else parsed = null;
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /**
   * An ordinary (non-poll) call with §7's rules: one idempotency key for every attempt; retry on
   * 408, 409, 429, 5xx, timeouts and dropped connections, honouring x-should-retry and
   * retry-after(-ms); 402 pauses for billing; other statuses are final.
   */
  async call(method: 'GET' | 'POST', path: string, body?: unknown, opts: CallOptions = {}): Promise<unknown> {
    const key = method === 'POST' ? (opts.idempotencyKey ?? `sleuth-${randomUUID()}`) : undefined;
    let attempt = 0;
    const billingStart = Date.now();
    for (;;) {
      let reply: Reply | undefined;
      let failure: string;
      let maybeRan = false;
      try {
        reply = await this.send(method, path, body, key ? { idempotencyKey: key } : {});
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        failure = err.message;
        maybeRan = err.maybeSent;
      }
      if (reply) {
        if (reply.status >= 200 && reply.status < 300) return reply.body;
        if (reply.status === 402) {
          await this.billingPause(path, billingStart);
          continue;
        }
        if (reply.status === 409 && opts.conflictIsFinal) throw new TinkerConflictError(`${method} ${path}: HTTP 409${detailOf(reply.body) ? `: ${detailOf(reply.body)}` : ''}`, attempt > 0);
        const should = reply.headers.get('x-should-retry');
        const retryable = should === 'true' || (should !== 'false' && (reply.status === 408 || reply.status === 409 || reply.status === 429 || reply.status >= 500));
        if (!retryable) throw statusError(method, path, reply);
        failure = `${method} ${path}: HTTP ${reply.status}${detailOf(reply.body) ? `: ${detailOf(reply.body)}` : ''}`;
        maybeRan = reply.status === 500 || reply.status === 502 || reply.status === 504;
      }
      if (maybeRan && opts.retryMaybeRan === false) throw new TinkerServerError(`${failure!}; not retried: the request may have run, and this server does not honour idempotency keys, so a retry could run it twice`);
      if (attempt >= this.maxRetries) throw new TinkerServerError(`${failure!} (gave up after ${attempt + 1} attempts)`);
      const wait = retryAfterMs(reply?.headers) ?? this.backoffScale * Math.min(500 * 2 ** attempt, 10_000) * (1 - 0.25 * Math.random());
      attempt += 1;
      await sleep(wait);
    }
  }

  /** 402: billing paused. Wait and retry for up to billingMaxPauseMs, then fail. */
  async billingPause(path: string, since: number): Promise<void> {
    if (Date.now() - since >= this.billingMaxPauseMs) throw new TinkerBillingError(`${path}: billing is paused (HTTP 402) for over ${Math.round(this.billingMaxPauseMs / 1000)} s; check the account's billing and spending limit`);
    this.log(`tinker: billing paused (HTTP 402) on ${path}; retrying in ${this.billingRetryMs / 1000} s`);
    await sleep(this.billingRetryMs);
  }
}

/** retry-after-ms, else retry-after (seconds or an HTTP date), when 0 < v <= 60 s (§7). */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') !== null && Number.isFinite(ms) && ms > 0 && ms <= 60_000) return ms;
  const raw = headers.get('retry-after');
  if (raw === null) return undefined;
  let v = Number(raw) * 1000;
  if (!Number.isFinite(v)) v = Date.parse(raw) - Date.now();
  return Number.isFinite(v) && v > 0 && v <= 60_000 ? v : undefined;
}

/** The server's explanation: SkyRL/FastAPI `{detail}`, hosted `{error}`, or a short text body. */
export function detailOf(body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const d = b['detail'] ?? b['error'] ?? b['message'];
    if (typeof d === 'string') return d;
    if (d !== undefined) return JSON.stringify(d).slice(0, 500);
    return '';
  }
  return typeof body === 'string' ? body.slice(0, 300) : '';
}

export function statusError(method: string, path: string, reply: Reply): Error {
  const detail = detailOf(reply.body);
  const what = `${method} ${path}: HTTP ${reply.status}${detail ? `: ${detail}` : ''}`;
  if (reply.status === 401 || reply.status === 403) return new TinkerAuthError(`${what} (authentication failed: check the key in TINKER_API_KEY, or the variable named by --api-key-env)`);
  if (reply.status >= 400 && reply.status < 500) return new TinkerRequestError(what, reply.status);
  return new TinkerServerError(what);
}
