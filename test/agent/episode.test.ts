import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import type { Rollout } from '../../src/agent/rollout.js';
import { resolveScriptedAgent } from '../../src/suites/registry.js';
import { searchSuite } from '../../src/suites/search/suite.js';
import { qaBaselineAgent, qaOracleAgent } from '../../src/suites/qa/agents.js';
import { baselineAgent, goldIds, literalPattern, oracleAgent } from '../../src/suites/search/agents.js';
import type { Agent, AgentTurn, ToolExchange } from '../../src/agent/types.js';
import { QaEnvironment } from '../../src/suites/qa/env.js';
import { SearchEnvironment } from '../../src/suites/search/env.js';
import { DEFAULT_BUDGETS } from '../../src/env/types.js';
import { appendJsonl, readJsonl } from '../../src/runs/jsonl.js';
import type { Task } from '../../src/tasks/task.js';
import type { SearchIndex } from '../../src/search/index.js';
import { hotpotFixture } from '../env/fixture.js';

let searcher: SearchIndex;
let tasks: Task[];
let env: SearchEnvironment;
const dir = mkdtempSync(join(tmpdir(), 'sleuth-episode-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const f = await hotpotFixture(30);
  searcher = f.searcher;
  tasks = f.tasks;
  env = new SearchEnvironment(searcher);
}, 60_000);

/** A message-level agent that replays fixed turns (as a chat API would return them) and keeps what it was shown. */
function replay(turns: AgentTurn[], spec = 'replay'): Agent & { seen: ToolExchange[][] } {
  const seen: ToolExchange[][] = [];
  return {
    spec,
    seen,
    start: () => {
      let i = 0;
      return { next: async (results: ToolExchange[]) => (seen.push(results), turns[Math.min(i++, turns.length - 1)]!) };
    },
  };
}

const recall = (task: Task, curated: string[]) => task.facts.filter((f) => f.chunkIds.some((id) => curated.includes(id))).length / task.facts.length;

describe('scripted agents', () => {
  it('baseline searches the query, curates the top k and finishes', async () => {
    const task = tasks[0]!;
    const r = await runEpisode(baselineAgent(5), env, task);
    const top = searcher.search(task.query, 5).map((h) => h.id);
    expect(r.endReason).toBe('finish');
    expect(r.turns).toHaveLength(2);
    expect(r.turns[0]!.calls[0]).toMatchObject({ name: 'bm25_search', status: 'ok', arguments: { query: task.query, k: 5 } });
    expect(r.curated).toEqual(top);
    expect(r.trajectory).toEqual(top);
    expect(r.turns.map((t) => t.curated)).toEqual([[], top]);
    expect(r).toMatchObject({ agent: 'baseline', env: 'search', taskId: task.id, query: task.query, version: 1, sample: 0, id: `${task.id}#0` });
  });

  it('oracle reaches recall 1.0 with only gold chunks curated, acting through the tools', async () => {
    let baselineRecall = 0;
    for (const task of tasks) {
      const r = await runEpisode(oracleAgent(searcher), env, task);
      expect(r.endReason).toBe('finish');
      expect(recall(task, r.curated)).toBe(1);
      expect(r.curated.every((id) => goldIds(task).includes(id))).toBe(true);
      expect(r.curated.every((id) => r.trajectory.includes(id))).toBe(true);
      expect(r.turns[0]!.calls[0]!.arguments).toEqual({ query: task.query });
      baselineRecall += recall(task, (await runEpisode(baselineAgent(), env, task)).curated) / tasks.length;
    }
    expect(baselineRecall).toBeGreaterThan(0);
    expect(baselineRecall).toBeLessThan(1);
  }, 30_000);

  it('literalPattern escapes regex metacharacters and joins words with \\s+', () => {
    expect(literalPattern('a.b (c) d+e', 3)).toBe('a\\.b\\s+\\(c\\)\\s+d\\+e');
  });

  it("the search suite's agents table knows baseline, baseline:K and oracle, and names what is wrong", async () => {
    expect(resolveScriptedAgent(searchSuite, 'baseline').spec).toBe('baseline');
    expect((await runEpisode(resolveScriptedAgent(searchSuite, 'baseline:3'), env, tasks[1]!)).curated).toHaveLength(3);
    expect(resolveScriptedAgent(searchSuite, 'oracle', { corpus: searcher }).spec).toBe('oracle');
    expect(() => resolveScriptedAgent(searchSuite, 'oracle')).toThrow(/needs the corpus/);
    expect(() => resolveScriptedAgent(searchSuite, 'baseline:0')).toThrow(/baseline:K/);
    expect(() => resolveScriptedAgent(searchSuite, 'gpt9:x')).toThrow(/unknown agent 'gpt9:x' for env search; its scripted agents: baseline, oracle, follow/);
  });

  it('in the QA variant, both produce an answer; the oracle gives the gold one', async () => {
    const qa = new QaEnvironment(searcher);
    const task = tasks[0]!;
    const o = await runEpisode(qaOracleAgent(searcher), qa, task);
    expect(o).toMatchObject({ endReason: 'answer', answer: task.answers![0], env: 'qa' });
    expect(goldIds(task).every((id) => o.trajectory.includes(id))).toBe(true);
    const b = await runEpisode(qaBaselineAgent(), qa, task);
    expect(b.endReason).toBe('answer');
    expect(b.answer).toBe(searcher.search(task.query, 3)[0]!.title);
  }, 30_000);
});

describe('runEpisode', () => {
  const search = (query: string) => ({ name: 'bm25_search', arguments: { query }, status: 'ok' as const });

  it('passes each turn the results of the previous turn, in call order', async () => {
    const agent = replay([{ text: 'two searches', calls: [search('Shirley Temple'), search('Corliss Archer')] }, { text: 'done', calls: [] }]);
    const r = await runEpisode(agent, env, tasks[0]!);
    expect(agent.seen[0]).toEqual([]);
    expect(agent.seen[1]!.map((x) => (x.call.arguments as { query: string }).query)).toEqual(['Shirley Temple', 'Corliss Archer']);
    expect(agent.seen[1]!.map((x) => x.result)).toEqual(r.turns[0]!.calls.map((c) => c.result));
    expect(r.endReason).toBe('finish');
  });

  it('ends at max turns with the curated set still graded', async () => {
    const first = searcher.search('Shirley Temple', 1)[0]!.id;
    const agent = replay([
      { text: 'search and curate', calls: [search('Shirley Temple'), { name: 'curate', arguments: { ids: [first] }, status: 'ok' }] },
      { text: 'again', calls: [search('more')] },
    ]);
    const r = await runEpisode(agent, env, tasks[0]!, { ...DEFAULT_BUDGETS, maxTurns: 4 });
    expect(r.endReason).toBe('turns');
    expect(r.turns).toHaveLength(4);
    expect(r.curated).toEqual([first]);
    expect(r.turns.every((t) => t.curated[0] === first)).toBe(true);
  });

  it('defaults to the seed budgets: 40 turns', async () => {
    const r = await runEpisode(replay([{ text: 'loop', calls: [search('Shirley Temple')] }]), env, tasks[0]!);
    expect(r.endReason).toBe('turns');
    expect(r.turns).toHaveLength(40);
    expect(r.budgets).toEqual({ maxTurns: 40, maxTokensPerTurn: 2048, contextTokens: 30720 });
  }, 30_000);

  it('ends on context when a turn reaches the context budget, after running its calls', async () => {
    const r = await runEpisode(replay([{ text: 'big', calls: [search('Shirley Temple')], promptTokens: 900, completionTokens: 100 }]), env, tasks[0]!, { ...DEFAULT_BUDGETS, contextTokens: 1000 });
    expect(r).toMatchObject({ endReason: 'context', promptTokens: 900, completionTokens: 100 });
    expect(r.turns[0]!.calls[0]!.result.outcome).toBe('ok');
  });

  it('an over-budget turn is recorded but its calls are not run', async () => {
    const r = await runEpisode(replay([{ text: 'cut', calls: [search('Shirley Temple')], overBudget: 'tokens' }]), env, tasks[0]!);
    expect(r.endReason).toBe('tokens');
    expect(r.turns[0]!.calls[0]!.result).toMatchObject({ outcome: 'error', errorKind: 'not_run' });
    expect(r.trajectory).toEqual([]);
  });

  it('a turn that wrote more than the per-turn token budget ends the episode as tokens', async () => {
    const r = await runEpisode(replay([{ text: 'long', calls: [search('Shirley Temple')], promptTokens: 100, completionTokens: 2049 }]), env, tasks[0]!);
    expect(r.endReason).toBe('tokens');
    expect(r.turns[0]!.calls[0]!.result.errorKind).toBe('not_run');
  });

  it('records bad calls with their status and keeps going', async () => {
    const agent = replay([
      {
        text: 'mistakes',
        calls: [
          { name: 'nope', arguments: {}, status: 'ok' },
          { name: 'bm25_search', arguments: '{"query": ', status: 'unparseable', raw: '<tool_call>{"name": "bm25_search", "arguments": {"query": ' },
          { name: 'read_document', arguments: { id: 'x' }, status: 'off_form', raw: 'raw text', tokenSpan: [3, 9] },
        ],
      },
      { text: 'end', calls: [{ name: 'finish', arguments: {}, status: 'ok' }] },
    ]);
    const r = await runEpisode(agent, env, tasks[0]!);
    expect(r.turns[0]!.calls.map((c) => [c.status, c.result.errorKind])).toEqual([
      ['ok', 'unknown_tool'],
      ['unparseable', 'unparseable'],
      ['off_form', 'unknown_id'],
    ]);
    expect(r.turns[0]!.calls[2]).toMatchObject({ raw: 'raw text', tokenSpan: [3, 9] });
    expect(r.endReason).toBe('finish');
  });

  it('calls after finish in the same turn are refused, not run', async () => {
    const r = await runEpisode(replay([{ text: '', calls: [{ name: 'finish', arguments: {}, status: 'ok' }, search('Shirley Temple')] }]), env, tasks[0]!);
    expect(r.turns[0]!.calls[1]!.result.errorKind).toBe('episode_over');
    expect(r.trajectory).toEqual([]);
  });

  it('an agent failure ends the episode with error and keeps the turns so far', async () => {
    let n = 0;
    const agent: Agent = {
      spec: 'flaky',
      start: () => ({
        next: async () => {
          if (n++ === 1) throw new Error('connection reset by peer');
          return { text: 'search', calls: [search('Shirley Temple')] };
        },
      }),
    };
    const r = await runEpisode(agent, env, tasks[0]!);
    expect(r).toMatchObject({ endReason: 'error', error: 'connection reset by peer' });
    expect(r.turns).toHaveLength(1);
    expect(r.trajectory.length).toBeGreaterThan(0);
  });

  it('rollouts round-trip through JSONL', async () => {
    const path = join(dir, 'rollouts.jsonl');
    const rollouts: Rollout[] = [];
    for (const [i, task] of tasks.slice(0, 4).entries()) rollouts.push(await runEpisode(i % 2 ? oracleAgent(searcher) : baselineAgent(), env, task, undefined, { sample: i, id: `r${i}` }));
    rollouts.push(await runEpisode(qaOracleAgent(searcher), new QaEnvironment(searcher), tasks[0]!));
    appendJsonl(path, rollouts.slice(0, 2));
    appendJsonl(path, rollouts.slice(2));
    const back = readJsonl<Rollout>(path);
    expect(back.skipped).toEqual([]);
    expect(back.records).toEqual(rollouts);
  }, 30_000);
});
