import type { CorpusReader } from '../../corpus/chunk.js';
import { InputError } from '../../errors.js';
import type { Task } from '../../tasks/task.js';
import { seededKey } from '../../tasks/split.js';
import { Analyzer } from '../../search/analyzer.js';
import { literalPattern } from '../../protocol/compact/references.js';
import { call, idsIn, scriptedAgent, turn, type Plan } from '../../agent/plan.js';
import type { Agent, ToolExchange } from '../../agent/types.js';
import type { SuiteAgentFactory } from '../types.js';
import { bridgeSweepAgent, hopOracleAgent, multiSearchAgent, parseMultiSearch } from './multihop.js';
import { hitLists, keywordQuery } from './script-results.js';
import { parseSpanPlan, spanAgent, spanSweepAgent } from './span-scripts.js';
import { SEARCH_TOOL } from './tools.js';

export { keywordQuery };

/**
 * The search suite's scripted agents, which bound every metric: `baseline` from below (search the
 * query, curate the top k, finish), `follow` (follow the titles of the first hits), and `oracle`
 * from above (find and curate the gold chunks). SEARCH_AGENTS is the suite's table of them (Suite.agents).
 */

const ANALYZER = new Analyzer();


/**
 * Search the query, curate the top k hits, finish.
 * With `keywords`, the search is the query's keywords (keywordQuery) rather than the whole question;
 * with `searchK`, the search asks for that many hits (default k) and the top k are curated.
 */
export function baselineAgent(k = 10, spec = 'baseline', options: { keywords?: boolean; searchK?: number } = {}): Agent {
  return scriptedAgent(spec, function* (ctx): Plan {
    const query = options.keywords ? keywordQuery(ctx.task.query) : ctx.task.query;
    const results = yield turn('Search the query.', call(SEARCH_TOOL.bm25_search, { query, k: options.searchK ?? k }));
    const top = idsIn(results).slice(0, k);
    if (top.length === 0) {
      yield turn('Nothing found.', call(SEARCH_TOOL.finish, {}));
      return;
    }
    yield turn(`Curate the top ${top.length} hits and finish.`, call(SEARCH_TOOL.curate, { ids: top }), call(SEARCH_TOOL.finish, {}));
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


export function followAgent(plan: FollowPlan, spec = followSpec(plan), curateCap = 30): Agent {
  const searchK = plan.searchK ?? 10;
  return scriptedAgent(spec, function* (ctx): Plan {
    const keywords = keywordQuery(ctx.task.query);
    const [first = []] = hitLists(yield turn('Search the question.', call(SEARCH_TOOL.bm25_search, { query: keywords, k: searchK })));
    if (first.length === 0) {
      yield turn('Nothing found.', call(SEARCH_TOOL.finish, {}));
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
    const curate = curated.length ? [call(SEARCH_TOOL.curate, { ids: curated })] : [];
    if (titles.length === 0) {
      yield turn(`Curate the top ${curated.length} hits and finish.`, ...curate, call(SEARCH_TOOL.finish, {}));
      return;
    }
    const searches = titles.map((t) => call(SEARCH_TOOL.bm25_search, { query: plan.withQuestion ? `${t} ${keywords}` : t, k: plan.followK ?? 5 }));
    const results = yield turn('Curate, and follow the top titles.', ...curate, ...searches);
    const more: string[] = [];
    for (const r of results.filter((x) => x.call.name === SEARCH_TOOL.bm25_search)) {
      more.push(...hitLists([r]).flat().map((h) => h.id).filter((id) => !curated.includes(id) && !more.includes(id)).slice(0, plan.k2));
    }
    const add = more.slice(0, Math.max(0, curateCap - curated.length));
    yield turn(`Curate ${add.length} more and finish.`, ...(add.length ? [call(SEARCH_TOOL.curate, { ids: add })] : []), call(SEARCH_TOOL.finish, {}));
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


/**
 * What an oracle tracks while it looks for a task's gold chunks: those in the corpus, those its
 * results have shown (`note` them), those still unseen, and a query that finds one (its title and
 * opening words).
 */
export function goldSearch(corpus: CorpusReader, task: Task) {
  const seen = new Set<string>();
  const gold = goldIds(task).filter((id) => corpus.has(id));
  return {
    seen,
    gold,
    unseen: () => gold.filter((id) => !seen.has(id)),
    note: (results: ToolExchange[]) => idsIn(results).forEach((id) => seen.add(id)),
    probe: (id: string) => {
      const chunk = corpus.read(id)!;
      return `${chunk.title} ${chunk.text.split(/\s+/u).slice(0, 30).join(' ')}`;
    },
  };
}

/**
 * Curate the gold chunks. It searches the query first (so its trajectory is realistic), then
 * searches for each gold chunk it has not seen by its title and opening words, falls back to grep
 * on a literal phrase, curates every gold chunk it found (up to the cap), and finishes.
 */
export function oracleAgent(corpus: CorpusReader, spec = 'oracle', curateCap = 30): Agent {
  return scriptedAgent(spec, function* (ctx): Plan {
    const { seen, gold, unseen, note, probe } = goldSearch(corpus, ctx.task);
    note(yield turn('Search the query.', call(SEARCH_TOOL.bm25_search, { query: ctx.task.query })));
    if (unseen().length) note(yield turn('Search for each gold chunk not found yet.', ...unseen().map((id) => call(SEARCH_TOOL.bm25_search, { query: probe(id), k: 10 }))));
    if (unseen().length) note(yield turn('Grep for the rest.', ...unseen().map((id) => call(SEARCH_TOOL.grep_corpus, { pattern: literalPattern(corpus.read(id)!.text), k: 10 }))));
    const found = gold.filter((id) => seen.has(id)).slice(0, curateCap);
    if (found.length) yield turn(`Curate the ${found.length} gold chunks and finish.`, call(SEARCH_TOOL.curate, { ids: found }), call(SEARCH_TOOL.finish, {}));
    else yield turn('No gold chunk found.', call(SEARCH_TOOL.finish, {}));
  });
}

/** The search suite's scripted agents by spec name. */
export const SEARCH_AGENTS: ReadonlyMap<string, SuiteAgentFactory> = new Map<string, SuiteAgentFactory>([
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
    'baseline-sweep',
    (arg, spec, ctx) => {
      const ks = (arg ?? '1,2,3,5,8').split(',').map(Number);
      if (!ks.length || ks.some((k) => !Number.isInteger(k) || k < 1 || k > 50)) throw new InputError(`agent '${spec}': baseline-sweep:K1,K2,... needs whole numbers from 1 to 50`);
      return baselineSweepAgent(ks, spec, ctx.openingSearch ?? 0);
    },
  ],
  ['titles', (arg, spec) => multiSearchAgent(parseMultiSearch('titles', arg, spec), spec)],
  ['hit-text', (arg, spec) => multiSearchAgent(parseMultiSearch('hit-text', arg, spec), spec)],
  [
    'bridge-sweep',
    (arg, spec) => {
      if (arg !== undefined) throw new InputError(`agent '${spec}': bridge-sweep takes no argument`);
      return bridgeSweepAgent(spec);
    },
  ],
  ['span', (arg, spec) => spanAgent(parseSpanPlan(arg, spec), spec)],
  [
    'span-sweep',
    (arg, spec) => {
      if (arg !== undefined) throw new InputError(`agent '${spec}': span-sweep takes no argument`);
      return spanSweepAgent(spec);
    },
  ],
  [
    'hop-oracle',
    (arg, spec) => {
      const m = /^(\d+)(?:,(\d+))?$/u.exec(arg ?? '10');
      const k = Number(m?.[1]), curate = Number(m?.[2] ?? 10);
      if (!m || k < 1 || k > 50 || curate < 1 || curate > 30) throw new InputError(`agent '${spec}': hop-oracle[:K[,CURATE]] needs K from 1 to 50 and CURATE from 1 to 30`);
      return hopOracleAgent(k, curate, spec);
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

/**
 * A teacher that varies its search width: attempt j of a query is the baseline (search the query's
 * keywords, curate the top k, finish) with k = ks[j mod len]. Rejection sampling then keeps the shortest
 * attempt that was good enough, i.e. the narrowest search that found the evidence.
 */
export function baselineSweepAgent(ks: readonly number[], spec = `baseline-sweep:${ks.join(',')}`, openingK = 0): Agent {
  // With an opening search, the teacher's first turn is exactly that search (the student's is inserted).
  const agents = ks.map((k) => baselineAgent(k, spec, openingK ? { searchK: openingK } : { keywords: true }));
  return { spec, start: (ctx) => agents[ctx.sample % agents.length]!.start(ctx) };
}
