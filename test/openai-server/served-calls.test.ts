import type { Server } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadSampler } from '../../src/backend/local/backend.js';
import { OpenAIAgent } from '../../src/agent/openai.js';
import type { AgentContext } from '../../src/agent/types.js';
import { parseArguments } from '../../src/env/args.js';
import { listen } from '../../src/http/lifecycle.js';
import { createOpenAIServer } from '../../src/openai-server/server.js';
import { toOpenAITools } from '../../src/protocol/json-tools.js';
import { boundTools } from '../../src/suites/search/tools.js';
import { SEARCHED, SYSTEM, toolCallingCheckpoint, USER } from './helpers.js';

/**
 * `sleuth serve` returns the local model's calls in the arguments the request declared: the
 * official openai client calls a real server on 127.0.0.1 over a real (tiny, trained) model,
 * declaring the search suite's own bm25_search (query, k; no other key). The model writes its
 * query as a reference to the question's words ({"q":"1-"}); a second question is answered with
 * a call whose reference names a hit the conversation never showed ({"k":5,"t":10,"q":"1-"}), the
 * short form issue 49 saw served as is.
 */

const SEARCH = boundTools({ curateCap: 30, defaultK: 10 }).get('bm25_search')!;
const DECLARED = toOpenAITools([SEARCH.spec]);
const UNSHOWN = 'who wrote the play Hamlet';
const SHORT_FORM = '{"k":5,"t":10,"q":"1-"}';

let server: Server;
let client: OpenAI;

beforeAll(async () => {
  const checkpoint = await toolCallingCheckpoint([{ user: UNSHOWN, reply: `<|call|>{"name":"bm25_search","arguments":${SHORT_FORM}}<|end|>` }], [SEARCH.spec]);
  server = createOpenAIServer({ sampler: loadSampler(checkpoint) });
  const port = await listen(server, 0);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0 });
}, 900_000);

afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

const ask = (user: string, tools: OpenAI.Chat.ChatCompletionTool[] = DECLARED) => ({ model: 'local', messages: [{ role: 'system' as const, content: SYSTEM }, { role: 'user' as const, content: user }], tools, temperature: 0, max_tokens: 60 });

/** The error a request ends in (the test fails if it succeeds). */
async function refusal(request: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await request.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('served tool calls', () => {
  it('come back expanded into the declared arguments, which the tool itself and the advertised JSON Schema accept, plain and streamed', async () => {
    const res = await client.chat.completions.create(ask(USER));
    const call = res.choices[0]!.message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('not a function call');
    // The search suite's own check of bm25_search (unknown keys refused), and zod's reading of the JSON Schema the request declared.
    expect(parseArguments('bm25_search', SEARCH.args, call.function.arguments)).toEqual({ ok: true, value: { query: SEARCHED } });
    const declared = z.fromJSONSchema(DECLARED[0]!.function.parameters as Parameters<typeof z.fromJSONSchema>[0]);
    expect(declared.safeParse(JSON.parse(call.function.arguments)).success).toBe(true);

    let streamed = '';
    for await (const chunk of await client.chat.completions.create({ ...ask(USER), stream: true })) streamed += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
    expect(streamed).toBe(call.function.arguments);
  });

  it('refuse a short form the server cannot expand with an OpenAI-style error naming the call and the reference', async () => {
    const err = await refusal(client.chat.completions.create(ask(UNSHOWN)));
    expect(err.status).toBe(500);
    expect(err.type).toBe('model_error');
    expect(err.code).toBe('invalid_tool_call');
    expect(err.message).toContain(`bm25_search ${SHORT_FORM}`);
    expect(err.message).toMatch(/t: 10 is not a hit shown in this episode/);
    // A greedy request would sample the same call again: the SDK is told not to retry it.
    expect(err.headers?.get('x-should-retry')).toBe('false');
    // The turn as written rides along for sleuth's own openai: agent; other clients ignore it.
    expect((err.error as { sleuth_message?: unknown }).sleuth_message).toMatchObject({ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'bm25_search', arguments: SHORT_FORM }, argument_error: expect.stringMatching(/^t: 10 is not a hit shown/u) }] });
    // Streaming: the same error, before any event.
    const streamed = await refusal(client.chat.completions.create({ ...ask(UNSHOWN), stream: true }));
    expect(streamed.status).toBe(500);
    expect(streamed.message).toMatch(/t: 10 is not a hit shown/);
  });

  it("leave sleuth's openai: agent its episode: the refused call comes back as a call its environment answers with the reason", async () => {
    const agent = new OpenAIAgent({ model: 'local', baseURL: client.baseURL, apiKey: 'unused', maxRetries: 0, temperature: 0 });
    const ctx = { system: SYSTEM, user: UNSHOWN, tools: [SEARCH.spec], budgets: { maxTokensPerTurn: 60 }, sample: 0 } as unknown as AgentContext;
    const turn = await agent.start(ctx).next([]);
    expect(turn.calls).toHaveLength(1);
    expect(turn.calls[0]).toMatchObject({ name: 'bm25_search', arguments: JSON.parse(SHORT_FORM), argumentError: expect.stringMatching(/^t: 10 is not a hit shown/u) });
  });

  it('refuse expanded arguments that the declared schema does not accept, naming the field', async () => {
    const narrow: OpenAI.Chat.ChatCompletionTool = { type: 'function', function: { name: 'bm25_search', parameters: { type: 'object', properties: { query: { type: 'string', maxLength: 5 }, k: { type: 'integer' } }, required: ['query'], additionalProperties: false } } };
    const err = await refusal(client.chat.completions.create(ask(USER, [narrow])));
    expect(err.status).toBe(500);
    expect(err.message).toContain(`bm25_search {"query":"${SEARCHED}"}`);
    expect(err.message).toMatch(/the declared parameters refuse it: query: Too big/);
  });

  it('refuse a declared schema the server cannot check calls against, and fill `param` as OpenAI does', async () => {
    const unreadable: OpenAI.Chat.ChatCompletionTool = { type: 'function', function: { name: 'bm25_search', parameters: { type: 'object', properties: { query: { $ref: '#/$defs/nowhere' } } } } };
    const schema = await refusal(client.chat.completions.create(ask(USER, [unreadable])));
    expect(schema.status).toBe(400);
    expect(schema.param).toBe('tools[0].function.parameters');

    const unsupported = await refusal(client.chat.completions.create({ ...ask(USER), response_format: { type: 'json_object' } }));
    expect(unsupported.status).toBe(400);
    expect(unsupported.code).toBe('unsupported_parameter');
    expect(unsupported.param).toBe('response_format');
    expect(unsupported.type).toBe('invalid_request_error');
    const two = await refusal(client.chat.completions.create({ ...ask(USER), frequency_penalty: 1, presence_penalty: 1 }));
    expect(two.param).toBe('frequency_penalty');
    expect(two.message).toMatch(/unsupported parameters: frequency_penalty, presence_penalty/);
  });
});
