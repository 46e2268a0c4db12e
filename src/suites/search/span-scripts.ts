import { InputError } from '../../errors.js';
import { seededKey } from '../../tasks/split.js';
import { EpisodeReferences } from '../../protocol/compact/references.js';
import { LOCAL_SPANS } from '../../protocol/compact/local.js';
import { call, scriptedAgent, turn, type Plan } from '../../agent/plan.js';
import type { Agent } from '../../agent/types.js';
import { hitLists, keywordQuery, type ShownHit } from './script-results.js';
import { bridgePlans, inShownOrder, multiSearchAgent } from './multihop.js';
import { SEARCH_TOOL } from './tools.js';

/**
 * Span-following scripts: search the question, then follow candidate spans of its top hits (the
 * names and numbers in a hit's text, spans.ts), each with the question words that the span's hit
 * lacks (or with every question word), then curate a chosen width. They choose among exactly the
 * spans the local model is shown, numbered the same way, so every plan here is a call the model
 * can write in a few tokens ({"s":7}), and the fixed-script family a trained policy is compared
 * with can do whatever the policy can.
 */

/** Span j of hit i of the question's search, both counted from 1. */
export interface SpanPick {
  hit: number;
  span: number;
}

export interface SpanPlan {
  /** Hits of the question's search. */
  k: number;
  /** The spans followed, one search each. */
  follow: SpanPick[];
  /** What a follow-up adds to its span: the question words its hit lacks (`rest`), or all of them. */
  words: 'rest' | 'all';
  /** Hits of each follow-up search. */
  followK: number;
  /** Curated: the question search's top `first` and each follow-up's top `then` (new hits only). */
  first: number;
  then: number;
}

export function spanSpec(p: SpanPlan): string {
  return `span:${p.k},${p.follow.map((f) => `${f.hit}.${f.span}`).join('+')},${p.followK},${p.first},${p.then}${p.words === 'all' ? ',all' : ''}`;
}

/** Parse `K,H.S[+H.S...],FOLLOWK,FIRST,THEN[,all]` of a span: spec. */
export function parseSpanPlan(arg: string | undefined, spec: string): SpanPlan {
  const m = /^(\d+),(\d+\.\d+(?:\+\d+\.\d+)*),(\d+),(\d+),(\d+)(,all)?$/u.exec(arg ?? '');
  const plan: SpanPlan | undefined = m
    ? { k: Number(m[1]), follow: m[2]!.split('+').map((p) => ({ hit: Number(p.split('.')[0]), span: Number(p.split('.')[1]) })), followK: Number(m[3]), first: Number(m[4]), then: Number(m[5]), words: m[6] ? 'all' : 'rest' }
    : undefined;
  if (!plan || plan.k < 1 || plan.k > 50 || plan.followK < 1 || plan.followK > 50 || plan.first > 30 || plan.then > 30 || plan.follow.length > 9 || plan.follow.some((f) => f.hit < 1 || f.hit > plan.k || f.span < 1 || f.span > LOCAL_SPANS)) {
    throw new InputError(`agent '${spec}': span:K,HIT.SPAN[+HIT.SPAN...],FOLLOWK,FIRST,THEN[,all] needs whole numbers (K and FOLLOWK 1 to 50, HIT up to K, SPAN 1 to ${LOCAL_SPANS}, FIRST and THEN up to 30), e.g. span:10,1.1,5,10,5`);
  }
  return plan;
}

/**
 * The spans an episode shows, numbered as the local model's renderer numbers them: hits get
 * numbers in order of first sight and a new hit's candidate spans follow the ones before.
 */
export class ShownSpans {
  readonly refs = new EpisodeReferences();
  private readonly aliases = new Map<string, number>();
  /** Each hit's spans (numbers), by chunk id. */
  private readonly byHit = new Map<string, number[]>();

  constructor(question: string) {
    this.refs.setQuestion(question);
  }

  /** Note one result's hits, in order, as the renderer shows them. */
  note(hits: readonly ShownHit[]): void {
    for (const h of hits) {
      if (this.aliases.has(h.id)) continue;
      const n = this.aliases.size + 1;
      this.aliases.set(h.id, n);
      this.refs.noteTitle(n, h.title);
      this.refs.noteText(n, h.snippet);
      const before = this.refs.spans.length;
      this.refs.noteSpans(n, h.title, h.snippet, LOCAL_SPANS);
      this.byHit.set(h.id, Array.from({ length: this.refs.spans.length - before }, (_, i) => before + i + 1));
    }
  }

  /** The text of span j of a hit (from 1), if it has one. */
  span(hit: ShownHit, j: number): { n: number; text: string } | undefined {
    const n = this.byHit.get(hit.id)?.[j - 1];
    return n === undefined ? undefined : { n, text: this.refs.spans[n - 1]!.text };
  }

  /** The query a follow-up of span n searches: its text, then the question words its hit lacks (or all of them). */
  query(n: number, words: SpanPlan['words']): string {
    const span = this.refs.spans[n - 1]!;
    const numbers = words === 'all' ? this.refs.words.map((_, i) => i + 1) : this.refs.missingWords(span.hit);
    return [span.text, ...numbers.map((i) => this.refs.words[i - 1]!)].join(' ');
  }
}

export function spanAgent(plan: SpanPlan, spec = spanSpec(plan)): Agent {
  return scriptedAgent(spec, function* (ctx): Plan {
    const keywords = keywordQuery(ctx.task.query);
    const shown = new ShownSpans(ctx.task.query);
    const [first = []] = hitLists(yield turn('Search the question.', call(SEARCH_TOOL.bm25_search, { query: keywords, k: plan.k })));
    shown.note(first);
    const lists: ShownHit[][] = [first];
    const picks = plan.follow.map((f) => (first[f.hit - 1] ? shown.span(first[f.hit - 1]!, f.span) : undefined)).filter((s): s is { n: number; text: string } => s !== undefined);
    const spans = [...new Map(picks.map((p) => [p.n, p])).values()];
    if (spans.length) {
      const found = hitLists(yield turn(`Follow ${spans.map((s) => s.text).join(', ')}.`, ...spans.map((s) => call(SEARCH_TOOL.bm25_search, { query: shown.query(s.n, plan.words), k: plan.followK }))));
      for (const l of found) shown.note(l);
      lists.push(...found);
    }
    const chosen = new Set(first.slice(0, plan.first).map((h) => h.id));
    for (const l of lists.slice(1)) for (const h of l.slice(0, plan.then)) chosen.add(h.id);
    const ids = inShownOrder([...chosen], lists);
    yield turn(`Curate ${ids.length} hits and finish.`, ...(ids.length ? [call(SEARCH_TOOL.curate, { ids })] : []), call(SEARCH_TOOL.finish, {}));
  });
}

/** The span scripts a report chooses the best of on dev (beside the titles and hit-text ones). */
export function spanScripts(): SpanPlan[] {
  const plans: SpanPlan[] = [];
  const follows: SpanPick[][] = [[{ hit: 1, span: 1 }], [{ hit: 1, span: 1 }, { hit: 1, span: 2 }], [{ hit: 1, span: 1 }, { hit: 2, span: 1 }], everySpan(3)];
  for (const follow of follows) {
    for (const words of ['rest', 'all'] as const) {
      for (const [first, then] of [[10, 5], [5, 3], [3, 2]] as const) plans.push({ k: 10, follow, words, followK: 5, first, then });
    }
  }
  return plans;
}

/** Every span of the top `hits` hits. */
function everySpan(hits: number): SpanPick[] {
  return Array.from({ length: hits }, (_, h) => Array.from({ length: LOCAL_SPANS }, (_, s) => ({ hit: h + 1, span: s + 1 }))).flat();
}

/**
 * The span teacher's plans: follow span 1 or 2 of hit 1 or 2 of the question's search, with the
 * question words its hit lacks, and curate every hit shown (a model writes it "1-"). No plan reads
 * gold: which span pays is what rejection sampling (the best of several attempts by reward, on
 * train tasks) teaches. Measured on dev (bench:learn): a wider sweep (the first three spans of
 * the top three hits, both word choices, four curate widths) gave a teacher whose demonstrations
 * the 0.3M model copied badly (SFT dev reward 0.31 to 0.38, GRPO test 0.550 against 0.657).
 */
export function spanTeacherPlans(): SpanPlan[] {
  const plans: SpanPlan[] = [];
  for (const hit of [1, 2]) for (const span of [1, 2]) plans.push({ k: 10, follow: [{ hit, span }], words: 'rest', followK: 5, first: 10, then: 5 });
  return plans;
}

/** A step through the span teacher's plans that visits every plan before repeating one: prime to their number (4 + 8). */
export const SPAN_STRIDE = 7;

/**
 * The span teacher: attempt j of a task runs plan (hash(task) + SPAN_STRIDE j) mod n of
 * spanTeacherPlans() and the bridge teacher's plans (follow a whole hit's text), so that
 * rejection sampling can keep either kind of follow-up where it paid.
 */
export function spanSweepAgent(spec = 'span-sweep'): Agent {
  const agents = [...spanTeacherPlans().map((p) => spanAgent(p, spec)), ...bridgePlans().map((p) => multiSearchAgent(p, spec))];
  const hash = (id: string) => parseInt(seededKey('span-sweep', id).slice(0, 8), 16);
  return { spec, start: (ctx) => agents[(hash(ctx.task.id) + SPAN_STRIDE * ctx.sample) % agents.length]!.start(ctx) };
}
