import { InputError } from '../../errors.js';
import { seededKey } from '../../tasks/split.js';
import type { Task } from '../../tasks/task.js';
import { call, scriptedAgent, turn, type Plan } from '../../agent/plan.js';
import type { Agent, ToolExchange } from '../../agent/types.js';
import { hitLists, keywordQuery, type ShownHit } from './script-results.js';
import { SEARCH_TOOL } from './tools.js';

export { hitLists, type ShownHit };

/**
 * Multi-hop search scripts. A multi-hop question names its first hop; the bridge entity that leads
 * to the next hop is in the first hop's paragraph, not in the question. The fixed scripts follow
 * the first search's top hits (`titles`: their titles; `hit-text`: the question's keywords with the hit's text);
 * the hop oracle searches the gold sub-questions with the gold bridge answers filled in. The oracle
 * uses privileged information: it is a ceiling, never a method.
 */


/**
 * The set a multi-search script curates: the hit lists interleaved by rank (every list's first
 * hit, then every list's second, ...), each id once, the first `n`. The first search's best hits
 * and each follow-up's best hits come before anyone's tenth.
 */
export function interleave(lists: readonly (readonly ShownHit[])[], n: number): string[] {
  const out: string[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let rank = 0; rank < longest && out.length < n; rank++) {
    for (const l of lists) {
      const id = l[rank]?.id;
      if (id !== undefined && !out.includes(id) && out.length < n) out.push(id);
    }
  }
  return out;
}

/** The first list's top `n` and every hit that a later list showed first. */
export function blocks(lists: readonly (readonly ShownHit[])[], n: number): string[] {
  const [first = [], ...later] = lists;
  const shown = new Set(first.map((h) => h.id));
  const out = first.slice(0, n).map((h) => h.id);
  for (const h of later.flat()) {
    if (!shown.has(h.id)) out.push(h.id);
    shown.add(h.id);
  }
  return out;
}

/**
 * Ids in the order the episode first showed them: the compact format numbers hits that way, so a
 * set written in that order is the shortest span string ("1-5,11-13") for a model to copy.
 */
export function inShownOrder(ids: readonly string[], lists: readonly (readonly ShownHit[])[]): string[] {
  const order = new Map<string, number>();
  for (const h of lists.flat()) if (!order.has(h.id)) order.set(h.id, order.size);
  return [...ids].sort((a, b) => (order.get(a) ?? Infinity) - (order.get(b) ?? Infinity));
}

/** A fixed multi-search script: the question's top `k`, then one search per top-`follow` hit. */
export interface MultiSearchPlan {
  /** What a follow-up searches: the hit's title, or the question's keywords with the hit's shown text. */
  mode: 'titles' | 'hit-text';
  /** Hits of the question's search. */
  k: number;
  /** How many of its top hits are followed. */
  follow: number;
  /** Hits of each follow-up search. */
  followK: number;
  /** Size of the curated set (interleaved by rank). */
  curate: number;
  /** Which hits to follow, by rank from 1 (a teacher's choice); default the top `follow`. */
  followHits?: number[];
  /**
   * How the set is chosen: `interleave` (default), the first `curate` hits of all the lists by
   * rank; `blocks`, the first search's top `curate` and every hit a follow-up showed first. A
   * model writes a block set as one short span string ("1-5,11-"): the follow-ups' new hits are
   * numbered after the first search's.
   */
  select?: 'interleave' | 'blocks';
  /**
   * Hops beyond the first follow-up (default 0): each follows the best hit of the previous
   * follow-up that no earlier search showed, the way a third or fourth hop is reached.
   */
  chain?: number;
}

/** The hits a plan follows: its `followHits` (ranks from 1), else the top `follow`. */
function followedRanks(plan: MultiSearchPlan): number[] {
  return plan.followHits ?? Array.from({ length: plan.follow }, (_, i) => i + 1);
}

export function multiSearchSpec(p: MultiSearchPlan): string {
  return `${p.mode}:${p.k},${p.follow},${p.followK},${p.curate}${p.chain ? `,${p.chain}` : ''}`;
}

/** The query a follow-up of `hit` searches. */
export function followQuery(mode: MultiSearchPlan['mode'], hit: ShownHit, keywords: string): string {
  // The text first, single-spaced: the compact format writes it as a reference to the hit (h).
  return mode === 'titles' ? hit.title : `${hit.snippet.split(/\s+/u).filter(Boolean).join(' ')} ${keywords}`;
}

export function multiSearchAgent(plan: MultiSearchPlan, spec = multiSearchSpec(plan)): Agent {
  return scriptedAgent(spec, function* (ctx): Plan {
    const keywords = keywordQuery(ctx.task.query);
    const [first = []] = hitLists(yield turn('Search the question.', call(SEARCH_TOOL.bm25_search, { query: keywords, k: plan.k })));
    const followed = followedRanks(plan).map((r) => first[r - 1]).filter((h): h is ShownHit => h !== undefined);
    const lists: ShownHit[][] = [first];
    if (followed.length) {
      const searches = followed.map((h) => call(SEARCH_TOOL.bm25_search, { query: followQuery(plan.mode, h, keywords), k: plan.followK }));
      lists.push(...hitLists(yield turn(`Follow the top ${followed.length} hits.`, ...searches)));
    }
    // Further hops: the best new hit of the latest follow-up (the first follow-up's, at first).
    let frontier: ShownHit[] | undefined = lists[1];
    for (let hop = 0; hop < (plan.chain ?? 0) && frontier; hop++) {
      const earlier = new Set(lists.filter((l) => l !== frontier).flat().map((h) => h.id));
      const next: ShownHit | undefined = frontier.find((h) => !earlier.has(h.id));
      if (!next) break;
      const [found] = hitLists(yield turn('Follow the next hop.', call(SEARCH_TOOL.bm25_search, { query: followQuery(plan.mode, next, keywords), k: plan.followK })));
      if (found) lists.push(found);
      frontier = found;
    }
    const ids = inShownOrder(plan.select === 'blocks' ? blocks(lists, plan.curate) : interleave(lists, plan.curate), lists);
    yield turn(`Curate ${ids.length} hits and finish.`, ...(ids.length ? [call(SEARCH_TOOL.curate, { ids })] : []), call(SEARCH_TOOL.finish, {}));
  });
}

/** One hop of a task's gold decomposition: its question with the earlier answers filled in. */
export interface GoldHop {
  question: string;
  answer: string;
}

/** The gold decomposition a MuSiQue task carries (meta.decomposition), or an error naming the task. */
export function goldHops(task: Task): GoldHop[] {
  const d = task.meta?.['decomposition'];
  const ok = Array.isArray(d) && d.length > 0 && d.every((h) => typeof h === 'object' && h !== null && typeof (h as GoldHop).question === 'string' && typeof (h as GoldHop).answer === 'string');
  if (!ok) throw new InputError(`task '${task.id}' has no gold decomposition (meta.decomposition): the hop oracle runs on multi-hop task sets such as 'musique'`);
  return d as GoldHop[];
}

/** MuSiQue writes a hop as `subject >> relation`: as a query, the words. */
export function hopQuery(question: string): string {
  return question.replace(/>>/gu, ' ').replace(/\s+/gu, ' ').trim();
}

/**
 * The hop oracle: search each gold sub-question (previous hops' answers filled in), top `k` each, and
 * curate `curate` hits interleaved by rank. Privileged: it reads the gold decomposition.
 */
export function hopOracleAgent(k = 10, curate = 10, spec = `hop-oracle:${k},${curate}`): Agent {
  return scriptedAgent(spec, function* (ctx): Plan {
    const hops = goldHops(ctx.task);
    const lists = hitLists(yield turn('Search each gold sub-question.', ...hops.map((h) => call(SEARCH_TOOL.bm25_search, { query: hopQuery(h.question), k }))));
    const ids = interleave(lists, curate);
    yield turn(`Curate ${ids.length} hits and finish.`, ...(ids.length ? [call(SEARCH_TOOL.curate, { ids })] : []), call(SEARCH_TOOL.finish, {}));
  });
}

/**
 * The bridge teacher: a different multi-search plan on each attempt, without privileged
 * information. It searches the question (top 10), follows one or two of those hits by their text
 * (the hit's text with the question's keywords, top 5 each), and curates every hit it was shown:
 * one call a model writes as "1-". Attempt j of a task runs plan (hash(task) + BRIDGE_STRIDE j)
 * mod n, so a few attempts per task cover every plan; rejection sampling keeps the attempts that
 * scored best, which teaches which hit to follow.
 */
export function bridgePlans(): MultiSearchPlan[] {
  const picks = [[1], [2], [3], [1, 2], [1, 3], [2, 3], [4], [5]];
  return picks.map((followHits) => ({ mode: 'hit-text', k: 10, follow: followHits.length, followHits, followK: 5, curate: 10, select: 'blocks' }));
}

export function bridgeSweepAgent(spec = 'bridge-sweep'): Agent {
  const agents = bridgePlans().map((p) => multiSearchAgent(p, spec));
  const hash = (id: string) => parseInt(seededKey('bridge-sweep', id).slice(0, 8), 16);
  return { spec, start: (ctx) => agents[(hash(ctx.task.id) + BRIDGE_STRIDE * ctx.sample) % agents.length]!.start(ctx) };
}

/** A step through bridgePlans() that visits every plan before repeating one: prime to their number (8). */
export const BRIDGE_STRIDE = 7;

/** The fixed scripts a report chooses the best of on dev: titles and text, each at a few widths. */
export function fixedScripts(): MultiSearchPlan[] {
  const plans: MultiSearchPlan[] = [];
  for (const mode of ['titles', 'hit-text'] as const) {
    for (const follow of [1, 2, 3]) {
      for (const followK of [5, 10]) plans.push({ mode, k: 10, follow, followK, curate: 10 });
    }
  }
  return plans;
}

/** Parse `K,FOLLOW,FOLLOWK,CURATE` of a titles: or text: spec. */
export function parseMultiSearch(mode: MultiSearchPlan['mode'], arg: string | undefined, spec: string): MultiSearchPlan {
  const m = /^(\d+),(\d+)(?:,(\d+))?(?:,(\d+))?(?:,(\d+))?$/u.exec(arg ?? '');
  const plan: MultiSearchPlan | undefined = m ? { mode, k: Number(m[1]), follow: Number(m[2]), followK: Number(m[3] ?? m[1]), curate: Number(m[4] ?? 10), ...(m[5] ? { chain: Number(m[5]) } : {}) } : undefined;
  if (!plan || plan.k < 1 || plan.k > 50 || plan.follow > 10 || plan.followK < 1 || plan.followK > 50 || plan.curate < 1 || plan.curate > 30 || (plan.chain ?? 0) > 3) {
    throw new InputError(`agent '${spec}': ${mode}:K,FOLLOW[,FOLLOWK[,CURATE[,CHAIN]]] needs whole numbers (K and FOLLOWK 1 to 50, FOLLOW up to 10, CURATE 1 to 30, CHAIN up to 3), e.g. ${mode}:10,3,10,10`);
  }
  return plan;
}
