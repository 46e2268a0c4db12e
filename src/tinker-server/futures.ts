import { randomUUID } from 'node:crypto';
import { isInputError } from '../errors.js';
import { asHttpError, HttpError } from '../http/request.js';

/**
 * Futures are real: a request is checked when it arrives (a bad one is answered 4xx at once), then
 * queued, and runs after its reply is sent; a model's requests run in seq_id order (a later seq_id
 * waits for the earlier ones); a repeated (model_id, seq_id) returns the original future (409 if
 * its body differs); a repeated X-Idempotency-Key returns the first reply. A seq_id whose request
 * was rejected at the HTTP level counts as spent: the official SDK numbers its requests before
 * sending them and never reuses a number, so waiting for it would stall the model for ever.
 */

/** An answer: a JSON body, or bytes ready to send ('' for none). */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function ok(body: unknown): Reply {
  return { status: 200, body };
}

/** A request's failure as its answer, {detail}; an error that is neither an HttpError nor bad input is logged. */
export function errorReply(err: unknown, log: (line: string) => void): Reply {
  if (!(err instanceof HttpError) && !isInputError(err)) log(`serve-tinker: internal error: ${(err as Error).stack ?? String(err)}`);
  const e = asHttpError(err);
  return { status: e.status, body: { detail: e.message }, headers: e.headers };
}

export interface FutureRecord {
  state: 'pending' | 'done' | 'failed';
  /** When it settled (futures are forgotten FUTURE_TTL_MS later). */
  settledAt?: number;
  result?: unknown;
  error?: { message: string; category: 'user' | 'server' };
  waiters: (() => void)[];
  /** The result's protobuf message, where the SDK may ask for one. */
  proto?: 'forward_backward' | 'sample';
}

export function pendingRecord(proto?: FutureRecord['proto']): FutureRecord {
  return { state: 'pending', waiters: [], ...(proto ? { proto } : {}) };
}

function settle(record: FutureRecord, state: 'done' | 'failed', result?: unknown, error?: FutureRecord['error']): void {
  record.state = state;
  record.settledAt = Date.now();
  if (state === 'done') record.result = result;
  else record.error = error!;
  for (const w of record.waiters.splice(0)) w();
}

/** Run `work` and settle the record with its result, or with its error (bad input is the user's; anything else is logged). */
async function runInto(record: FutureRecord, work: () => Promise<unknown>, log: (line: string) => void): Promise<void> {
  try {
    settle(record, 'done', await work());
  } catch (err) {
    if (isInputError(err)) return settle(record, 'failed', undefined, { message: err.message, category: 'user' });
    log(`serve-tinker: internal error: ${(err as Error).stack ?? String(err)}`);
    settle(record, 'failed', undefined, { message: (err as Error).message, category: 'server' });
  }
}

/** How long a settled future can still be retrieved (hosted promises expire too: 410). */
const FUTURE_TTL_MS = 30 * 60_000;

/** The futures by id, forgotten FUTURE_TTL_MS after they settle. */
export class Futures {
  private readonly byId = new Map<string, FutureRecord>();

  constructor(private readonly log: (line: string) => void) {}

  /** A future for work not tied to a model's order: it runs once this turn's reply is sent. */
  run(work: () => Promise<unknown>, proto?: FutureRecord['proto']): { id: string; record: FutureRecord } {
    const record = pendingRecord(proto);
    setImmediate(() => void runInto(record, work, this.log));
    return { id: this.add(record), record };
  }

  /** A new id for a record (a resubmitted request gets the original record under a fresh id: the old one may have expired). */
  add(record: FutureRecord): string {
    const id = `req_${randomUUID()}`;
    this.byId.set(id, record);
    return id;
  }

  get(id: string): FutureRecord | undefined {
    return this.byId.get(id);
  }

  delete(id: string): void {
    this.byId.delete(id);
  }

  /** Wait until the record settles, or `ms` pass. */
  static wait(record: FutureRecord, ms: number): Promise<void> {
    if (record.state !== 'pending') return Promise.resolve();
    return new Promise<void>((wake) => {
      const t = setTimeout(wake, ms);
      record.waiters.push(() => {
        clearTimeout(t);
        wake();
      });
    });
  }

  /** Forget futures settled long ago, so a long run does not grow the server without bound. */
  sweep(now = Date.now()): void {
    for (const [id, r] of this.byId) if (r.settledAt !== undefined && now - r.settledAt > FUTURE_TTL_MS) this.byId.delete(id);
  }
}

const IDEMPOTENCY_LIMIT = 20_000;

/** The first reply to each X-Idempotency-Key (the most recent IDEMPOTENCY_LIMIT keys). */
export class IdempotentReplies {
  private readonly replies = new Map<string, Promise<Reply>>();

  /** The reply remembered under `key`, else `answer()`'s, remembered unless it is a server error (a retry may then run it again). */
  reply(key: string, answer: () => Promise<Reply>): Promise<Reply> {
    const seen = this.replies.get(key);
    if (seen) return seen;
    const p = answer();
    this.replies.set(key, p);
    if (this.replies.size > IDEMPOTENCY_LIMIT) this.replies.delete(this.replies.keys().next().value!);
    void p.then((r) => {
      if (r.status >= 500) this.replies.delete(key);
    });
    return p;
  }
}

/** A model request by its seq_id. */
export interface Job {
  kind: string;
  /** The checked request, ready to run (absent once run, or when it was rejected). */
  work?: () => Promise<unknown>;
  record: FutureRecord;
  /** The request's hash, to recognise a resubmission. */
  hash: string;
  /** The HTTP-level rejection of this seq_id (re-sent for a repeat of the same request). */
  rejected?: HttpError;
}

/** One model's requests, run one at a time in seq_id order. */
export class SeqQueue {
  /** The next seq_id to run. */
  private nextSeq = 1;
  /** Requests by seq_id: queued, running or done (for dedup and ordering). */
  private readonly bySeq = new Map<number, Job>();
  private running = false;

  constructor(private readonly log: (line: string) => void) {}

  job(seq: number): Job | undefined {
    return this.bySeq.get(seq);
  }

  /** Whether the requests up to `seq` have run. */
  ran(seq: number): boolean {
    return seq < this.nextSeq;
  }

  /** Queue a job; it runs when the seq_ids before it have. */
  add(seq: number, job: Job): void {
    this.bySeq.set(seq, job);
    void this.pump();
  }

  /** Spend `seq` on a request refused at the HTTP level, unless it is taken (a retry of a queued request keeps its job). */
  spend(seq: number, kind: string, rejected: HttpError): void {
    if (this.bySeq.has(seq) || this.ran(seq)) return;
    this.add(seq, { kind, record: { state: 'failed', waiters: [] }, hash: '', rejected });
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        const job = this.bySeq.get(this.nextSeq);
        if (!job) break;
        if (job.rejected) {
          this.nextSeq += 1;
          continue;
        }
        if (job.record.state !== 'pending' || !job.work) break;
        // Reply first, work later: the request's future is pending when its submission returns.
        await new Promise((r) => setImmediate(r));
        await runInto(job.record, job.work, this.log);
        // Only the hash is needed from now on (to recognise a resubmission).
        delete job.work;
        this.nextSeq += 1;
      }
    } finally {
      this.running = false;
    }
  }
}
