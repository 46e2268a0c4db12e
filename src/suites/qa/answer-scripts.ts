import { InputError } from '../../errors.js';
import { call, scriptedAgent, turn, type Plan } from '../../agent/plan.js';
import type { Agent, ToolExchange } from '../../agent/types.js';
import { LOCAL_SPANS } from '../../protocol/compact/local.js';
import { parseDocLines } from '../../protocol/tags.js';
import { Analyzer } from '../../search/analyzer.js';
import { seededKey } from '../../tasks/split.js';
import { keywordQuery, type ShownHit } from '../search/script-results.js';
import { ShownSpans } from '../search/span-scripts.js';

/**
 * Answer scripts: search the question (and perhaps follow one candidate span of its top hits, as
 * the span scripts of the search suite do), then answer with a title or a candidate span of the
 * last search's hits, or yes/no. They choose among exactly what the local model is shown, numbered
 * the same way (a hit's title, its spans; spans.ts), so every answer here is one the model can
 * write as a reference ({"s":7}, {"t":2}), and the family of fixed scripts a trained policy is
 * compared with can answer whatever the policy can.
 *
 *   answer:t1            the title of the top hit of the question's search
 *   answer:s1.2          span 2 of the top hit (spans are ranked nearest a question word first)
 *   answer:first         the top hit's shown span that comes first in its text
 *   answer:1.1>t1        follow span 1 of hit 1 (with the question words its hit lacks), then
 *                        answer the title of that search's top hit
 *   answer:s1.1,yn       ... and a yes/no question ("Were X and Y both ...?") is answered by
 *                        overlap: yes when every question keyword is in the shown hits, else no
 */

const ANALYZER = new Analyzer();

export type AnswerPick = { kind: 'title'; hit: number } | { kind: 'span'; hit: number; span: number } | { kind: 'first' };

export interface AnswerPlan {
  /** A follow-up search of span `span` of hit `hit` of the question's search, before answering. */
  follow?: { hit: number; span: number };
  /** What is answered, from the last search's hits. */
  pick: AnswerPick;
  /** Yes/no questions get yes or no by overlap. */
  yesNo: boolean;
}

/** Hits per QA search as the environment returns them (its top-k: 3 by default, more are never read). */
const MAX_HIT = 10;

export function answerSpec(p: AnswerPlan): string {
  const pick = p.pick.kind === 'title' ? `t${p.pick.hit}` : p.pick.kind === 'span' ? `s${p.pick.hit}.${p.pick.span}` : 'first';
  return `answer:${p.follow ? `${p.follow.hit}.${p.follow.span}>` : ''}${pick}${p.yesNo ? ',yn' : ''}`;
}

/** Parse `[H.S>]PICK[,yn]` of an answer: spec. */
export function parseAnswerPlan(arg: string | undefined, spec: string): AnswerPlan {
  const m = /^(?:(\d+)\.(\d+)>)?(t(\d+)|s(\d+)\.(\d+)|first)(,yn)?$/u.exec(arg ?? '');
  const bad = () => new InputError(`agent '${spec}': answer:[HIT.SPAN>]PICK[,yn] answers PICK (tN: hit N's title; sN.M: span M of hit N; first: the top hit's first span) of the last search, HIT up to ${MAX_HIT} and SPAN 1 to ${LOCAL_SPANS}, e.g. answer:t1, answer:1.1>s1.1,yn`);
  if (!m) throw bad();
  const hitOk = (h: number) => h >= 1 && h <= MAX_HIT;
  const spanOk = (s: number) => s >= 1 && s <= LOCAL_SPANS;
  const follow = m[1] !== undefined ? { hit: Number(m[1]), span: Number(m[2]) } : undefined;
  const pick: AnswerPick = m[4] !== undefined ? { kind: 'title', hit: Number(m[4]) } : m[5] !== undefined ? { kind: 'span', hit: Number(m[5]), span: Number(m[6]) } : { kind: 'first' };
  if ((follow && !(hitOk(follow.hit) && spanOk(follow.span))) || (pick.kind !== 'first' && !hitOk(pick.hit)) || (pick.kind === 'span' && !spanOk(pick.span))) throw bad();
  return { ...(follow ? { follow } : {}), pick, yesNo: m[7] !== undefined };
}

/** A question that asks for yes or no: it opens with an auxiliary verb ("Were both ...", "Is the ..."). */
export function isYesNoQuestion(question: string): boolean {
  return /^\s*(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b/iu.test(question);
}

/** The QA results' hits (Search-R1 document lines), each with its chunk id. */
export function docHits(results: ToolExchange[]): ShownHit[][] {
  return results.map((r) => (parseDocLines(r.result.content, r.result.chunkIds)?.docs ?? []).map((d) => ({ id: d.id, title: d.title, snippet: d.text })));
}

/** yes when every keyword of the question is in a shown hit's title or text, else no. */
export function yesNoByOverlap(question: string, hits: readonly ShownHit[]): 'yes' | 'no' {
  const shown = new Set(hits.flatMap((h) => ANALYZER.terms(`${h.title} ${h.snippet}`)));
  return ANALYZER.terms(question).every((t) => shown.has(t)) ? 'yes' : 'no';
}

/** What `pick` answers from the last search's hits ('' when that hit or span is not there). */
function picked(pick: AnswerPick, hits: readonly ShownHit[], shown: ShownSpans): string {
  if (pick.kind === 'title') return hits[pick.hit - 1]?.title ?? '';
  if (pick.kind === 'span') {
    const hit = hits[pick.hit - 1];
    return (hit && shown.span(hit, pick.span)?.text) ?? '';
  }
  const top = hits[0];
  if (!top) return '';
  const spans = Array.from({ length: LOCAL_SPANS }, (_, j) => shown.span(top, j + 1)?.text).filter((t): t is string => t !== undefined);
  const at = (t: string) => top.snippet.indexOf(t);
  return spans.sort((a, b) => at(a) - at(b))[0] ?? '';
}

export function answerAgent(plan: AnswerPlan, spec = answerSpec(plan)): Agent {
  return scriptedAgent(spec, function* (ctx): Plan {
    const shown = new ShownSpans(ctx.task.query);
    const [first = []] = docHits(yield turn('Search the question.', call('search', { query: keywordQuery(ctx.task.query) })));
    shown.note(first);
    let last = first;
    const bridge = plan.follow && first[plan.follow.hit - 1] ? shown.span(first[plan.follow.hit - 1]!, plan.follow.span) : undefined;
    if (bridge) {
      [last = []] = docHits(yield turn(`Follow ${bridge.text}.`, call('search', { query: shown.query(bridge.n, 'rest') })));
      shown.note(last);
    }
    const answer = plan.yesNo && isYesNoQuestion(ctx.task.query) ? yesNoByOverlap(ctx.task.query, [...first, ...(bridge ? last : [])]) : picked(plan.pick, last, shown);
    yield turn('Answer.', call('answer', { answer }));
  });
}

/** The answer scripts a report chooses the best of on dev. */
export function answerScripts(): AnswerPlan[] {
  const picks: AnswerPick[] = [{ kind: 'title', hit: 1 }, { kind: 'title', hit: 2 }, { kind: 'span', hit: 1, span: 1 }, { kind: 'span', hit: 1, span: 2 }, { kind: 'span', hit: 2, span: 1 }, { kind: 'first' }];
  const plans: AnswerPlan[] = [];
  for (const follow of [undefined, { hit: 1, span: 1 }]) for (const pick of picks) for (const yesNo of [false, true]) plans.push({ ...(follow ? { follow } : {}), pick, yesNo });
  return plans;
}

/** A step through the teacher's plans that visits every plan before repeating one (prime to their number). */
const TEACHER_STRIDE = 7;

/**
 * The answer teacher, for rejection sampling (the tutorial's STaR step, with a script proposing
 * the attempts): attempt j of a task runs plan (hash(task) + 7 j) mod n of the answer scripts that
 * answer yes/no questions by overlap. No plan reads gold: which answer pays is what keeping the
 * correct attempts (on train tasks) teaches.
 */
export function answerSweepAgent(spec = 'answer-sweep'): Agent {
  const agents = answerScripts()
    .filter((p) => p.yesNo)
    .map((p) => answerAgent(p, spec));
  const hash = (id: string) => parseInt(seededKey('answer-sweep', id).slice(0, 8), 16);
  return { spec, start: (ctx) => agents[(hash(ctx.task.id) + TEACHER_STRIDE * ctx.sample) % agents.length]!.start(ctx) };
}
