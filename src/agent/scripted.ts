import type { Chunk } from '../corpus/chunk.js';
import { InputError } from '../errors.js';
import type { Task } from '../tasks/task.js';
import { seededKey } from '../tasks/split.js';
import { Analyzer } from '../search/analyzer.js';
import { literalPattern } from '../protocol/compact/references.js';
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
  // Each term once, as the local model's references number them, so a teacher's query is "1-".
  const words: string[] = [];
  const terms = new Set<string>();
  ANALYZER.forEachTerm(query, (term, start, end) => {
    if (!terms.has(term)) words.push(query.slice(start, end));
    terms.add(term);
  });
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

export { literalPattern };

/**
 * A search plan of the `follow` teacher: search the question's keywords, curate the top `k1`, then
 * search the titles of the top `follow` hits whose titles bring a word the question lacks (with the
 * question's keywords when `withQuestion`: a bridge entity plus what is asked of it), and curate
 * the first `k2` new hits of each, up to the curate cap. `follow` 0 is the baseline with k1 hits.
 */
export interface FollowPlan {
  k1: number;
  follow: number;
  withQuestion: boolean;
  k2: number;
  /**
   * Which hits of the first search to curate: `top`, the first k1; `titles`, the first k1 and any
   * other whose title is at least half made of the question's words (the entities it names).
   */
  select?: 'top' | 'titles';
  /** Hits of the question's search (default 10). */
  searchK?: number;
  /** Hits of each title search (default 5: a follow-up looks for the bridge entity's own page). */
  followK?: number;
}

export function followSpec(p: FollowPlan): string {
  return `follow:${p.k1},${p.follow},${p.k2}${p.withQuestion ? ',q' : ''}${p.select === 'titles' ? ',titles' : ''}`;
}

/** Hits of search and grep results: id and title, in order. */
function hitsIn(results: ToolExchange[]): { id: string; title: string }[] {
  const hits: { id: string; title: string }[] = [];
  for (const r of results) {
    if (r.result.outcome !== 'ok') continue;
    const value = JSON.parse(r.result.content) as { hits?: { id: string; title: string }[] };
    for (const h of value.hits ?? []) hits.push({ id: h.id, title: h.title });
  }
  return hits;
}

export function followAgent(plan: FollowPlan, spec = followSpec(plan), curateCap = 30): Agent {
  const searchK = plan.searchK ?? 10;
  return new ScriptedAgent(spec, function* (ctx): Plan {
    const keywords = keywordQuery(ctx.task.query);
    const first = hitsIn(yield turn('Search the question.', call('bm25_search', { query: keywords, k: searchK })));
    if (first.length === 0) {
      yield turn('Nothing found.', call('finish', {}));
      return;
    }
    const asked = new Set(ANALYZER.terms(ctx.task.query));
    const named = (title: string) => {
      const terms = ANALYZER.terms(title);
      return terms.length > 0 && 2 * terms.filter((t) => asked.has(t)).length >= terms.length;
    };
    const curated = first.filter((h, i) => i < plan.k1 || (plan.select === 'titles' && named(h.title))).map((h) => h.id);
    // Follow titles that bring a word the question lacks (a bridge entity), best-ranked first.
    const bridges = first.filter((h) => ANALYZER.terms(h.title).some((t) => !asked.has(t)));
    const titles = [...new Set(bridges.map((h) => h.title))].slice(0, plan.follow);
    const curate = curated.length ? [call('curate', { ids: curated })] : [];
    if (titles.length === 0) {
      yield turn(`Curate the top ${curated.length} hits and finish.`, ...curate, call('finish', {}));
      return;
    }
    const searches = titles.map((t) => call('bm25_search', { query: plan.withQuestion ? `${t} ${keywords}` : t, k: plan.followK ?? 5 }));
    const results = yield turn('Curate, and follow the top titles.', ...curate, ...searches);
    const more: string[] = [];
    for (const r of results.filter((x) => x.call.name === 'bm25_search')) {
      more.push(...hitsIn([r]).map((h) => h.id).filter((id) => !curated.includes(id) && !more.includes(id)).slice(0, plan.k2));
    }
    const add = more.slice(0, Math.max(0, curateCap - curated.length));
    yield turn(`Curate ${add.length} more and finish.`, ...(add.length ? [call('curate', { ids: add })] : []), call('finish', {}));
  });
}

/** A step through followPlans() that visits every plan before repeating one: prime to their number. */
export const PLAN_STRIDE = 17;

/**
 * A teacher that tries a different follow plan on each attempt: attempt j of a query runs plan
 * (h + PLAN_STRIDE j) mod n of followPlans(), where h is a hash of the task id, so that a few
 * attempts per query still cover every plan across the training set.
 */
export function followSweepAgent(spec = 'follow-sweep'): Agent {
  const agents = followPlans().map((p) => followAgent(p, spec));
  const hash = (id: string) => parseInt(seededKey('follow-sweep', id).slice(0, 8), 16);
  return { spec, start: (ctx) => agents[(hash(ctx.task.id) + PLAN_STRIDE * ctx.sample) % agents.length]!.start(ctx) };
}

/**
 * The follow plans a teacher sweeps: the whole range the environment allows a three-turn searcher
 * (curating 1 to 10 of the first search, following 0 to 3 titles, with or without the question's
 * words, and 0 to 10 more from each), in a fixed order so that attempt j of a query is plan j.
 */
export function followPlans(): FollowPlan[] {
  const plans: FollowPlan[] = [];
  for (const follow of [0, 1, 2, 3]) {
    for (const k1 of follow === 0 ? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] : [2, 5, 10]) {
      if (follow === 0) plans.push({ k1, follow, withQuestion: false, k2: 0 });
      else for (const withQuestion of [true, false]) for (const k2 of [2, 5, 10]) plans.push({ k1, follow, withQuestion, k2 });
    }
  }
  // Selective curation: a few top hits and the hits the question names, with or without follow-ups.
  for (const k1 of [1, 2, 3]) {
    plans.push({ k1, follow: 0, withQuestion: false, k2: 0, select: 'titles' });
    plans.push({ k1, follow: 1, withQuestion: true, k2: 5, select: 'titles' });
    plans.push({ k1, follow: 1, withQuestion: false, k2: 2, select: 'titles' });
    plans.push({ k1, follow: 2, withQuestion: true, k2: 2, select: 'titles' });
    plans.push({ k1: k1 + 3, follow: 0, withQuestion: false, k2: 0, select: 'titles' });
  }
  return plans;
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
  [
    'follow',
    (arg, spec) => {
      const m = /^(\d+),(\d+),(\d+)(,q)?(,titles)?$/u.exec(arg ?? '');
      const plan: FollowPlan | undefined = m ? { k1: Number(m[1]), follow: Number(m[2]), k2: Number(m[3]), withQuestion: m[4] !== undefined, select: m[5] ? 'titles' : 'top' } : undefined;
      if (!plan || plan.k1 > 50 || plan.follow > 10 || plan.k2 > 50) throw new InputError(`agent '${spec}': follow:K1,TITLES,K2[,q][,titles] needs whole numbers (K1, K2 up to 50, TITLES up to 10), e.g. follow:10,2,5,q`);
      return followAgent(plan, spec);
    },
  ],
  [
    'follow-sweep',
    (arg, spec) => {
      if (arg !== undefined) throw new InputError(`agent '${spec}': follow-sweep takes no argument`);
      return followSweepAgent(spec);
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
