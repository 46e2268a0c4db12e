import type { Chunk } from '../../corpus/chunk.js';
import { isInputError } from '../../errors.js';
import type { GrepOptions, GrepResult, SearchHit } from '../../search/types.js';
import type { Task } from '../../tasks/task.js';
import { parseArguments } from '../args.js';
import { EpisodeBase, errorResult, okResult } from '../episode-base.js';
import type { Budgets, EndReason, Environment, ToolCall, ToolResult, ToolSpec } from '../types.js';
import { DEFAULT_BUDGETS } from '../types.js';
import { searchSystemPrompt, searchUserPrompt } from './prompt.js';
import { ARGS, isSearchTool, searchToolSpecs } from './tools.js';

type Awaitable<T> = T | Promise<T>;

/**
 * What the environment needs of an index. A `Searcher` (src/search/types.ts) is one; a worker
 * pool may answer search and grep asynchronously. search/grep throw InputError for bad input.
 */
export interface SearchBackend {
  search(query: string, k?: number): Awaitable<SearchHit[]>;
  grep(pattern: string, options?: GrepOptions): Awaitable<GrepResult>;
  read(id: string): Chunk | undefined;
  has(id: string): boolean;
}

/** How results are rendered, so that small models fit in their context. */
export interface SearchEnvOptions {
  /** Hits per search or grep when the model does not say (default 10). */
  defaultK?: number;
  /** Longest snippet shown per hit, in characters (default 240). */
  snippetChars?: number;
  /** Longest text read_document shows, in characters (default 4000). */
  readChars?: number;
  /** Most chunks in the curated set (default 30). */
  curateCap?: number;
  /** Wall-clock cap for one grep, in ms (default 1000). */
  grepTimeLimitMs?: number;
  budgets?: Budgets;
}

const DEFAULTS = { defaultK: 10, snippetChars: 240, readChars: 4000, curateCap: 30, grepTimeLimitMs: 1000 };

function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, Math.max(0, max - 1)).trimEnd() + '…';
}

/** The search harness of the seeds: six tools over one corpus, a curated set, budgets. */
export class SearchEnvironment implements Environment {
  readonly name = 'search';
  readonly tools: ToolSpec[];
  readonly defaultBudgets: Budgets;
  readonly options: Required<Omit<SearchEnvOptions, 'budgets'>>;

  constructor(
    readonly backend: SearchBackend,
    options: SearchEnvOptions = {},
  ) {
    const { budgets, ...rest } = options;
    this.options = { ...DEFAULTS, ...rest };
    this.defaultBudgets = budgets ?? DEFAULT_BUDGETS;
    this.tools = searchToolSpecs(this.options.curateCap, this.options.defaultK);
  }

  systemPrompt(): string {
    return searchSystemPrompt(this.options.curateCap);
  }

  userPrompt(task: Task): string {
    return searchUserPrompt(task.query);
  }

  start(_task: Task): SearchEpisode {
    return new SearchEpisode(this);
  }
}

/** One episode of the search environment. */
export class SearchEpisode extends EpisodeBase {
  constructor(private readonly env: SearchEnvironment) {
    super();
  }

  finalMessage(_text: string): EndReason {
    // A final message without calls returns the curated set, as finish would.
    this.ended = 'finish';
    return 'finish';
  }

  protected async handle(call: ToolCall): Promise<ToolResult> {
    const name = call.name;
    if (!isSearchTool(name)) return errorResult('unknown_tool', `no tool named '${name}'; tools: ${this.env.tools.map((t) => t.name).join(', ')}`);
    switch (name) {
      case 'bm25_search': {
        const args = parseArguments(name, ARGS.bm25_search, call.arguments);
        return args.ok ? this.search(args.value.query, args.value.k) : errorResult('bad_arguments', args.error);
      }
      case 'grep_corpus': {
        const args = parseArguments(name, ARGS.grep_corpus, call.arguments);
        return args.ok ? this.grep(args.value.pattern, args.value.k) : errorResult('bad_arguments', args.error);
      }
      case 'read_document': {
        const args = parseArguments(name, ARGS.read_document, call.arguments);
        return args.ok ? this.readDocument(args.value.id) : errorResult('bad_arguments', args.error);
      }
      case 'curate': {
        const args = parseArguments(name, ARGS.curate, call.arguments);
        return args.ok ? this.curate(args.value.ids) : errorResult('bad_arguments', args.error);
      }
      case 'drop_curated': {
        const args = parseArguments(name, ARGS.drop_curated, call.arguments);
        return args.ok ? this.drop(args.value.ids) : errorResult('bad_arguments', args.error);
      }
      case 'finish': {
        const args = parseArguments(name, ARGS.finish, call.arguments);
        if (!args.ok) return errorResult('bad_arguments', args.error);
        this.ended = 'finish';
        return okResult({ finished: true, curated: this.curatedSet.size });
      }
    }
  }

  /** Counts shown with every result list, so the model knows where it stands. */
  private counts(newIds: string[]): { seen: number; curated: number } {
    let fresh = 0;
    for (const id of new Set(newIds)) if (!this.seen.has(id)) fresh += 1;
    return { seen: this.seen.size + fresh, curated: this.curatedSet.size };
  }

  private async search(query: string, k: number | undefined): Promise<ToolResult> {
    const { defaultK, snippetChars } = this.env.options;
    let hits: SearchHit[];
    try {
      hits = await this.env.backend.search(query, k ?? defaultK);
    } catch (err) {
      if (isInputError(err)) return errorResult('bad_query', err.message);
      throw err;
    }
    const ids = hits.map((h) => h.id);
    const shown = hits.map((h) => ({ id: h.id, title: h.title, score: Math.round(h.score * 1000) / 1000, snippet: clip(h.snippet, snippetChars) }));
    return okResult({ hits: shown, ...this.counts(ids) }, ids);
  }

  private async grep(pattern: string, k: number | undefined): Promise<ToolResult> {
    const { defaultK, snippetChars, grepTimeLimitMs } = this.env.options;
    let found: GrepResult;
    try {
      found = await this.env.backend.grep(pattern, { k: k ?? defaultK, timeLimitMs: grepTimeLimitMs });
    } catch (err) {
      if (isInputError(err)) return errorResult('bad_pattern', err.message);
      throw err;
    }
    const ids = found.hits.map((h) => h.id);
    const shown = found.hits.map((h) => ({ id: h.id, title: h.title, snippet: clip(h.snippet, snippetChars) }));
    const body: Record<string, unknown> = { hits: shown, ...this.counts(ids) };
    if (found.timedOut) body.timedOut = true;
    return okResult(body, ids);
  }

  private readDocument(id: string): ToolResult {
    if (!this.seen.has(id)) {
      return this.env.backend.has(id)
        ? errorResult('unseen_id', `'${id}' has not appeared in a result list of this episode; search for it first`)
        : errorResult('unknown_id', `no chunk with id '${id}'`);
    }
    const chunk = this.env.backend.read(id);
    if (!chunk) return errorResult('unknown_id', `no chunk with id '${id}'`);
    if (!this.read.includes(id)) this.read.push(id);
    return okResult({ id: chunk.id, title: chunk.title, text: clip(chunk.text, this.env.options.readChars) }, [id]);
  }

  /**
   * Ids that can be added are added even when others in the same call are rejected; the call's
   * outcome is an error whenever anything was rejected, so the log shows the mistake.
   */
  private curate(ids: string[]): ToolResult {
    const cap = this.env.options.curateCap;
    const added: string[] = [];
    const rejected: { id: string; reason: string }[] = [];
    for (const id of ids) {
      if (this.curatedSet.has(id)) continue;
      if (!this.seen.has(id)) rejected.push({ id, reason: this.env.backend.has(id) ? 'unseen_id' : 'unknown_id' });
      else if (this.curatedSet.size >= cap) rejected.push({ id, reason: 'curate_cap' });
      else {
        this.curatedSet.add(id);
        added.push(id);
      }
    }
    const body = { added, curated: this.curatedSet.size, cap, ...(rejected.length ? { rejected } : {}) };
    if (rejected.length === 0) return okResult(body);
    const kind = rejected[0]!.reason;
    const why: Record<string, string> = {
      unseen_id: 'only ids seen in a result list of this episode can be curated',
      unknown_id: 'no chunk has that id',
      curate_cap: `the curated set holds at most ${cap} chunks; drop some first`,
    };
    return { outcome: 'error', content: `Error (${kind}): ${why[kind]}. ${JSON.stringify(body)}`, chunkIds: [], errorKind: kind };
  }

  private drop(ids: string[]): ToolResult {
    const dropped: string[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      if (this.curatedSet.delete(id)) dropped.push(id);
      else if (!dropped.includes(id)) missing.push(id);
    }
    const body = { dropped, curated: this.curatedSet.size, ...(missing.length ? { notCurated: missing } : {}) };
    if (missing.length === 0) return okResult(body);
    return { outcome: 'error', content: `Error (not_curated): some ids are not in the curated set. ${JSON.stringify(body)}`, chunkIds: [], errorKind: 'not_curated' };
  }
}
