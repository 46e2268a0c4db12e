import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import type { Server } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSampler } from '../../src/backend/local/backend.js';
import { createOpenAIServer } from '../../src/openai-server/server.js';
import { listen } from '../../src/http/lifecycle.js';
import { trainBpe } from '../../src/protocol/compact/bpe.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';
import { localRenderer } from '../../src/protocol/compact/local.js';
import { renderChat, splitCalls } from '../../src/openai-server/server.js';
import { SEARCH_TOOL, SEARCHED, SYSTEM, TEXTS, toolCallingCheckpoint, USER } from './helpers.js';

let checkpoint = '';
let server: Server;
let client: OpenAI;

beforeAll(async () => {
  checkpoint = await toolCallingCheckpoint();
  server = createOpenAIServer({ sampler: loadSampler(checkpoint) });
  const port = await listen(server, 0);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0 });
});

afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

describe('OpenAI-compatible server', () => {
  it('answers a chat completion with a tool call in OpenAI shape', async () => {
    const res = await client.chat.completions.create({ model: 'local', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: USER }], tools: [SEARCH_TOOL], temperature: 0, max_tokens: 60, logprobs: true });
    const choice = res.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('not a function call');
    expect(call.function.name).toBe('bm25_search');
    expect(JSON.parse(call.function.arguments)).toEqual({ query: SEARCHED });
    expect(res.usage!.completion_tokens).toBeGreaterThan(5);
    expect(choice.logprobs!.content).toHaveLength(res.usage!.completion_tokens);
    expect(choice.logprobs!.content!.at(-1)!.token).toBe('<|end|>');
  });

  it('completes token ids with the logprobs the sampler computes', async () => {
    const sampler = loadSampler(checkpoint);
    const prompt = sampler.tokenizer.encode('Paris is the capital');
    const res = await client.completions.create({ model: 'local', prompt, max_tokens: 8, temperature: 1, seed: 3, logprobs: 1 });
    const choice = res.choices[0]! as (typeof res.choices)[0] & { token_ids: number[] };
    expect(choice.token_ids).toHaveLength(8);
    expect(choice.text).toBe(sampler.tokenizer.decode(choice.token_ids));
    const lps = await sampler.computeLogprobs([...prompt, ...choice.token_ids]);
    expect(choice.logprobs!.token_logprobs).toEqual(lps.slice(prompt.length));
    const models = await client.models.list();
    expect(models.data[0]!.id).toBe(checkpoint);
  });

  it('ends a text completion at the end-of-turn token and leaves that token out of the text', async () => {
    const sampler = loadSampler(checkpoint);
    const { tokens: prompt } = renderChat(localRenderer(sampler.tokenizer), [{ role: 'system', content: SYSTEM }, { role: 'user', content: USER }], [{ name: SEARCH_TOOL.function.name, description: SEARCH_TOOL.function.description ?? '', parameters: SEARCH_TOOL.function.parameters ?? {} }]);
    const res = await client.completions.create({ model: 'local', prompt: [...prompt, ...sampler.tokenizer.encode('<|assistant|>')], max_tokens: 80, temperature: 0 });
    const choice = res.choices[0]! as (typeof res.choices)[0] & { token_ids: number[] };
    expect(choice.finish_reason).toBe('stop');
    expect(choice.token_ids.at(-1)).toBe(sampler.tokenizer.encode('<|end|>')[0]);
    expect(choice.text).toContain('bm25_search');
    expect(choice.text).not.toContain('<|end|>');
    expect(choice.text).toBe(sampler.tokenizer.decode(choice.token_ids.slice(0, -1)));
  });

  it('refuses a call to a tool the request did not declare, or one that did not parse: its text comes back as content', () => {
    const sampler = loadSampler(checkpoint);
    const renderer = localRenderer(sampler.tokenizer).forEpisode();
    const tools = [{ name: 'bm25_search', description: '', parameters: {} }];
    // The served model's output in issue 33 (parsed off-form, as a call named "1-"), and a well-formed call.
    const parse = (text: string) => renderer.parse(sampler.tokenizer.encode(text), { stopReason: 'stop' }).calls;
    const parsed = [...parse('<|call|>{"name":"1-"}}<|end|>'), ...parse('<|call|>{"name":"bm25_search","arguments":{"query":"x"}}<|end|>')];
    expect(parsed.map((c) => c.name)).toEqual(['1-', 'bm25_search']);
    const { calls, refused } = splitCalls(parsed, tools);
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([['bm25_search', { query: 'x' }]]);
    expect(refused).toEqual(['{"name":"1-"}}']);
    expect(splitCalls(parsed, []).calls).toEqual([]);
  });

  it('rejects a bad request with status 400 naming the field', async () => {
    const err = await client.completions.create({ model: 'local', prompt: [999999], max_tokens: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect(String((err as Error).message)).toMatch(/prompt\[0\] = 999999/);
  });

  it('`sleuth serve` serves a checkpoint and refuses a missing one with exit status 2', async () => {
    const missing = spawnSync(process.execPath, ['bin/sleuth.js', 'serve', '--checkpoint', '/nonexistent/x.ckpt'], { encoding: 'utf8' });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/\/nonexistent\/x\.ckpt/);
    const child = spawn(process.execPath, ['bin/sleuth.js', 'serve', '--checkpoint', checkpoint, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      while (!/listening on (\S+)/.test(out)) {
        const [chunk] = (await once(child.stdout, 'data')) as [string];
        out += chunk;
      }
      const base = /listening on (\S+)/.exec(out)![1]!;
      const cli = new OpenAI({ baseURL: base, apiKey: 'unused', maxRetries: 0 });
      const res = await cli.chat.completions.create({ model: 'local', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: USER }], tools: [SEARCH_TOOL], temperature: 0 });
      expect(res.choices[0]!.message.tool_calls?.[0]).toMatchObject({ function: { name: 'bm25_search' } });
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('the chat rendering of the server', () => {
  it('renders tool messages as in training (compacted, ids as episode numbers, a curate as a span string) and reads numbers back as ids', () => {
    const tok = trainBpe(TEXTS, 300, [...SPECIALS]);
    const hits = JSON.stringify({ hits: [{ id: 'a1b2c3d4e5', title: 'Paris', score: 9.1, snippet: 'Paris is the capital of France.' }, { id: 'ffeeddccbb', title: 'France', score: 3.2, snippet: 'France is a country.' }], seen: 2, curated: 0 });
    const messages = [
      { role: 'system' as const, content: SYSTEM },
      { role: 'user' as const, content: USER },
      { role: 'assistant' as const, content: '', tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'bm25_search', arguments: JSON.stringify({ query: USER }) } }] },
      { role: 'tool' as const, tool_call_id: 'c1', content: hits },
      { role: 'assistant' as const, content: '', tool_calls: [{ id: 'c2', type: 'function' as const, function: { name: 'curate', arguments: JSON.stringify({ ids: ['ffeeddccbb'] }) } }] },
      { role: 'tool' as const, tool_call_id: 'c2', content: JSON.stringify({ added: ['ffeeddccbb'], curated: 1, cap: 30 }) },
    ];
    const { tokens, renderer } = renderChat(localRenderer(tok), messages, []);
    const text = renderer.decode(tokens);
    // A new hit shows its candidate spans in place of its snippet (the snippet where it has none: France's only name is its title).
    expect(text).toContain('<|tool|>seen=2 curated=0\n1 Paris: 1 France\n2 France: France is a country.<|end|>');
    expect(text).toContain('<|call|>{"name":"curate","arguments":{"ids":"2"}}<|end|><|tool|>{"added":[2],"curated":1,"cap":30}<|end|><|assistant|>');
    expect(text).not.toContain('ffeeddccbb');
    const reply = renderer.parse(renderer.encode('<|call|>{"name":"read_document","arguments":{"id":1}}<|end|>'));
    expect(reply.calls[0]!.arguments).toEqual({ id: 'a1b2c3d4e5' });
  });
});
