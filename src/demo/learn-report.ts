import type { Rollout } from '../agent/rollout.js';
import type { Rubric } from '../reward/rubric.js';
import type { BpeTokenizer } from '../protocol/compact/bpe.js';
import { localRenderer } from '../protocol/compact/local.js';
import { MAX_QUESTION_WORDS, REFERENCE_TOOLS } from '../protocol/compact/references.js';
import { latestRollouts, readRollouts } from '../runs/store.js';
import { scoreRollout } from '../suites/registry.js';
import { keywordQuery } from '../suites/search/script-results.js';
import type { Task } from '../tasks/task.js';

/**
 * What bench:learn reports of how an agent searched, beyond its reward: the moves it wrote (as the
 * local model writes them: references to question words, titles, hit texts and spans), how it
 * curated, what perfect curation of the hits it was shown would have scored, and each episode in
 * a compact form that an outsider can check a result against.
 */

/** A search or grep call by what it names (the local model's written form). */
export type SearchMove = 'question' | 'question-subset' | 'title' | 'hit-text' | 'hit-text-span' | 'span' | 'free-text';
/** A curate call by how it names its hits. */
export type CurateMove = 'curate-all-shown' | 'curate-top' | 'curate-hits' | 'curate-by-span';

const SEARCHES = new Set(['bm25_search', 'grep_corpus']);

/** How one written search call names its query (q, t, h, s references or free text). */
export function searchMove(written: Record<string, unknown>, questionWords: number): SearchMove {
  if ('s' in written) return 'span';
  if ('h' in written) return typeof written.h === 'string' && written.h.includes(':') ? 'hit-text-span' : 'hit-text';
  if ('t' in written) return 'title';
  if ('q' in written && !('query' in written) && !('pattern' in written)) {
    const q = written.q;
    const all = q === '1-' || (typeof q === 'string' && q === `1-${questionWords}`) || (questionWords === 1 && (q === 1 || q === '1'));
    return all ? 'question' : 'question-subset';
  }
  return 'free-text';
}

/** How one written curate call names its hits. */
export function curateMove(written: Record<string, unknown>): CurateMove {
  if ('s' in written) return 'curate-by-span';
  if ('top' in written) return 'curate-top';
  return written.ids === '1-' ? 'curate-all-shown' : 'curate-hits';
}

/** A call as the local model writes it: a tool name and its arguments (references, hit numbers). */
export interface WrittenCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * Each turn's calls as the local model writes them (or wrote them: a model's own call text is
 * used as sampled). A scripted rollout is replayed through a fresh episode of the local renderer,
 * which compresses its calls into references exactly as SFT's demonstrations are written.
 */
export function writtenCalls(rollout: Rollout, tokenizer: BpeTokenizer): WrittenCall[][] {
  const renderer = localRenderer(tokenizer).forEpisode();
  renderer.prompt({ system: '', user: rollout.query, tools: [{ name: REFERENCE_TOOLS.search, description: '', parameters: {} }] });
  return rollout.turns.map((turn) => {
    const sampled = turn.calls.length > 0 && turn.calls.every((c) => typeof c.raw === 'string');
    const text = sampled ? '' : renderer.renderAssistant('', turn.calls.map((c) => ({ name: c.name, arguments: c.arguments })));
    const written = sampled ? turn.calls.map((c) => parseWritten(c.raw!)) : text.split('<|call|>').slice(1).map((s) => parseWritten(s.replace(/<\|end\|>$/u, '')));
    renderer.renderResults(turn.calls.map((c) => c.result));
    return written;
  });
}

/** Numbered question words of a query (the compact format's `words:` line, at most MAX_QUESTION_WORDS). */
export function questionWordCount(query: string): number {
  return Math.min(MAX_QUESTION_WORDS, keywordQuery(query).split(/\s+/u).filter(Boolean).length);
}

/** An agent's report-split episodes: their move shares, the perfect-curation ceiling, and each episode's record. */
export function agentEpisodes(agent: string, dir: string, tasks: ReadonlyMap<string, Task>, rubric: Rubric, tokenizer: BpeTokenizer): { moves: MoveShares; perfect_curation: number; reward: number; episodes: EpisodeRecord[] } {
  const rollouts = latestRollouts(readRollouts(dir).rollouts).filter((r) => tasks.has(r.taskId));
  const episodes = rollouts.map((rollout) => ({ rollout, written: writtenCalls(rollout, tokenizer), questionWords: questionWordCount(rollout.query) }));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return {
    moves: moveShares(episodes),
    perfect_curation: mean(rollouts.map((r) => perfectCurationReward(tasks.get(r.taskId)!, r, rubric))),
    reward: mean(rollouts.map((r) => r.reward?.total ?? 0)),
    episodes: episodes.map((e) => episodeRecord(agent, e.rollout, e.written)),
  };
}

function parseWritten(raw: string): WrittenCall {
  try {
    const v = JSON.parse(raw) as { name?: unknown; arguments?: unknown };
    const args = typeof v.arguments === 'object' && v.arguments !== null && !Array.isArray(v.arguments) ? (v.arguments as Record<string, unknown>) : {};
    return { name: typeof v.name === 'string' ? v.name : '', arguments: args };
  } catch {
    return { name: '', arguments: {} };
  }
}

export interface MoveShares {
  episodes: number;
  /** Share of follow-up searches (every search after an episode's first) of each kind. */
  follow_up: Record<SearchMove, number>;
  follow_ups: number;
  /** Share of follow-ups that name a span or a subset of the question's words. */
  follow_up_span_or_subset: number;
  /** Share of curate calls of each kind. */
  curate: Record<CurateMove, number>;
  /** Share of episodes whose curated set is not every hit they were shown. */
  curated_not_all_shown: number;
  /** Mean curated-set size. */
  curated_size: number;
}

/** Move shares of an agent's episodes, from their written calls (writtenCalls). */
export function moveShares(episodes: readonly { rollout: Rollout; written: WrittenCall[][]; questionWords: number }[]): MoveShares {
  const follow: Record<SearchMove, number> = { question: 0, 'question-subset': 0, title: 0, 'hit-text': 0, 'hit-text-span': 0, span: 0, 'free-text': 0 };
  const curate: Record<CurateMove, number> = { 'curate-all-shown': 0, 'curate-top': 0, 'curate-hits': 0, 'curate-by-span': 0 };
  let followUps = 0, curates = 0, notAll = 0, size = 0;
  for (const e of episodes) {
    const calls = e.written.flat();
    calls.filter((c) => SEARCHES.has(c.name)).slice(1).forEach((c) => {
      follow[searchMove(c.arguments, e.questionWords)]++;
      followUps++;
    });
    for (const c of calls.filter((x) => x.name === 'curate')) {
      curate[curateMove(c.arguments)]++;
      curates++;
    }
    const shown = new Set(e.rollout.trajectory);
    if (e.rollout.curated.length !== shown.size || e.rollout.curated.some((id) => !shown.has(id))) notAll++;
    size += e.rollout.curated.length;
  }
  const share = <K extends string>(r: Record<K, number>, n: number) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, n ? (v as number) / n : 0])) as Record<K, number>;
  const n = Math.max(1, episodes.length);
  return {
    episodes: episodes.length,
    follow_up: share(follow, followUps),
    follow_ups: followUps,
    follow_up_span_or_subset: followUps ? (follow.span + follow['question-subset'] + follow['hit-text-span']) / followUps : 0,
    curate: share(curate, curates),
    curated_not_all_shown: notAll / n,
    curated_size: size / n,
  };
}

/**
 * The reward an episode would have scored had it curated exactly the gold chunks among the hits it
 * was shown (its own set when that scores more): the ceiling of choosing better from what it saw.
 */
export function perfectCurationReward(task: Task, rollout: Rollout, rubric: Rubric): number {
  const gold = new Set(task.facts.flatMap((f) => f.chunkIds));
  const shownGold = rollout.trajectory.filter((id) => gold.has(id));
  const own = rollout.reward?.total ?? scoreRollout(task, rollout, rubric).total;
  if (!shownGold.length) return own;
  return Math.max(own, scoreRollout(task, { ...rollout, curated: shownGold }, rubric).total);
}

/** One episode as bench:learn commits it: enough to check a result, small enough to ship. */
export interface EpisodeRecord {
  task: string;
  agent: string;
  sample: number;
  reward: number;
  recall: number;
  precision: number;
  curated: number;
  /** Each turn's calls as written (the local model's form: references, hit numbers). */
  calls: WrittenCall[][];
}

export function episodeRecord(agent: string, rollout: Rollout, written: WrittenCall[][]): EpisodeRecord {
  const parts = rollout.reward?.parts ?? {};
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return { task: rollout.taskId, agent, sample: rollout.sample, reward: r3(rollout.reward?.total ?? 0), recall: r3(Number(parts['recall'] ?? 0)), precision: r3(Number(parts['precision'] ?? 0)), curated: rollout.curated.length, calls: written };
}

/** A GRPO run's exploration per step: the share of groups whose rewards were all equal, and the sampler's entropy. */
export function explorationCurve(metrics: readonly Record<string, unknown>[]): { step: number; zero_variance_share: number; entropy: number }[] {
  return metrics
    .filter((m) => typeof m['step'] === 'number' && typeof m['groups_mixed_share'] === 'number')
    .map((m) => ({ step: m['step'] as number, zero_variance_share: 1 - (m['groups_mixed_share'] as number), entropy: typeof m['entropy'] === 'number' ? (m['entropy'] as number) : NaN }));
}
