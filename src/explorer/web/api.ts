/** The explorer's JSON API (src/explorer/server.ts); a failed call throws with the server's message. */
export async function api<T = any>(name: string, params: Record<string, string | number | undefined> | URLSearchParams = {}): Promise<T> {
  const q = params instanceof URLSearchParams ? params : new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => [k, String(v)]));
  const res = await fetch(`/api/${name}?${q}`);
  const body = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `${res.status} ${res.statusText}`);
  return body;
}

// The server's own types (type-only imports: erased from the bundle, so no server code ships).
export type { RunInfo } from '../runs.js';
export type { RolloutSummary } from '../rollout-index.js';
export type { CallRecord, TurnRecord } from '../../agent/rollout.js';
export type { ChunkInfo, ShownResult } from '../tool-results.js';

export interface Interval {
  mean: number;
  lo: number;
  hi: number;
  n: number;
}
