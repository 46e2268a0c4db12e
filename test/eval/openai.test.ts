import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenAIAgent, openAIAgentFromSpec, parseOpenAISpec } from '../../src/agent/openai.js';
import { parseChatArguments } from '../../src/protocol/json-tools.js';
import { resolveModelAgent } from '../../src/cli/agents.js';
import { runEpisode } from '../../src/agent/episode.js';
import { SearchEnvironment } from '../../src/suites/search/env.js';
import { ChatServer, completion } from './chat-server.js';
import { backend, TASKS } from './corpus.js';

const KEY = 'sk-test-secret-0123456789';
const env = new SearchEnvironment(backend);
const task = TASKS[0]!;
let server: ChatServer;

beforeEach(async () => {
  server = await new ChatServer().start();
});
afterEach(async () => {
  await server.close();
});

function agent(over: Partial<ConstructorParameters<typeof OpenAIAgent>[0]> = {}): OpenAIAgent {
  return new OpenAIAgent({ model: 'test-model', baseURL: server.url, apiKey: KEY, maxRetries: 3, timeoutMs: 5000, ...over });
}

describe('the openai: agent against a real chat server', () => {
  it('declares the six tools, runs parallel calls, sends results back by call id, and counts tokens', async () => {
    server.push(
      completion([
        { id: 'a', name: 'bm25_search', arguments: '{"query":"Apollo 11 landed"}' },
        { id: 'b', name: 'bm25_search', arguments: '{"query":"president 1969"}' },
      ], 'Two searches at once.'),
      completion([
        { id: 'c', name: 'curate', arguments: '{"ids":["c-apollo","c-nixon"]}' },
        { id: 'd', name: 'finish', arguments: '{}' },
      ], '', { prompt_tokens: 300, completion_tokens: 30 }),
    );
    const r = await runEpisode(agent(), env, task);
    expect(r.endReason).toBe('finish');
    expect(r.curated).toEqual(['c-apollo', 'c-nixon']);
    expect(r.turns.map((t) => t.calls.map((c) => c.name))).toEqual([['bm25_search', 'bm25_search'], ['curate', 'finish']]);
    expect([r.promptTokens, r.completionTokens]).toEqual([400, 50]);

    const [first, second] = server.requests;
    expect(first!.authorization).toBe(`Bearer ${KEY}`);
    expect(first!.body.model).toBe('test-model');
    expect(first!.body.parallel_tool_calls).toBe(true);
    expect(first!.body.tools.map((t: any) => t.function.name).sort()).toEqual(['bm25_search', 'curate', 'drop_curated', 'finish', 'grep_corpus', 'read_document']);
    expect(first!.body.messages.map((m: any) => m.role)).toEqual(['system', 'user']);
    const roles = second!.body.messages.map((m: any) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(second!.body.messages[2].tool_calls.map((c: any) => c.id)).toEqual(['a', 'b']);
    expect(second!.body.messages.slice(3).map((m: any) => m.tool_call_id)).toEqual(['a', 'b']);
    expect(second!.body.messages[3].content).toContain('c-apollo');
  });

  it('marks malformed tool calls: fenced JSON is off-form but runs, broken JSON is unparseable and answered with an error', async () => {
    server.push(
      completion([
        { id: 'a', name: 'bm25_search', arguments: '```json\n{"query":"Apollo 11"}\n```' },
        { id: 'b', name: 'bm25_search', arguments: '{"query": }' },
        { id: 'c', name: 'no_such_tool', arguments: '{}' },
      ]),
      completion([{ id: 'd', name: 'finish', arguments: '' }]),
    );
    const r = await runEpisode(agent(), env, task);
    const calls = r.turns[0]!.calls;
    expect(calls.map((c) => c.status)).toEqual(['off_form', 'unparseable', 'ok']);
    expect(calls[0]!.result.outcome).toBe('ok');
    expect(calls[0]!.result.chunkIds).toContain('c-apollo');
    expect(calls[1]!.result.errorKind).toBe('unparseable');
    expect(calls[1]!.raw).toBe('{"query": }');
    expect(calls[2]!.result.errorKind).toBe('unknown_tool');
    // every call, even a broken one, gets its tool message back
    expect(server.requests[1]!.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id)).toEqual(['a', 'b', 'c']);
    expect(r.endReason).toBe('finish');
  });

  it('counts a call written as text instead of a tool call as off-form, and carries it out', async () => {
    server.push(
      completion([], 'Searching now: {"name": "bm25_search", "arguments": {"query": "Apollo 11"}}'),
      completion([{ id: 'f', name: 'finish', arguments: '{}' }]),
    );
    const r = await runEpisode(agent(), env, task);
    expect(r.turns).toHaveLength(2);
    const [call] = r.turns[0]!.calls;
    expect(call).toMatchObject({ name: 'bm25_search', status: 'off_form', arguments: { query: 'Apollo 11' } });
    expect(call!.result.chunkIds).toContain('c-apollo');
    // The result went back under the id the echoed assistant turn names.
    const sent = server.requests[1]!.body.messages;
    expect(sent[2].tool_calls[0].id).toBe(sent[3].tool_call_id);
    // Prose that holds no call is still a plain final answer.
    server.push(completion([], 'The answer is {unclear}.'));
    const plain = await runEpisode(agent(), env, task);
    expect(plain.turns[0]!.calls).toEqual([]);
  });

  it('retries 429 and 500 with backoff and then succeeds', async () => {
    const wait = { 'retry-after-ms': '5' };
    server.push(
      { status: 429, body: { error: { message: 'rate limited' } }, headers: wait },
      { status: 500, body: { error: { message: 'boom' } }, headers: wait },
      { status: 503, body: { error: { message: 'overloaded' } } },
      completion([{ name: 'finish', arguments: '{}' }]),
    );
    const r = await runEpisode(agent(), env, task);
    expect(r.endReason).toBe('finish');
    expect(server.requests.length).toBe(4);
  });

  it('gives up a slow response at the timeout and retries it', async () => {
    server.push({ ...completion([{ name: 'bm25_search', arguments: '{"query":"never seen"}' }]), delayMs: 4000 }, completion([{ name: 'finish', arguments: '{}' }]));
    const r = await runEpisode(agent({ timeoutMs: 1000 }), env, task);
    expect(r.endReason).toBe('finish');
    expect(r.turns[0]!.calls.map((c) => c.name)).toEqual(['finish']);
    expect(server.requests.length).toBe(2);
  });

  it('ends the episode with an error once retries are spent, without the key in the message', async () => {
    for (let i = 0; i < 3; i++) server.push({ status: 500, body: { error: { message: 'still down' } }, headers: { 'retry-after-ms': '1' } });
    const r = await runEpisode(agent({ maxRetries: 2 }), env, task);
    expect(r.endReason).toBe('error');
    expect(r.error).toMatch(/HTTP 500/);
    expect(JSON.stringify(r)).not.toContain(KEY);
    expect(server.requests.length).toBe(3);
  });

  it('reports a reply cut at max_tokens as over the token budget', async () => {
    server.push(completion([{ name: 'bm25_search', arguments: '{"query":"Apollo' }], '', undefined, 'length'));
    const r = await runEpisode(agent(), env, task);
    expect(r.endReason).toBe('tokens');
    expect(server.requests[0]!.body.max_tokens).toBe(env.defaultBudgets.maxTokensPerTurn);
  });

  it('keeps requests in flight within its concurrency limit across episodes', async () => {
    // Each reply waits until three requests overlap (or 300 ms): a limit of 2 can never get there.
    const finish = () => ({ ...completion([{ name: 'finish', arguments: '{}' }]), holdUntil: { inFlight: 3, maxMs: 300 } });
    server.fallback = finish;
    const limited = agent({ maxConcurrent: 2 });
    await Promise.all(Array.from({ length: 6 }, (_, i) => runEpisode(limited, env, task, undefined, { sample: i })));
    expect(server.requests.length).toBe(6);
    expect(server.maxInFlight).toBeLessThanOrEqual(2);
    // and the limit is what held it there: without it the same load overlaps further
    server.maxInFlight = 0;
    server.fallback = () => ({ ...completion([{ name: 'finish', arguments: '{}' }]), holdUntil: { inFlight: 3, maxMs: 10_000 } });
    const open = agent({ maxConcurrent: 6 });
    await Promise.all(Array.from({ length: 6 }, (_, i) => runEpisode(open, env, task, undefined, { sample: i })));
    expect(server.maxInFlight).toBeGreaterThan(2);
  });
});

describe('openai: specs and keys', () => {
  it('splits the model from the base URL, keeping colons in model names', () => {
    expect(parseOpenAISpec('gpt-4o-mini', 'openai:gpt-4o-mini')).toEqual({ model: 'gpt-4o-mini' });
    expect(parseOpenAISpec('qwen3:4b@http://127.0.0.1:11434/v1', 's')).toEqual({ model: 'qwen3:4b', baseURL: 'http://127.0.0.1:11434/v1' });
    expect(() => parseOpenAISpec('m@ftp://x', 's')).toThrow(/must start with http/);
    expect(() => parseOpenAISpec('', 'openai:')).toThrow(/needs a model name/);
  });
  it('reads the key from OPENAI_API_KEY or the named variable, and names what is missing', async () => {
    expect(() => openAIAgentFromSpec('gpt-4o-mini', 'openai:gpt-4o-mini', { openai: { environment: {} } })).toThrow(/set OPENAI_API_KEY/);
    expect(() => openAIAgentFromSpec('m', 'openai:m', { openai: { apiKeyEnv: 'MY_KEY', environment: {} } })).toThrow(/--api-key-env MY_KEY/);
    // a self-hosted server needs no key
    expect(openAIAgentFromSpec(`m@${server.url}`, `openai:m@${server.url}`, { openai: { environment: {} } }).spec).toBe(`openai:m@${server.url}`);
    // the model agents' table knows openai:, and the key reaches the server
    server.push(completion([{ name: 'finish', arguments: '{}' }]));
    const a = await resolveModelAgent(`openai:m@${server.url}`, { openai: { apiKeyEnv: 'MY_KEY', environment: { MY_KEY: 'k-from-env' } } });
    await runEpisode(a, env, task);
    expect(server.requests[0]!.authorization).toBe('Bearer k-from-env');
  });
  it('parses tool arguments strictly, then leniently', () => {
    expect(parseChatArguments('{"a":1}')).toEqual({ arguments: { a: 1 }, status: 'ok' });
    expect(parseChatArguments('')).toEqual({ arguments: {}, status: 'ok' });
    expect(parseChatArguments('sure: {"a":1} done').status).toBe('off_form');
    expect(parseChatArguments('[1]').status).toBe('unparseable');
  });
});
