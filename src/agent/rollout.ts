import type { Budgets, CallStatus, EndReason, ToolResult } from '../env/types.js';
import type { RewardBreakdown } from '../reward/rubric.js';

export type { RewardBreakdown };

/**
 * The rollout record: everything needed to score, train on, and show one episode.
 * Token fields are empty for message-level agents (chat APIs) and scripted agents.
 * The training sequence of a token-level episode is the concatenation, turn by turn, of
 * `insertedTokens` (mask 0) then `sampledTokens` (mask 1): never re-tokenize text.
 */
export interface CallRecord {
  name: string;
  arguments: unknown;
  /** Parse status (ok, off_form but accepted, unparseable). */
  status: CallStatus;
  /** The raw text of the call as the model wrote it (kept for off-form and unparseable calls). */
  raw?: string;
  /** [start, end) into this turn's sampledTokens. */
  tokenSpan?: [number, number];
  result: ToolResult;
  /** Time the environment took to handle the call, in ms (optional: older records lack it). */
  ms?: number;
}

export interface TurnRecord {
  index: number;
  /** Template/tool-result tokens inserted before this turn's sampling (turn 0: the whole prompt). */
  insertedTokens: number[];
  sampledTokens: number[];
  /** Sampler logprob of each sampled token. */
  sampledLogprobs: number[];
  /** The model's text for this turn (decoded, or the chat API's message content). */
  text: string;
  calls: CallRecord[];
  /** The curated set after this turn. */
  curated: string[];
  sampleMs: number;
  envMs: number;
  /** Token counts as billed (prompt = context fed this turn, completion = sampled). */
  promptTokens: number;
  completionTokens: number;
  /**
   * Set when the model's writing of this turn was cut: at the per-turn token limit ('tokens') or
   * at the end of the context ('context'). Such a turn ends the episode (optional: older records lack it).
   */
  cut?: 'tokens' | 'context';
}

export interface Rollout {
  version: 1;
  id: string;
  taskId: string;
  /** Agent spec, e.g. `baseline`, `local:runs/x/ckpt-4`, `openai:gpt-4o-mini`. */
  agent: string;
  env: string;
  /** Index of this sample among the N for its task. */
  sample: number;
  query: string;
  turns: TurnRecord[];
  curated: string[];
  /** Every chunk id that appeared in any tool result, in order of first appearance. */
  trajectory: string[];
  read: string[];
  /** Final answer text for QA-style environments. */
  answer?: string;
  endReason: EndReason;
  error?: string;
  promptTokens: number;
  completionTokens: number;
  wallMs: number;
  startedAt: string;
  reward?: RewardBreakdown;
  /** The budgets the episode ran under (optional: older records lack it). */
  budgets?: Budgets;
  /** Training only. */
  step?: number;
  group?: number;
  advantage?: number;
}

/** Calls of the episode, across turns. */
export function allCalls(rollout: Rollout): Rollout['turns'][number]['calls'] {
  return rollout.turns.flatMap((t) => t.calls);
}

/** The search environment's lookup tools. */
const SEARCH_CALLS = new Set(['bm25_search', 'grep_corpus']);

/**
 * Searches (bm25_search, grep_corpus) the agent wrote itself: a harness-written opening turn
 * (inserted tokens, nothing sampled) does not count; scripted agents insert no tokens and count.
 */
export function ownSearches(r: Rollout): number {
  let n = 0;
  for (const t of r.turns) {
    const harnessWritten = t.sampledTokens.length === 0 && t.insertedTokens.length > 0 && t.calls.length > 0;
    if (!harnessWritten) n += t.calls.filter((c) => SEARCH_CALLS.has(c.name)).length;
  }
  return n;
}
