import { beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import { RenderedAgent, TokenAgent } from '../../src/agent/token-agent.js';
import { goldIds, oracleAgent } from '../../src/agent/scripted.js';
import { createQwen3Renderer } from '../../src/protocol/qwen3/renderer.js';
import type { SampledSequence, Sampler, SamplingParams } from '../../src/backend/types.js';
import { SearchEnvironment } from '../../src/suites/search/env.js';
import { DEFAULT_BUDGETS } from '../../src/env/types.js';
import { createHarmonyRenderer } from '../../src/protocol/harmony/renderer.js';
import { encodeWithSpecials } from '../../src/protocol/harmony/tokens.js';
import type { Task } from '../../src/tasks/task.js';
import type { SearchIndex } from '../../src/search/index.js';
import { hotpotFixture } from '../env/fixture.js';

/**
 * A scripted policy at the token level: it writes fixed Harmony turns, honouring maxTokens (cut
 * with stopReason 'length') and recording every prompt it was given, as a real sampler would see them.
 */
class ScriptSampler implements Sampler {
  readonly modelPath = 'script';
  readonly prompts: number[][] = [];
  readonly params: SamplingParams[] = [];
  private i = 0;
  constructor(private readonly turns: string[]) {}
  async sample(prompt: number[], params: SamplingParams): Promise<SampledSequence[]> {
    this.prompts.push(prompt);
    this.params.push(params);
    const all = encodeWithSpecials(this.turns[Math.min(this.i++, this.turns.length - 1)]!);
    const tokens = all.slice(0, params.maxTokens);
    return [{ tokens, logprobs: tokens.map((_, j) => -0.01 * (j + 1)), stopReason: tokens.length < all.length ? 'length' : 'stop' }];
  }
  async computeLogprobs(tokens: number[]): Promise<(number | null)[]> {
    return tokens.map((_, j) => (j === 0 ? null : -1));
  }
}

const call = (name: string, args: unknown) => `<|channel|>commentary to=functions.${name} <|constrain|>json<|message|>${JSON.stringify(args)}<|call|>`;

let searcher: SearchIndex;
let task: Task;
let env: SearchEnvironment;
beforeAll(async () => {
  const f = await hotpotFixture(2);
  searcher = f.searcher;
  task = f.tasks[0]!;
  env = new SearchEnvironment(searcher, { defaultK: 3, snippetChars: 80 });
}, 60_000);

describe('TokenAgent (Harmony renderer + sampler)', () => {
  it('builds the token stream by appending only, and records inserted and sampled tokens per turn', async () => {
    const first = searcher.search('Shirley Temple', 3)[0]!.id;
    const sampler = new ScriptSampler([
      `<|channel|>analysis<|message|>Search first.<|end|><|start|>assistant${call('bm25_search', { query: 'Shirley Temple' })}`,
      call('curate', { ids: [first] }),
      call('finish', {}),
    ]);
    const r = await runEpisode(new TokenAgent('script', createHarmonyRenderer(), sampler, { temperature: 1, seed: 7 }), env, task);
    expect(r.endReason).toBe('finish');
    expect(r.curated).toEqual([first]);
    expect(r.turns).toHaveLength(3);
    // Every prompt the sampler saw is exactly the concatenation of all earlier inserted and sampled tokens.
    let stream: number[] = [];
    r.turns.forEach((t, i) => {
      stream = [...stream, ...t.insertedTokens];
      expect(sampler.prompts[i]).toEqual(stream);
      expect(t.promptTokens).toBe(stream.length);
      stream = [...stream, ...t.sampledTokens];
      expect(t.sampledLogprobs).toHaveLength(t.sampledTokens.length);
      expect(t.completionTokens).toBe(t.sampledTokens.length);
      expect(t.calls.every((c) => c.status === 'ok' && c.tokenSpan !== undefined)).toBe(true);
    });
    // The tool result the model is shown is in the inserted tokens of the next turn.
    const decoded = createHarmonyRenderer().decode(r.turns[1]!.insertedTokens);
    expect(decoded).toContain('functions.bm25_search');
    expect(decoded).toContain(first);
    expect(decoded.endsWith('<|start|>assistant')).toBe(true);
    expect(r.turns[0]!.calls[0]).toMatchObject({ name: 'bm25_search', arguments: { query: 'Shirley Temple' } });
    expect(sampler.params[0]).toMatchObject({ maxTokens: 2048, temperature: 1, stop: createHarmonyRenderer().stopTokens });
    expect(r.promptTokens).toBe(r.turns.reduce((s, t) => s + t.promptTokens, 0));
  });

  it('a turn cut at the per-turn token budget ends the episode as tokens, its call not run', async () => {
    const sampler = new ScriptSampler([call('bm25_search', { query: 'Shirley Temple and a long query that goes on' })]);
    const r = await runEpisode(new TokenAgent('script', createHarmonyRenderer(), sampler), env, task, { ...DEFAULT_BUDGETS, maxTokensPerTurn: 12 });
    expect(sampler.params[0]!.maxTokens).toBe(12);
    expect(r.endReason).toBe('tokens');
    expect(r.turns[0]!.sampledTokens).toHaveLength(12);
    expect(r.trajectory).toEqual([]);
  });

  it('never asks for more tokens than the context has room for, and ends on context', async () => {
    const sampler = new ScriptSampler([call('bm25_search', { query: 'Shirley Temple' })]);
    const agent = new TokenAgent('script', createHarmonyRenderer(), sampler);
    const prompt = createHarmonyRenderer().prompt({ system: env.systemPrompt(), user: task.query, tools: env.tools });
    // Room for the first call but not for the results that follow it.
    const r = await runEpisode(agent, env, task, { maxTurns: 40, maxTokensPerTurn: 2048, contextTokens: prompt.length + 40 });
    expect(sampler.params[0]!.maxTokens).toBe(40);
    expect(r.endReason).toBe('context');
    expect(r.turns.at(-1)!.sampledTokens).toEqual([]);
    expect(r.trajectory.length).toBeGreaterThan(0);
  });

  it('passes distinct seeds to distinct samples of a task', async () => {
    const seeds: (number | undefined)[] = [];
    for (const sample of [0, 1]) {
      const sampler = new ScriptSampler([call('finish', {})]);
      await runEpisode(new TokenAgent('script', createHarmonyRenderer(), sampler, { temperature: 1, seed: 3 }), env, task, undefined, { sample });
      seeds.push(sampler.params[0]!.seed);
    }
    expect(seeds[0]).not.toBe(seeds[1]);
  });
});

describe('RenderedAgent (a message-level teacher written as tokens)', () => {
  it.each([
    ['qwen3', () => createQwen3Renderer()],
    ['harmony', () => createHarmonyRenderer()],
  ])('the oracle written by the %s renderer: same calls, ok status, one append-only token stream', async (_name, make) => {
    const renderer = make();
    const r = await runEpisode(new RenderedAgent(oracleAgent(searcher), renderer), env, task);
    const plain = await runEpisode(oracleAgent(searcher), env, task);
    expect(r.endReason).toBe('finish');
    expect(r.curated).toEqual(plain.curated);
    expect(goldIds(task).every((id) => r.curated.includes(id))).toBe(true);
    // Harmony writes one call per turn, so compare the calls in order rather than turn by turn.
    expect(r.turns.flatMap((t) => t.calls.map((c) => [c.name, c.arguments, c.status]))).toEqual(plain.turns.flatMap((t) => t.calls.map((c) => [c.name, c.arguments, 'ok'])));
    if (_name === 'harmony') expect(r.turns.every((t) => t.calls.length <= 1)).toBe(true);
    let length = 0;
    for (const t of r.turns) {
      length += t.insertedTokens.length;
      expect(t.promptTokens).toBe(length);
      length += t.sampledTokens.length;
      expect(t.sampledLogprobs).toEqual(t.sampledTokens.map(() => 0));
    }
    const text = renderer.decode(r.turns.flatMap((t) => [...t.insertedTokens, ...t.sampledTokens]));
    expect(text).toContain(task.query);
    expect(text).toContain('bm25_search');
  }, 30_000);

  it('a written turn longer than the per-turn budget ends the episode as tokens', async () => {
    const r = await runEpisode(new RenderedAgent(oracleAgent(searcher), createQwen3Renderer()), env, task, { ...DEFAULT_BUDGETS, maxTokensPerTurn: 5 });
    expect(r.endReason).toBe('tokens');
    expect(r.trajectory).toEqual([]);
  });
});
