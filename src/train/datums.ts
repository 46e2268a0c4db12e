import type { Rollout } from '../agent/rollout.js';
import type { Datum } from '../backend/types.js';
import type { Environment, ToolResult } from '../env/types.js';
import type { ParsedCall, Renderer } from '../protocol/types.js';
import type { Task } from '../tasks/task.js';
import { writeTurnTokens } from '../protocol/write-turn.js';

/**
 * Training sequences from rollouts. The sequence of a token-level episode is, turn by turn, the
 * inserted tokens (prompt, template, tool results: mask 0) then the sampled tokens (mask 1), exactly
 * as the sampler saw and wrote them: never re-tokenized. Next-token convention: position t predicts
 * token t + 1, so a target carries loss only when the model wrote it.
 */
export interface TokenStream {
  tokens: number[];
  /** 1 where the model wrote the token, 0 where it was inserted. */
  mask: number[];
  /** Sampler logprob of each model-written token (0 elsewhere). */
  logprobs: number[];
}

/** The episode's token stream from its turn records; empty for message-level or scripted rollouts. */
export function tokenStream(rollout: Rollout): TokenStream {
  const tokens: number[] = [], mask: number[] = [], logprobs: number[] = [];
  for (const turn of rollout.turns) {
    for (const t of turn.insertedTokens) {
      tokens.push(t);
      mask.push(0);
      logprobs.push(0);
    }
    if (turn.sampledLogprobs.length !== turn.sampledTokens.length) {
      throw new Error(`rollout ${rollout.id} turn ${turn.index}: ${turn.sampledTokens.length} sampled tokens but ${turn.sampledLogprobs.length} logprobs`);
    }
    turn.sampledTokens.forEach((t, i) => {
      tokens.push(t);
      mask.push(1);
      logprobs.push(turn.sampledLogprobs[i]!);
    });
  }
  return { tokens, mask, logprobs };
}

/**
 * An RL datum: every model-written target gets the rollout's advantage (times `scale`) and its
 * sampler logprob; inserted targets get weight 0, advantage 0 and logprob 0.
 * Returns undefined when the rollout has no model-written token to train on.
 */
export function rlDatum(rollout: Rollout, advantage: number, scale = 1): Datum | undefined {
  const s = trimInserted(tokenStream(rollout));
  if (s.tokens.length < 2 || !s.mask.slice(1).includes(1)) return undefined;
  const target = (arr: number[]) => arr.slice(1);
  const weights = target(s.mask);
  return {
    inputTokens: s.tokens.slice(0, -1),
    targetTokens: target(s.tokens),
    weights,
    logprobs: target(s.logprobs),
    advantages: weights.map((w) => (w ? advantage * scale : 0)),
  };
}

/** A cross-entropy datum over a token stream: loss on the model-written tokens only. */
export function sftDatum(full: Pick<TokenStream, 'tokens' | 'mask'>): Datum | undefined {
  const stream = trimInserted({ ...full, logprobs: full.mask.map(() => 0) });
  if (stream.tokens.length < 2 || !stream.mask.slice(1).includes(1)) return undefined;
  return { inputTokens: stream.tokens.slice(0, -1), targetTokens: stream.tokens.slice(1), weights: stream.mask.slice(1) };
}

/**
 * Drop inserted tokens after the last model-written one (e.g. tool results of a turn cut by the
 * context budget): they carry no loss, and they may not fit the model's context.
 */
export function trimInserted(s: TokenStream): TokenStream {
  const end = s.mask.lastIndexOf(1) + 1;
  if (end === s.tokens.length) return s;
  return { tokens: s.tokens.slice(0, end), mask: s.mask.slice(0, end), logprobs: s.logprobs.slice(0, end) };
}

export interface RenderRolloutOptions {
  /** Keep the turns' text (default: dropped; the student learns to act). */
  keepText?: boolean;
  /**
   * The first N turns were written by the harness, not the student (an opening search): their
   * tokens are inserted (mask 0), as a TokenAgent with that opening inserts them.
   */
  openingTurns?: number;
}

/**
 * Render any rollout (a scripted teacher's, a chat model's) into the student's token format: the
 * prompt, then per turn the canonical tokens of the turn's calls (mask 1) and the renderer's
 * tool-result tokens (mask 0).
 */
export function renderRollout(format: Renderer, env: Environment, task: Task, rollout: Rollout, options: RenderRolloutOptions = {}): TokenStream {
  const renderer = format.forEpisode?.() ?? format;
  const tokens: number[] = [], mask: number[] = [];
  const push = (ts: number[], m: number) => {
    for (const t of ts) {
      tokens.push(t);
      mask.push(m);
    }
  };
  push(renderer.prompt({ system: env.systemPrompt(), user: env.userPrompt(task), tools: env.tools }), 0);
  rollout.turns.forEach((turn, i) => {
    const calls = turn.calls.map((c) => ({ name: c.name, arguments: typeof c.arguments === 'string' ? safeJson(c.arguments) : c.arguments }));
    const text = options.keepText ? turn.text : '';
    const written = writeTurnTokens(renderer, { text, calls });
    push(written, i < (options.openingTurns ?? 0) ? 0 : 1);
    if (i < rollout.turns.length - 1) {
      const results: { call: ParsedCall; result: ToolResult }[] = turn.calls.map((c) => ({ call: { name: c.name, arguments: c.arguments, status: c.status, raw: c.raw ?? '' }, result: c.result }));
      push(renderer.toolResults(written, results), 0);
    }
  });
  return { tokens, mask, logprobs: mask.map(() => 0) };
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}
