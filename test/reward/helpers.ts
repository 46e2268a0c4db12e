import type { Rollout, TurnRecord, CallRecord } from '../../src/agent/rollout.js';
import type { Task } from '../../src/tasks/task.js';

/** A hand-built rollout record: only what the rewards read is varied. */
export function rollout(over: Partial<Rollout> & { calls?: CallRecord['status'][] } = {}): Rollout {
  const { calls = [], ...rest } = over;
  const turn: TurnRecord = {
    index: 0,
    insertedTokens: [],
    sampledTokens: [],
    sampledLogprobs: [],
    text: '',
    calls: calls.map((status, i) => ({ name: 'bm25_search', arguments: { query: `q${i}` }, status, result: { outcome: 'ok', content: '[]', chunkIds: [] } })),
    curated: rest.curated ?? [],
    sampleMs: 0,
    envMs: 0,
    promptTokens: 0,
    completionTokens: 0,
  };
  return {
    version: 1,
    id: 'r1',
    taskId: 't1',
    agent: 'test',
    env: 'search',
    sample: 0,
    query: 'q',
    turns: [turn],
    curated: [],
    trajectory: [],
    read: [],
    endReason: 'finish',
    promptTokens: 0,
    completionTokens: 0,
    wallMs: 0,
    startedAt: '2026-01-01T00:00:00.000Z',
    ...rest,
  };
}

/** Four facts, one supporting chunk each (f3 has two), as in a Harness-1 query. */
export const task: Task = {
  id: 't1',
  query: 'Which filings mention X?',
  facts: [
    { text: 'a', chunkIds: ['a1'] },
    { text: 'b', chunkIds: ['b1'] },
    { text: 'c', chunkIds: ['c1', 'c2'] },
    { text: 'd', chunkIds: ['d1'] },
  ],
};
