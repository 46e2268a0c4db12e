/** The explorer's JSON API (src/explorer/server.ts); a failed call throws with the server's message. */
export async function api<T = any>(name: string, params: Record<string, string | number | undefined> | URLSearchParams = {}): Promise<T> {
  const q = params instanceof URLSearchParams ? params : new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => [k, String(v)]));
  const res = await fetch(`/api/${name}?${q}`);
  const body = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `${res.status} ${res.statusText}`);
  return body;
}

export interface RunInfo {
  id: string;
  name: string;
  kind: string;
  tasks: string | null;
  model: string | null;
  steps: number;
  rollouts: number;
  indexingBytes: number;
  headline: Record<string, number>;
  startedAt: string | null;
  state: string;
  version: string;
  warnings: { file: string; line: number; reason: string }[];
  parent: string | null;
}

export interface Interval {
  mean: number;
  lo: number;
  hi: number;
  n: number;
}
