import { z } from 'zod';
import { isInputError } from '../../errors.js';
import { errorResult, okResult } from '../../env/episode-base.js';
import { toolSpec } from '../../env/tool-spec.js';
import type { ToolResult, ToolSpec } from '../../env/types.js';
import type { GrepResult, SearchHit } from '../../search/types.js';
import type { SearchEpisode } from './env.js';

/**
 * The search suite's tools, each declared once: its argument schema (the source of the JSON Schema
 * models are shown, of `sleuth play`'s shorthand, and of the check every call goes through), its
 * description, its line in the system prompt, and what it does. A new tool is one entry here.
 */

/** Most hits one bm25_search or grep_corpus call may ask for. */
export const MAX_K = 50;

/** The environment settings tool descriptions mention. */
export interface ToolSettings {
  curateCap: number;
  defaultK: number;
}

interface SearchTool<A> {
  /** It looks something up in the corpus (Suite.lookupTools: SFT keeps attempts that used one). */
  lookup?: true;
  args(s: ToolSettings): z.ZodObject & z.ZodType<A>;
  description(s: ToolSettings): string;
  /** Its line in the system prompt's tool list; tools that share a line leave it to the first. */
  promptLine?(s: Pick<ToolSettings, 'curateCap'>): string;
  run(episode: SearchEpisode, args: A): ToolResult | Promise<ToolResult>;
}

const k = (s: ToolSettings) => z.number().int().min(1).max(MAX_K).optional().describe(`Number of hits (default ${s.defaultK}).`);
const ids = z.array(z.string().min(1)).min(1).max(100).describe('Chunk ids.');

const bm25_search: SearchTool<{ query: string; k?: number | undefined }> = {
  lookup: true,
  args: (s) => z.object({ query: z.string().trim().min(1, 'query must not be empty').describe('Keywords to search for.'), k: k(s) }),
  description: () => 'Keyword (BM25) search over every chunk; returns id, title, score and snippet per hit, plus counts of chunks seen and curated so far.',
  promptLine: () => 'bm25_search: keyword search; grep_corpus: Python regex scan. Both list chunk ids with a title and snippet.',
  async run(ep, { query, k }) {
    const { defaultK, snippetChars } = ep.env.options;
    let hits: SearchHit[];
    try {
      hits = await ep.env.backend.search(query, k ?? defaultK);
    } catch (err) {
      if (isInputError(err)) return errorResult('bad_query', err.message);
      throw err;
    }
    const found = hits.map((h) => h.id);
    const shown = hits.map((h) => ({ id: h.id, title: h.title, score: Math.round(h.score * 1000) / 1000, snippet: clip(h.snippet, snippetChars) }));
    return okResult({ hits: shown, ...ep.counts(found) }, found);
  },
};

const grep_corpus: SearchTool<{ pattern: string; k?: number | undefined }> = {
  lookup: true,
  args: (s) => z.object({ pattern: z.string().min(1, 'pattern must not be empty').describe('Python regex, e.g. (?i)annual\\s+revenue.'), k: k(s) }),
  description: () => 'Scan the corpus with a short Python-syntax regular expression; returns id, title and a snippet around the match per hit.',
  async run(ep, { pattern, k }) {
    const { defaultK, snippetChars, grepTimeLimitMs } = ep.env.options;
    let found: GrepResult;
    try {
      found = await ep.env.backend.grep(pattern, { k: k ?? defaultK, timeLimitMs: grepTimeLimitMs });
    } catch (err) {
      if (isInputError(err)) return errorResult('bad_pattern', err.message);
      throw err;
    }
    const hitIds = found.hits.map((h) => h.id);
    const shown = found.hits.map((h) => ({ id: h.id, title: h.title, snippet: clip(h.snippet, snippetChars) }));
    const body: Record<string, unknown> = { hits: shown, ...ep.counts(hitIds) };
    if (found.timedOut) body.timedOut = true;
    return okResult(body, hitIds);
  },
};

const read_document: SearchTool<{ id: string }> = {
  args: () => z.object({ id: z.string().min(1).describe('A chunk id from a result list.') }),
  description: () => 'Title and full text of one chunk; only ids already seen in a search or grep result of this episode.',
  promptLine: () => 'read_document: the full text of a chunk you have seen in a result list.',
  run(ep, { id }) {
    const backend = ep.env.backend;
    if (!ep.seen.has(id)) {
      return backend.has(id) ? errorResult('unseen_id', `'${id}' has not appeared in a result list of this episode; search for it first`) : errorResult('unknown_id', `no chunk with id '${id}'`);
    }
    const chunk = backend.read(id);
    if (!chunk) return errorResult('unknown_id', `no chunk with id '${id}'`);
    if (!ep.read.includes(id)) ep.read.push(id);
    return okResult({ id: chunk.id, title: chunk.title, text: clip(chunk.text, ep.env.options.readChars) }, [id]);
  },
};

const curate: SearchTool<{ ids: string[] }> = {
  args: () => z.object({ ids }),
  description: (s) => `Add chunk ids (seen in results) to the curated result set (at most ${s.curateCap} in total).`,
  promptLine: (s) => `curate: add chunk ids to your result set (at most ${s.curateCap}); drop_curated: remove them.`,
  /**
   * Ids that can be added are added even when others in the same call are rejected; the call's
   * outcome is an error whenever anything was rejected, so the log shows the mistake.
   */
  run(ep, { ids }) {
    const cap = ep.env.options.curateCap;
    const set = ep.curatedIds;
    const added: string[] = [];
    const rejected: { id: string; reason: string }[] = [];
    for (const id of ids) {
      if (set.has(id)) continue;
      if (!ep.seen.has(id)) rejected.push({ id, reason: ep.env.backend.has(id) ? 'unseen_id' : 'unknown_id' });
      else if (set.size >= cap) rejected.push({ id, reason: 'curate_cap' });
      else {
        set.add(id);
        added.push(id);
      }
    }
    const body = { added, curated: set.size, cap, ...(rejected.length ? { rejected } : {}) };
    if (rejected.length === 0) return okResult(body);
    const kind = rejected[0]!.reason;
    const why: Record<string, string> = {
      unseen_id: 'only ids seen in a result list of this episode can be curated',
      unknown_id: 'no chunk has that id',
      curate_cap: `the curated set holds at most ${cap} chunks; drop some first`,
    };
    return { outcome: 'error', content: `Error (${kind}): ${why[kind]}. ${JSON.stringify(body)}`, chunkIds: [], errorKind: kind };
  },
};

const drop_curated: SearchTool<{ ids: string[] }> = {
  args: () => z.object({ ids }),
  description: () => 'Remove chunk ids from the curated result set.',
  run(ep, { ids }) {
    const set = ep.curatedIds;
    const dropped: string[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      if (set.delete(id)) dropped.push(id);
      else if (!dropped.includes(id)) missing.push(id);
    }
    const body = { dropped, curated: set.size, ...(missing.length ? { notCurated: missing } : {}) };
    if (missing.length === 0) return okResult(body);
    return { outcome: 'error', content: `Error (not_curated): some ids are not in the curated set. ${JSON.stringify(body)}`, chunkIds: [], errorKind: 'not_curated' };
  },
};

const finish: SearchTool<Record<string, never>> = {
  args: () => z.object({}),
  description: () => 'End the episode and return the curated set.',
  promptLine: () => 'finish: end and return the set.',
  run(ep) {
    ep.end('finish');
    return okResult({ finished: true, curated: ep.curatedIds.size });
  },
};

/** The tools, in the order models are shown them. */
export const SEARCH_TOOLS = { bm25_search, grep_corpus, read_document, curate, drop_curated, finish } as const;

export type SearchToolName = keyof typeof SEARCH_TOOLS;

/**
 * Each tool's name, by itself: code outside this file that must call a particular tool (a scripted
 * agent, the opening search, the tokenizer's transcripts) writes SEARCH_TOOL.curate, so a renamed
 * or removed tool fails the build there instead of sending calls no environment answers.
 */
export const SEARCH_TOOL = Object.fromEntries(Object.keys(SEARCH_TOOLS).map((name) => [name, name])) as { readonly [N in SearchToolName]: N };

/** The tools that look something up in the corpus. */
export const SEARCH_LOOKUP_TOOLS: ReadonlySet<string> = new Set(Object.entries(SEARCH_TOOLS).flatMap(([name, t]) => ((t as SearchTool<unknown>).lookup ? [name] : [])));

/** A tool with the argument schema of these settings: what an environment checks calls with. */
export interface BoundTool {
  spec: ToolSpec;
  args: z.ZodType;
  run(episode: SearchEpisode, args: unknown): ToolResult | Promise<ToolResult>;
}

export function boundTools(s: ToolSettings): Map<string, BoundTool> {
  return new Map(
    Object.entries(SEARCH_TOOLS).map(([name, t]) => {
      const args = t.args(s);
      const tool = t as SearchTool<unknown>;
      return [name, { spec: toolSpec(name, tool.description(s), args), args, run: (ep, a) => tool.run(ep, a) }];
    }),
  );
}

/** The tools as declared to models: JSON Schema parameters and a one-line description each. */
export function searchToolSpecs(curateCap: number, defaultK: number): ToolSpec[] {
  return [...boundTools({ curateCap, defaultK }).values()].map((t) => t.spec);
}

/** The system prompt's tool list, one line per tool that has one. */
export function toolPromptLines(s: Pick<ToolSettings, 'curateCap'>): string[] {
  return Object.values(SEARCH_TOOLS).flatMap((t) => ((t as SearchTool<unknown>).promptLine ? [`- ${(t as SearchTool<unknown>).promptLine!(s)}`] : []));
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, Math.max(0, max - 1)).trimEnd() + '…';
}

