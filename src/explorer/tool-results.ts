import type { CallRecord, Rollout } from '../agent/rollout.js';
import type { Task } from '../tasks/task.js';

/**
 * What the rollout page shows of tool results and chunks: a search or grep result as its hits, a
 * read document as its title and text, each chunk with its number in the episode (the order it was
 * first shown, as Rollout.trajectory keeps it), its title (from the results that showed it) and the
 * task's facts it supports. Tool results are data a model or a corpus wrote: anything not of the
 * expected shape is left as it is (null here), and the page shows the raw text.
 */

export interface ShownHit {
  /** The chunk's number in this episode (1 = first shown), null when no result listed it. */
  n: number | null;
  id: string;
  title: string | null;
  snippet: string | null;
  score: number | null;
}

export type ShownResult =
  | { kind: 'hits'; hits: ShownHit[]; /** The result's other fields (seen, curated, timedOut, ...). */ fields: Record<string, unknown> }
  | { kind: 'document'; n: number | null; id: string; title: string | null; text: string };

export interface ChunkInfo {
  id: string;
  n: number | null;
  title: string | null;
  /** Indexes into the task's facts of the facts this chunk supports. */
  facts: number[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const strOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function parseJson(content: string): unknown {
  try {
    return JSON.parse(content) as unknown;
  } catch {
    return undefined;
  }
}

/** The numbering of chunks in an episode: position in the trajectory, from 1. */
export function episodeNumbers(r: Pick<Rollout, 'trajectory'>): (id: string) => number | null {
  const numbers = new Map(r.trajectory.map((id, i) => [id, i + 1]));
  return (id) => numbers.get(id) ?? null;
}

/** A call's result as hits or a document, or null (an error, a curate count, anything else). */
export function shownResult(call: Pick<CallRecord, 'result'>, numberOf: (id: string) => number | null): ShownResult | null {
  if (call.result.outcome !== 'ok') return null;
  const value = parseJson(call.result.content);
  if (!isObject(value)) return null;
  if (Array.isArray(value['hits'])) {
    const list = value['hits'] as unknown[];
    if (!list.every((h) => isObject(h) && typeof h['id'] === 'string')) return null;
    const hits = (list as Record<string, unknown>[]).map((h) => {
      const id = h['id'] as string;
      return { n: numberOf(id), id, title: strOrNull(h['title']), snippet: strOrNull(h['snippet']) ?? strOrNull(h['text']), score: typeof h['score'] === 'number' ? h['score'] : null };
    });
    const fields = Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'hits'));
    return { kind: 'hits', hits, fields };
  }
  if (typeof value['id'] === 'string' && typeof value['text'] === 'string') {
    return { kind: 'document', n: numberOf(value['id']), id: value['id'], title: strOrNull(value['title']), text: value['text'] };
  }
  return null;
}

/**
 * Every chunk the episode saw or curated, in episode order (curated ids never shown last): its
 * number, a title from the results that showed it, and the facts of the task it supports.
 */
export function chunkInfo(r: Pick<Rollout, 'trajectory' | 'curated' | 'turns'>, task: Pick<Task, 'facts'> | undefined): ChunkInfo[] {
  const numberOf = episodeNumbers(r);
  const titles = new Map<string, string>();
  for (const t of r.turns) {
    for (const c of t.calls) {
      const shown = shownResult(c, numberOf);
      if (shown?.kind === 'hits') for (const h of shown.hits) if (h.title !== null && !titles.has(h.id)) titles.set(h.id, h.title);
      if (shown?.kind === 'document' && shown.title !== null && !titles.has(shown.id)) titles.set(shown.id, shown.title);
    }
  }
  const ids = [...new Set([...r.trajectory, ...r.curated])];
  return ids.map((id) => ({
    id,
    n: numberOf(id),
    title: titles.get(id) ?? null,
    facts: (task?.facts ?? []).flatMap((f, i) => (f.chunkIds.includes(id) ? [i] : [])),
  }));
}
