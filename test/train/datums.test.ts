import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import type { Rollout, TurnRecord } from '../../src/agent/rollout.js';
import { baselineAgent } from '../../src/suites/search/agents.js';
import { TokenAgent } from '../../src/agent/token-agent.js';
import { openingSearch } from '../../src/suites/search/opening.js';
import type { LocalBackend } from '../../src/backend/local/index.js';
import { SearchEnvironment } from '../../src/suites/search/env.js';
import { trainBpe } from '../../src/protocol/compact/bpe.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';
import type { Task } from '../../src/tasks/task.js';
import { renderRollout, rlDatum, sftDatum, tokenStream } from '../../src/train/datums.js';
import { localRenderer } from '../../src/protocol/compact/local.js';
import { Analyzer } from '../../src/search/analyzer.js';
import { EpisodeReferences } from '../../src/protocol/compact/references.js';
import { ensureWasm, tinyBackend } from '../backend/helpers.js';
import { hotpotData, hotpotFixture } from '../env/fixture.js';

function turn(index: number, inserted: number[], sampled: number[], logprobs: number[]): TurnRecord {
  return { index, insertedTokens: inserted, sampledTokens: sampled, sampledLogprobs: logprobs, text: '', calls: [], curated: [], sampleMs: 0, envMs: 0, promptTokens: 0, completionTokens: sampled.length };
}

function rollout(turns: TurnRecord[]): Rollout {
  return { version: 1, id: 'r', taskId: 't', agent: 'a', env: 'search', sample: 0, query: 'q', turns, curated: [], trajectory: [], read: [], endReason: 'finish', promptTokens: 0, completionTokens: 0, wallMs: 0, startedAt: '' };
}

describe('datums from rollout token records', () => {
  it('concatenates inserted + sampled tokens per turn; only model-written targets carry loss', () => {
    // prompt 10 11 12 | sampled 20 21 | tool result 30 31 | sampled 40
    const r = rollout([turn(0, [10, 11, 12], [20, 21], [-0.5, -1.5]), turn(1, [30, 31], [40], [-2])]);
    expect(tokenStream(r)).toEqual({ tokens: [10, 11, 12, 20, 21, 30, 31, 40], mask: [0, 0, 0, 1, 1, 0, 0, 1], logprobs: [0, 0, 0, -0.5, -1.5, 0, 0, -2] });
    const d = rlDatum(r, 0.25)!;
    expect(d.inputTokens).toEqual([10, 11, 12, 20, 21, 30, 31]);
    expect(d.targetTokens).toEqual([11, 12, 20, 21, 30, 31, 40]);
    expect(d.weights).toEqual([0, 0, 1, 1, 0, 0, 1]);
    expect(d.logprobs).toEqual([0, 0, -0.5, -1.5, 0, 0, -2]);
    expect(d.advantages).toEqual([0, 0, 0.25, 0.25, 0, 0, 0.25]);
    expect(rlDatum(r, -1, 0.5)!.advantages).toEqual([0, 0, -0.5, -0.5, 0, 0, -0.5]);
    expect(sftDatum(tokenStream(r))!.weights).toEqual([0, 0, 1, 1, 0, 0, 1]);
  });

  it('drops inserted tokens after the last model-written one (results of a turn cut by the context)', () => {
    const r = rollout([turn(0, [10, 11], [20], [-1]), turn(1, [30, 31, 32], [], [])]);
    const d = rlDatum(r, 1)!;
    expect(d.inputTokens).toEqual([10, 11]);
    expect(d.targetTokens).toEqual([11, 20]);
    expect(d.weights).toEqual([0, 1]);
  });

  it('gives no datum for a rollout without model-written tokens, and rejects mismatched logprobs', () => {
    expect(rlDatum(rollout([turn(0, [1, 2, 3], [], [])]), 1)).toBeUndefined();
    expect(rlDatum(rollout([]), 1)).toBeUndefined();
    expect(() => tokenStream(rollout([turn(0, [1], [2, 3], [-1])]))).toThrow(/2 sampled tokens but 1 logprobs/);
  });
});

describe('datums of a real token-level episode', () => {
  let backend: LocalBackend;
  let env: SearchEnvironment;
  let tasks: Task[];
  beforeAll(async () => {
    ensureWasm();
    const { chunks } = hotpotData(5);
    const tok = trainBpe([...chunks.slice(0, 200).map((c) => `${c.title}\n${c.text}`), 'bm25_search curate finish ids query'], 600, [...SPECIALS]);
    backend = tinyBackend(tok, { context: 1024, dModel: 16, nLayers: 1, nHeads: 2 }, 3);
    const f = await hotpotFixture(5);
    tasks = f.tasks;
    env = new SearchEnvironment(f.searcher);
  }, 120_000);
  afterAll(async () => backend?.close());

  it('trains exactly the sampled tokens, with the sampler logprobs, and the learner agrees with them', async () => {
    const sampler = await backend.saveWeightsForSampler('s0');
    const renderer = localRenderer(backend.tokenizer);
    const agent = new TokenAgent('tiny', renderer, sampler, { temperature: 1, seed: 5 });
    const r = await runEpisode(agent, env, tasks[0]!, { maxTurns: 3, maxTokensPerTurn: 12, contextTokens: 1000 });
    expect(r.turns.length).toBeGreaterThan(0);
    const d = rlDatum(r, 1)!;
    const sampled = r.turns.flatMap((t) => t.sampledTokens);
    const trained = d.targetTokens.filter((_, i) => d.weights[i] === 1);
    expect(trained).toEqual(sampled);
    expect(d.logprobs!.filter((_, i) => d.weights[i] === 1)).toEqual(r.turns.flatMap((t) => t.sampledLogprobs));
    // The stream starts with exactly the prompt the renderer made: nothing was re-tokenized.
    const prompt = renderer.prompt({ system: env.systemPrompt(), user: env.userPrompt(tasks[0]!), tools: env.tools });
    expect(d.inputTokens.slice(0, prompt.length)).toEqual(prompt);
    expect(d.weights.slice(0, prompt.length - 1).every((w) => w === 0)).toBe(true);
    // Same weights, same tokens: the learner's logprobs are the sampler's, so the ratio is 1.
    const fb = await backend.forwardBackward([d], 'importance_sampling');
    d.weights.forEach((w, i) => {
      if (w === 1) expect(fb.logprobs[0]![i]).toBeCloseTo(d.logprobs![i]!, 4);
    });
    expect(fb.metrics['ratio:mean']).toBeCloseTo(1, 4);
  });

  it('renders a scripted teacher in the student format: calls are the model tokens, results are inserted', async () => {
    const renderer = localRenderer(backend.tokenizer);
    const r = await runEpisode(baselineAgent(3), env, tasks[1]!);
    const s = renderRollout(renderer, env, tasks[1]!, r);
    const prompt = renderer.prompt({ system: env.systemPrompt(), user: env.userPrompt(tasks[1]!), tools: env.tools });
    expect(s.tokens.slice(0, prompt.length)).toEqual(prompt);
    // Split the model-written spans back out and parse them: the teacher's calls, well formed.
    const spans: number[][] = [];
    s.mask.forEach((m, i) => {
      if (m === 1 && (i === 0 || s.mask[i - 1] === 0)) spans.push([]);
      if (m === 1) spans[spans.length - 1]!.push(s.tokens[i]!);
    });
    expect(spans).toHaveLength(r.turns.length);
    // Replayed turn by turn in one episode of the renderer (ids are shown as per-episode numbers):
    // each span parses back into the teacher's calls with the real ids, and the inserted tokens
    // after it are the renderer's rendering of that turn's results.
    const ep = renderer.forEpisode();
    ep.prompt({ system: env.systemPrompt(), user: env.userPrompt(tasks[1]!), tools: env.tools });
    let start = prompt.length;
    // A search is written with references to the question's words: it comes back as those words,
    // the same BM25 terms as the teacher's query.
    const asSearched = (args: unknown) => {
      const a = args as { query?: string };
      return typeof a.query === 'string' ? { ...a, query: [...new Set(new Analyzer().terms(a.query))].sort() } : a;
    };
    spans.forEach((span, i) => {
      const parsed = ep.parse(span);
      expect(parsed.calls.map((c) => [c.name, c.status])).toEqual(r.turns[i]!.calls.map((c) => [c.name, 'ok']));
      expect(parsed.calls.map((c) => asSearched(c.arguments))).toEqual(r.turns[i]!.calls.map((c) => asSearched(c.arguments)));
      start += span.length;
      if (i === spans.length - 1) return;
      const results = ep.toolResults(span, r.turns[i]!.calls.map((c) => ({ call: { name: c.name, arguments: c.arguments, status: c.status, raw: '' }, result: c.result })));
      expect(s.tokens.slice(start, start + results.length)).toEqual(results);
      expect(s.mask.slice(start, start + results.length).every((m) => m === 0)).toBe(true);
      start += results.length;
    });
    // The curate turn names chunks by their episode numbers (as a span string), not by their ids:
    // all three hits shown, the open span.
    expect(renderer.decode(spans[1]!)).toMatch(/"ids":"1-"/);
  });

  it('an opening search is written by the harness: recorded as a turn with calls and no sampled tokens, and it carries no loss', async () => {
    const sampler = await backend.saveWeightsForSampler('s-open');
    const renderer = localRenderer(backend.tokenizer);
    const agent = new TokenAgent('tiny', renderer, sampler, { temperature: 1, seed: 9, opening: openingSearch(4) });
    const task = tasks[2]!;
    const r = await runEpisode(agent, env, task, { maxTurns: 3, maxTokensPerTurn: 12, contextTokens: 1000 });
    const first = r.turns[0]!;
    expect(first.sampledTokens).toEqual([]);
    // The harness's search for the question is written as the model would write it: all its numbered words.
    const refs = new EpisodeReferences();
    refs.setQuestion(task.query);
    expect(first.calls.map((c) => [c.name, c.arguments, c.status, c.result.outcome])).toEqual([['bm25_search', { k: 4, query: refs.words.join(' ') }, 'ok', 'ok']]);
    expect(r.trajectory.length).toBe(4);
    // The opening call's tokens follow the prompt, inserted (mask 0); the model writes from turn 1 on.
    const prompt = renderer.prompt({ system: env.systemPrompt(), user: env.userPrompt(task), tools: env.tools });
    expect(first.insertedTokens.slice(0, prompt.length)).toEqual(prompt);
    expect(renderer.decode(first.insertedTokens.slice(prompt.length))).toBe(`<|call|>${JSON.stringify({ name: 'bm25_search', arguments: { k: 4, q: refs.words.length > 1 ? '1-' : '1' } })}<|end|>`);
    expect(r.turns[1]!.sampledTokens.length).toBeGreaterThan(0);
    const stream = tokenStream(r);
    expect(stream.mask.slice(0, first.insertedTokens.length).every((m) => m === 0)).toBe(true);
    expect(rlDatum(r, 1)!.targetTokens.filter((_, i) => rlDatum(r, 1)!.weights[i] === 1)).toEqual(r.turns.flatMap((t) => t.sampledTokens));
    // A teacher that opens with the same search, rendered with openingTurns 1, gives the student's
    // exact token stream up to its first own turn.
    const teacher = await runEpisode(baselineAgent(2, 'baseline', { searchK: 4 }), env, task);
    const t = renderRollout(renderer, env, task, teacher, { openingTurns: 1 });
    const upTo = first.insertedTokens.length + r.turns[1]!.insertedTokens.length;
    expect(t.tokens.slice(0, upTo)).toEqual(stream.tokens.slice(0, upTo));
    expect(t.mask.slice(0, upTo).every((m) => m === 0)).toBe(true);
    expect(renderer.decode(t.tokens.slice(upTo).filter((_, i) => t.mask[upTo + i] === 1))).toBe('<|call|>{"name":"curate","arguments":{"ids":"1-2"}}<|call|>{"name":"finish","arguments":{}}<|end|>');
  });
});
