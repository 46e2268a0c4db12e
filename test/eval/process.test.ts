import { describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import type { CallRecord, Rollout, TurnRecord } from '../../src/agent/rollout.js';
import type { Agent, AgentTurn } from '../../src/agent/types.js';
import type { EndReason, Environment } from '../../src/env/types.js';
import { aborted, lengthClipped, processMetrics, searchCount, searchCountProfile } from '../../src/eval/process.js';

const LOOKUP = new Set(['search']);

function call(name: string, outcome: 'ok' | 'error' = 'ok'): CallRecord {
  return { name, arguments: {}, status: 'ok', result: { outcome, content: '', chunkIds: [] } };
}

function turn(calls: CallRecord[], cut?: 'tokens' | 'context'): TurnRecord {
  return { index: 0, insertedTokens: [], sampledTokens: [], sampledLogprobs: [], text: '', calls, curated: [], sampleMs: 0, envMs: 0, promptTokens: 0, completionTokens: 0, ...(cut ? { cut } : {}) };
}

/** An episode of the given end reason whose turns made these calls. */
function episode(endReason: EndReason, turns: TurnRecord[]): Pick<Rollout, 'endReason' | 'turns'> {
  return { endReason, turns };
}

describe('the abort rate', () => {
  it('counts every end but an answer: turns, tokens, context, a final message without one, an error', () => {
    expect(aborted({ endReason: 'answer' })).toBe(false);
    for (const r of ['turns', 'tokens', 'context', 'finish', 'error'] as const) expect(aborted({ endReason: r })).toBe(true);
  });
});

describe('the length-clip ratio', () => {
  it('counts episodes with a turn cut at the per-turn limit or the context, not a context filled between turns', () => {
    expect(lengthClipped(episode('tokens', [turn([call('search')]), turn([], 'tokens')]))).toBe(true);
    expect(lengthClipped(episode('context', [turn([], 'context')]))).toBe(true);
    expect(lengthClipped(episode('context', [turn([call('search')])]))).toBe(false);
    expect(lengthClipped(episode('answer', [turn([call('answer')])]))).toBe(false);
    // A record from before turns said so: `tokens` has no other cause than a cut turn.
    expect(lengthClipped(episode('tokens', [turn([])]))).toBe(true);
  });

  it('is recorded by runEpisode on the turn a budget cut', async () => {
    const cutTurn: AgentTurn = { text: 'a long', calls: [{ name: 'search', arguments: { query: 'x' }, status: 'ok' }], completionTokens: 8, overBudget: 'tokens' };
    const agent: Agent = { spec: 'cut', start: async () => ({ next: async () => cutTurn }) };
    const env = {
      name: 'stub',
      tools: [],
      defaultBudgets: { maxTurns: 4, maxTokensPerTurn: 8, contextTokens: 64 },
      systemPrompt: () => '',
      userPrompt: () => '',
      start: () => ({ curated: [], trajectory: [], read: [], ended: undefined, answer: undefined, call: async () => ({ outcome: 'ok', content: '', chunkIds: [] }), finalMessage: () => 'finish', endTurn: () => {} }),
    } as unknown as Environment;
    const rollout = await runEpisode(agent, env, { id: 't', query: 'q', facts: [] });
    expect(rollout.endReason).toBe('tokens');
    expect(rollout.turns.map((t) => t.cut)).toEqual(['tokens']);
    expect(lengthClipped(rollout)).toBe(true);
  });
});

describe('searches per episode', () => {
  const episodes = [
    episode('answer', [turn([call('search')]), turn([call('search'), call('search')]), turn([call('answer')])]),
    // A search refused (past the budget) did not run; other tools are not searches.
    episode('answer', [turn([call('search'), call('search', 'error')]), turn([call('answer')])]),
    episode('finish', [turn([])]),
    episode('turns', [turn([call('search')])]),
  ];

  it('counts the lookup calls the environment ran', () => {
    expect(episodes.map((e) => searchCount(e, LOOKUP))).toEqual([3, 1, 0, 1]);
  });

  it('profiles how many episodes made each number of searches, in increasing order', () => {
    expect(searchCountProfile(episodes, LOOKUP)).toEqual({ '0': 1, '1': 2, '3': 1 });
    expect(Object.keys(searchCountProfile(episodes, LOOKUP))).toEqual(['0', '1', '3']);
  });

  it('summarises with the rates', () => {
    expect(processMetrics(episodes, LOOKUP)).toEqual({ episodes: 4, abort_rate: 0.5, length_clip_ratio: 0, searches_per_episode: 5 / 4, search_count_profile: { '0': 1, '1': 2, '3': 1 } });
    expect(processMetrics([], LOOKUP)).toEqual({ episodes: 0, abort_rate: 0, length_clip_ratio: 0, searches_per_episode: 0, search_count_profile: {} });
  });
});
