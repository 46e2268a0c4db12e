import type { Chunk } from '../../corpus/chunk.js';
import type { GrepOptions, GrepResult, SearchHit } from '../../search/types.js';
import type { Task } from '../../tasks/task.js';
import { parseArguments } from '../../env/args.js';
import { EpisodeBase, errorResult } from '../../env/episode-base.js';
import type { Budgets, EndReason, Environment, ToolCall, ToolResult, ToolSpec } from '../../env/types.js';
import { DEFAULT_BUDGETS, environmentSettings } from '../../env/types.js';
import { searchSystemPrompt, searchUserPrompt } from './prompt.js';
import { boundTools, type BoundTool } from './tools.js';

type Awaitable<T> = T | Promise<T>;

/**
 * What the environment needs of an index. A `Searcher` (src/search/types.ts) is one; search
 * workers (search-workers.ts) may answer search and grep asynchronously. search/grep throw InputError for bad input.
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

export const SEARCH_DEFAULTS = { defaultK: 10, snippetChars: 240, readChars: 4000, curateCap: 30, grepTimeLimitMs: 1000 };

/** The search harness: six tools over one corpus (tools.ts), a curated set, budgets. */
export class SearchEnvironment implements Environment {
  readonly name = 'search';
  readonly tools: ToolSpec[];
  /** The tools with their argument schemas for these options. */
  readonly boundTools: ReadonlyMap<string, BoundTool>;
  readonly defaultBudgets: Budgets;
  readonly options: Required<Omit<SearchEnvOptions, 'budgets'>>;

  constructor(readonly backend: SearchBackend, options: SearchEnvOptions = {}) {
    ({ settings: this.options, budgets: this.defaultBudgets } = environmentSettings(options, SEARCH_DEFAULTS, () => DEFAULT_BUDGETS));
    this.boundTools = boundTools(this.options);
    this.tools = [...this.boundTools.values()].map((t) => t.spec);
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
  constructor(readonly env: SearchEnvironment) {
    super();
  }

  finalMessage(_text: string): EndReason {
    // A final message without calls returns the curated set, as finish would.
    this.ended = 'finish';
    return 'finish';
  }

  protected async handle(call: ToolCall): Promise<ToolResult> {
    const tool = this.env.boundTools.get(call.name);
    if (!tool) return errorResult('unknown_tool', `no tool named '${call.name}'; tools: ${this.env.tools.map((t) => t.name).join(', ')}`);
    const args = parseArguments(call.name, tool.args, call.arguments);
    return args.ok ? tool.run(this, args.value) : errorResult('bad_arguments', args.error);
  }

  /** The curated set, for the tools to change. */
  get curatedIds(): Set<string> {
    return this.curatedSet;
  }

  /** The model ended the episode (finish). */
  end(reason: EndReason): void {
    this.ended = reason;
  }

  /** Counts shown with every result list, so the model knows where it stands. */
  counts(newIds: string[]): { seen: number; curated: number } {
    let fresh = 0;
    for (const id of new Set(newIds)) if (!this.seen.has(id)) fresh += 1;
    return { seen: this.seen.size + fresh, curated: this.curatedSet.size };
  }
}
