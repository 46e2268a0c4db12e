import type { Chunk } from '../corpus/chunk.js';
import { InputError } from '../errors.js';
import type { Task } from '../tasks/task.js';
import { Analyzer } from '../search/analyzer.js';
import type { Agent, AgentCall, AgentContext, AgentSession, AgentTurn, ToolExchange } from './types.js';

/**
 * Scripted agents bound every metric: `baseline` from below (search the query, curate the top k,
 * finish) and `oracle` from above (find and curate the gold chunks). They act only through the
 * tools, like a model, so their trajectories, call logs and budgets are real.
 */

/** A plan yields turns and receives the results of each turn's calls. */
type Plan = Generator<AgentTurn, void, ToolExchange[]>;

function call(name: string, args: Record<string, unknown>): AgentCall {
  return { name, arguments: args, status: 'ok' };
}

function turn(text: string, ...calls: AgentCall[]): AgentTurn {
  return { text, calls };
}

class PlanSession implements AgentSession {
  private started = false;
  constructor(private readonly plan: Plan) {}
  async next(results: ToolExchange[]): Promise<AgentTurn> {
    // The first next() of a generator runs it to its first yield; later ones hand in the results.
    const step = this.started ? this.plan.next(results) : this.plan.next(undefined as unknown as ToolExchange[]);
    this.started = true;
    // A plan that has nothing more to do ends with a final message and no calls.
    return step.done ? turn('Done.') : step.value;
  }
}

class ScriptedAgent implements Agent {
  constructor(
    readonly spec: string,
    private readonly plan: (ctx: AgentContext) => Plan,
  ) {}
  start(ctx: AgentContext): AgentSession {
    return new PlanSession(this.plan(ctx));
  }
}

function idsIn(results: ToolExchange[]): string[] {
  return results.flatMap((r) => (r.result.outcome === 'ok' ? r.result.chunkIds : []));
}

function titlesIn(results: ToolExchange[]): string[] {
  const titles: string[] = [];
  // QA results are lines `Doc N(Title: T) text`; the lazy match stops at the first `) ` so titles may hold parentheses.
  for (const r of results) for (const m of r.result.content.matchAll(/^Doc \d+\(Title: (.*?)\) /gmu)) titles.push(m[1]!);
  return titles;
}

const ANALYZER = new Analyzer();

/**
 * The query as BM25 reads it: the words the default analyzer keeps (no stopwords, no punctuation),
 * as written and in order. Searching it finds what searching the whole question finds, and a small
 * model imitating a teacher that writes it has about half as much to copy.
 */
export function keywordQuery(query: string): string {
  const words: string[] = [];
  ANALYZER.forEachTerm(query, (_term, start, end) => words.push(query.slice(start, end)));
  return words.length ? words.join(' ') : query;
}

/**
 * Search the query, curate the top k hits, finish. In QA: search, answer with the top hit's title.
 * With `keywords`, the search is the query's keywords (keywordQuery) rather than the whole question;
 * with `searchK`, the search asks for that many hits (default k) and the top k are curated.
 */
export function baselineAgent(k = 10, spec = 'baseline', options: { keywords?: boolean; searchK?: number } = {}): Agent {
  return new ScriptedAgent(spec, function* (ctx): Plan {
    if (ctx.env.name === 'qa') {
      const results = yield turn('Search the question.', call('search', { query: ctx.task.query }));
      yield turn('Answer with the title of the top hit.', call('answer', { answer: titlesIn(results)[0] ?? '' }));
      return;
    }
    const query = options.keywords ? keywordQuery(ctx.task.query) : ctx.task.query;
    const results = yield turn('Search the query.', call('bm25_search', { query, k: options.searchK ?? k }));
    const top = idsIn(results).slice(0, k);
    if (top.length === 0) {
      yield turn('Nothing found.', call('finish', {}));
      return;
    }
    yield turn(`Curate the top ${top.length} hits and finish.`, call('curate', { ids: top }), call('finish', {}));
  });
}

/** A Python regex matching text literally: metacharacters escaped, white space as \s+. */
export function literalPattern(text: string, words = 8): string {
  return text
    .split(/\s+/u)
    .filter(Boolean)
    .slice(0, words)
    .map((w) => w.replace(/[\\^$.|?*+()[\]{}]/gu, '\\$&'))
    .join('\\s+');
}

/** Gold chunk ids: one per fact first (so a cap keeps every fact covered), then the rest. */
export function goldIds(task: Task): string[] {
  const ordered = [...task.facts.map((f) => f.chunkIds[0]!), ...task.facts.flatMap((f) => f.chunkIds.slice(1))];
  return [...new Set(ordered)];
}

export interface CorpusReader {
  read(id: string): Chunk | undefined;
  has(id: string): boolean;
}

/**
 * Curate the gold chunks. It searches the query first (so its trajectory is realistic), then
 * searches for each gold chunk it has not seen by its title and opening words, falls back to grep
 * on a literal phrase, curates every gold chunk it found (up to the cap), and finishes.
 * In QA it searches the gold paragraphs' titles and gives the first gold answer.
 */
export function oracleAgent(corpus: CorpusReader, spec = 'oracle', curateCap = 30): Agent {
  return new ScriptedAgent(spec, function* (ctx): Plan {
    const seen = new Set<string>();
    const gold = goldIds(ctx.task).filter((id) => corpus.has(id));
    const unseen = () => gold.filter((id) => !seen.has(id));
    const note = (results: ToolExchange[]) => idsIn(results).forEach((id) => seen.add(id));
    const probe = (id: string) => {
      const chunk = corpus.read(id)!;
      return `${chunk.title} ${chunk.text.split(/\s+/u).slice(0, 30).join(' ')}`;
    };

    if (ctx.env.name === 'qa') {
      note(yield turn('Search the question.', call('search', { query: ctx.task.query })));
      for (const id of unseen().slice(0, 4)) note(yield turn('Search a gold paragraph.', call('search', { query: probe(id) })));
      yield turn('Answer.', call('answer', { answer: ctx.task.answers?.[0] ?? '' }));
      return;
    }

    note(yield turn('Search the query.', call('bm25_search', { query: ctx.task.query })));
    if (unseen().length) note(yield turn('Search for each gold chunk not found yet.', ...unseen().map((id) => call('bm25_search', { query: probe(id), k: 10 }))));
    if (unseen().length) note(yield turn('Grep for the rest.', ...unseen().map((id) => call('grep_corpus', { pattern: literalPattern(corpus.read(id)!.text), k: 10 }))));
    const found = gold.filter((id) => seen.has(id)).slice(0, curateCap);
    if (found.length) yield turn(`Curate the ${found.length} gold chunks and finish.`, call('curate', { ids: found }), call('finish', {}));
    else yield turn('No gold chunk found.', call('finish', {}));
  });
}

// ---------------------------------------------------------------------------------------------
// The agent registry: a spec is `NAME` or `NAME:ARG`. Others add `openai:`, `local:`, `tinker:`
// with registerAgent() from their own modules; the CLI imports those modules before resolving.
// ---------------------------------------------------------------------------------------------

/** What factories may need; each takes what it uses and names what is missing. */
export interface AgentFactoryContext {
  /** The corpus the tasks refer to (the oracle reads gold chunks from it). */
  corpus?: CorpusReader;
  [key: string]: unknown;
}

/** Makes an agent from the part of the spec after `NAME:` (undefined when there is none). */
export type AgentFactory = (arg: string | undefined, spec: string, ctx: AgentFactoryContext) => Agent | Promise<Agent>;

export const AGENT_FACTORIES = new Map<string, AgentFactory>([
  [
    'baseline',
    (arg, spec) => {
      const k = arg === undefined ? 10 : Number(arg);
      if (!Number.isInteger(k) || k < 1 || k > 50) throw new InputError(`agent '${spec}': baseline:K needs K from 1 to 50`);
      return baselineAgent(k, spec);
    },
  ],
  [
    'oracle',
    (arg, spec, ctx) => {
      if (arg !== undefined) throw new InputError(`agent '${spec}': oracle takes no argument`);
      if (!ctx.corpus) throw new InputError(`agent '${spec}': the oracle needs the corpus of the task set`);
      return oracleAgent(ctx.corpus, spec);
    },
  ],
]);

export function registerAgent(name: string, factory: AgentFactory): void {
  AGENT_FACTORIES.set(name, factory);
}

/** Resolve an agent spec (`baseline`, `baseline:5`, `oracle`, `openai:MODEL@URL`, ...). */
export async function resolveAgent(spec: string, ctx: AgentFactoryContext = {}): Promise<Agent> {
  const colon = spec.indexOf(':');
  const name = colon < 0 ? spec : spec.slice(0, colon);
  const arg = colon < 0 ? undefined : spec.slice(colon + 1);
  const factory = AGENT_FACTORIES.get(name);
  if (!factory) throw new InputError(`unknown agent '${spec}'; known: ${[...AGENT_FACTORIES.keys()].join(', ')}`);
  return factory(arg, spec, ctx);
}
