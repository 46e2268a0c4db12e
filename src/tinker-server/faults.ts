import { InputError } from '../errors.js';
import type { Reply } from './futures.js';

/**
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

/** The rules, and the requests counted per endpoint that they are matched against. */
export class FaultPlan {
  /** Requests received per endpoint. */
  readonly counts = new Map<string, number>();

  constructor(private readonly rules: FaultRule[] = []) {}

  /** Count a request to `endpoint`; the rule for it, if one names this request. */
  next(endpoint: string): FaultRule | undefined {
    const n = (this.counts.get(endpoint) ?? 0) + 1;
    this.counts.set(endpoint, n);
    return this.rules.find((f) => f.endpoint === endpoint && f.nth === n);
  }
}

/**
 * A rule answered in place of the request: an HTTP status (with its retry-after), or undefined for
 * the faults that act elsewhere (drop and lose on the connection, try_again and 410 on the poll).
 */
export function injectedReply(rule: FaultRule): Reply | undefined {
  const { fault, retryAfter } = rule;
  if (fault === 'drop' || fault === 'lose' || fault === 'try_again' || fault === '410') return undefined;
  const headers: Record<string, string> = {};
  if (retryAfter) {
    if ('ms' in retryAfter) headers['retry-after-ms'] = String(retryAfter.ms);
    else headers['retry-after'] = String(retryAfter.seconds);
  }
  return { status: Number(fault), body: fault === '400' ? '' : { detail: `injected fault ${fault}` }, headers };
}
