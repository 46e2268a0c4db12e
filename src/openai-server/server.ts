import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ToolSpec } from '../env/types.js';
import { asHttpError, checkBody, HttpError, jsonObject, mediaType, readJson } from '../http/request.js';
import { sendJson } from '../http/response.js';
import { localRenderer } from '../protocol/compact/local.js';
import type { CompactRenderer } from '../protocol/compact/renderer.js';
import type { ParsedCall } from '../protocol/types.js';
import type { SampledSequence } from '../backend/types.js';
import type { LocalSampler, SampledToken } from '../backend/local/sampler.js';

/**
 * An OpenAI-compatible HTTP endpoint over a local checkpoint (node:http, 127.0.0.1 by default):
 *   GET  /v1/models, /v1/models/{id}
 *   POST /v1/chat/completions  messages + tools, rendered with the compact format; tool calls come
 *                              back in OpenAI's shape (choices[].message.tool_calls); tool_choice
 *                              none / auto / required / a named function (required and named are
 *                              enforced by writing the call's opening for the model)
 *   POST /v1/completions       a prompt as text or token ids, or a batch of them; logprobs with the
 *                              top alternatives, and the ids themselves in choices[].token_ids (as
 *                              vLLM does)
 * A tool call comes back in the arguments the request's tools declare: the local model's short
 * forms expanded as in training, checked against the declared JSON Schema; one that cannot be is
 * an error (unservable, unservedError). Both take `stop` (strings; cut from the returned text, as OpenAI does), `stream` (server-sent
 * events: completions token by token as they are sampled; chat once the turn is parsed, as role,
 * content and tool-call deltas) and `stream_options.include_usage`. A parameter this server does not
 * implement (response_format, frequency_penalty, echo, ...) is a 400 naming it, never ignored.
 * Sampling yields to the event loop; requests on the one model run one at a time.
 */

const ToolSchema = z.object({
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }),
});

const MessageSchema = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.null(), z.array(z.object({ type: z.string(), text: z.string().optional() }))]).optional(),
  tool_calls: z.array(z.object({ id: z.string().optional(), type: z.literal('function').optional(), function: z.object({ name: z.string(), arguments: z.string() }) })).optional(),
  tool_call_id: z.string().optional(),
});

const Sampling = {
  model: z.string().optional(),
  max_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z.number().int().nullish(),
  seed: z.number().int().nullish(),
  n: z.number().int().min(1).max(64).nullish(),
  stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).strict().nullish(),
  /** An end-user id: OpenAI uses it for abuse monitoring; nothing to do here. */
  user: z.string().optional(),
};

const ToolChoiceSchema = z.union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) })]);

const ChatSchema = z
  .object({
    messages: z.array(MessageSchema).min(1),
    tools: z.array(ToolSchema).nullish(),
    tool_choice: ToolChoiceSchema.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().min(0).max(20).nullish(),
    max_completion_tokens: z.number().int().min(1).nullish(),
    ...Sampling,
  })
  .strict();

const TokenIds = z.array(z.number().int().min(0)).min(1);
const CompletionSchema = z
  .object({
    prompt: z.union([z.string(), z.array(z.string()).min(1), TokenIds, z.array(TokenIds).min(1)]),
    logprobs: z.number().int().min(0).max(5).nullish(),
    ...Sampling,
  })
  .strict();

/** Parameters of OpenAI's API this server does not implement: refused by name unless null / false. */
const UNSUPPORTED_FALSY = new Set(['echo']);

function text(content: z.infer<typeof MessageSchema>['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? '').join('');
  return '';
}

/**
 * The conversation in the compact format, ending with the header of the assistant's next turn.
 * Tool messages are compacted exactly as in training; returns the episode's renderer too, whose id
 * aliases read the model's reply back into chunk ids.
 */
export function renderChat(format: CompactRenderer, messages: z.infer<typeof MessageSchema>[], tools: ToolSpec[]): { tokens: number[]; renderer: CompactRenderer } {
  const renderer = format.forEpisode();
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => text(m.content)).join('\n');
  const rest = messages.filter((m) => m.role !== 'system' && m.role !== 'developer');
  const first = rest[0];
  if (!first || first.role !== 'user') throw new HttpError(400, 'messages: the first message after system messages must be from the user');
  const tokens = renderer.prompt({ system, user: text(first.content), tools });
  // The prompt leaves an assistant turn open; every other message closes it.
  let pending = '', open = true;
  for (const m of rest.slice(1)) {
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: safeJson(c.function.arguments) }));
      pending += (open ? '' : '<|assistant|>') + renderer.renderAssistant(text(m.content), calls);
    } else if (m.role === 'tool') pending += `<|tool|>${renderer.renderToolContent(text(m.content))}<|end|>`;
    else pending += `<|user|>${text(m.content)}<|end|>`;
    open = false;
  }
  if (!open) pending += '<|assistant|>';
  return { tokens: [...tokens, ...renderer.encode(pending)], renderer };
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

export interface ServeOptions {
  sampler: LocalSampler;
  port?: number;
  host?: string;
  /** Model name reported in responses (default: the checkpoint path). */
  modelName?: string;
}

type Chunk = Record<string, unknown>;
/** Where a response goes: one JSON body, or server-sent events. */
interface Sink {
  streaming: boolean;
  event(chunk: Chunk): void;
}

export function createOpenAIServer(opts: ServeOptions): Server {
  const { sampler } = opts;
  const format = localRenderer(sampler.tokenizer);
  const model = opts.modelName ?? sampler.modelPath;
  const context = sampler.config.context;
  const modelObject = () => ({ id: model, object: 'model', created: now(), owned_by: 'sleuth' });

  const room = (promptLen: number, asked?: number | null) => {
    const left = context - promptLen;
    // OpenAI's code for it, so a client can end the episode on its context as the local agent does.
    if (left < 1) throw new HttpError(400, `prompt of ${promptLen} tokens fills the model context of ${context}`, {}, 'context_length_exceeded');
    return Math.min(asked ?? 256, left);
  };
  const sampling = (req: z.infer<typeof ChatSchema> | z.infer<typeof CompletionSchema>) => ({
    temperature: req.temperature ?? 1,
    ...(req.top_p != null ? { topP: req.top_p } : {}),
    ...(req.top_k != null ? { topK: req.top_k } : {}),
    ...(req.seed != null ? { seed: req.seed } : {}),
  });
  const stopsOf = (stop: string | string[] | null | undefined) => (stop == null ? [] : typeof stop === 'string' ? [stop] : stop);

  const chat = async (body: unknown, sink: Sink) => {
    const req = checkBody(ChatSchema, body, 'request body', 400);
    const declared: ToolSpec[] = (req.tools ?? []).map((t) => ({ name: t.function.name, description: t.function.description ?? '', parameters: t.function.parameters ?? {} }));
    const checks = argumentChecks(declared);
    // A refused call would come back the same from a retry of the same seeded or greedy request.
    const deterministic = req.seed != null || req.temperature === 0;
    const choice = req.tool_choice ?? 'auto';
    if (typeof choice === 'object' && !declared.some((t) => t.name === choice.function.name)) throw new HttpError(400, `tool_choice: function '${choice.function.name}' is not among the tools`);
    if (choice === 'required' && !declared.length) throw new HttpError(400, 'tool_choice: required needs at least one tool');
    if (req.top_logprobs && !req.logprobs) throw new HttpError(400, 'top_logprobs: needs logprobs: true');
    // tool_choice none: the model is not shown the tools, and nothing it writes is a call.
    const tools = choice === 'none' ? [] : declared;
    const { tokens: prompt, renderer } = renderChat(format, req.messages, tools);
    // required / named: the turn starts with the call's opening, written for the model.
    const opening = choice === 'required' ? '<|call|>' : typeof choice === 'object' ? `<|call|>{"name":${JSON.stringify(choice.function.name)},"arguments":` : '';
    const forced = opening ? renderer.encode(opening) : [];
    const full = [...prompt, ...forced];
    const stops = stopsOf(req.stop);
    const seqs = await sampler.sample(full, { maxTokens: room(full.length, req.max_completion_tokens ?? req.max_tokens), stop: renderer.stopTokens, stopStrings: stops, ...(req.top_logprobs ? { topLogprobs: req.top_logprobs } : {}), ...sampling(req) }, req.n ?? 1);
    const id = `chatcmpl-${randomUUID()}`, created = now();
    const choices = seqs.map((s, index) => {
      const turn = renderer.parse([...forced, ...s.tokens]);
      const split = splitCalls(turn.calls, choice === 'none' ? [] : tools);
      const calls = req.parallel_tool_calls === false ? split.calls.slice(0, 1) : split.calls;
      const problems = calls.map((c) => unservable(c, checks));
      const unparsed = split.refused;
      const content = cutAtStop([turn.text, ...unparsed].filter(Boolean).join('\n'), stops);
      const toolCalls = calls.map((c) => ({ id: `call_${randomUUID().slice(0, 12)}`, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } }));
      const finish = calls.length ? 'tool_calls' : s.stopReason === 'stop' ? 'stop' : 'length';
      // Per sampled token (template tokens included), in OpenAI's chat shape.
      const logprobs = req.logprobs ? { content: s.tokens.map((t, i) => tokenLogprob(renderer.decode([t]), s.logprobs[i]!, (s.topLogprobs?.[i] ?? []).map((x) => tokenLogprob(renderer.decode([x.token]), x.logprob)))) } : null;
      return { index, content: content || null, toolCalls, problems, finish, logprobs };
    });
    const bad = choices.find((c) => c.problems.some((p) => p !== undefined));
    if (bad) throw unservedError(bad, deterministic);
    const completion = seqs.reduce((n, s) => n + s.tokens.length, 0);
    const usage = { prompt_tokens: prompt.length, completion_tokens: completion, total_tokens: prompt.length + completion };
    if (!sink.streaming) {
      return sink.event({
        id, object: 'chat.completion', created, model, usage,
        choices: choices.map((c) => ({ index: c.index, message: { role: 'assistant', content: c.content, ...(c.toolCalls.length ? { tool_calls: c.toolCalls } : {}) }, finish_reason: c.finish, logprobs: c.logprobs })),
      });
    }
    const chunk = (index: number, delta: Chunk, finish: string | null = null, logprobs: unknown = null) => sink.event({ id, object: 'chat.completion.chunk', created, model, choices: [{ index, delta, logprobs, finish_reason: finish }] });
    for (const c of choices) {
      chunk(c.index, { role: 'assistant', content: '' });
      if (c.content) for (const piece of pieces(c.content)) chunk(c.index, { content: piece });
      c.toolCalls.forEach((t, k) => {
        chunk(c.index, { tool_calls: [{ index: k, id: t.id, type: 'function', function: { name: t.function.name, arguments: '' } }] });
        for (const piece of pieces(t.function.arguments)) chunk(c.index, { tool_calls: [{ index: k, function: { arguments: piece } }] });
      });
      chunk(c.index, {}, c.finish, c.logprobs);
    }
    if (req.stream_options?.include_usage) sink.event({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });
  };

  const complete = async (body: unknown, sink: Sink) => {
    const req = checkBody(CompletionSchema, body, 'request body', 400);
    const raw = req.prompt;
    const prompts: number[][] = typeof raw === 'string' ? [format.encode(raw)] : typeof raw[0] === 'number' ? [raw as number[]] : (raw as (string | number[])[]).map((p) => (typeof p === 'string' ? format.encode(p) : p));
    prompts.forEach((p, k) => {
      if (p.length === 0) throw new HttpError(400, `prompt${prompts.length > 1 ? `[${k}]` : ''} is empty`);
      for (const [i, t] of p.entries()) if (t >= sampler.config.vocabSize) throw new HttpError(400, `prompt${prompts.length > 1 ? `[${k}]` : ''}[${i}] = ${t} is not a token id of this model (vocabulary ${sampler.config.vocabSize})`);
      room(p.length);
    });
    const stops = stopsOf(req.stop);
    const n = req.n ?? 1;
    // A completion ends at the model's end-of-turn token, as a served model ends at its EOS; the
    // token is in token_ids and logprobs, never in the text.
    const endOfTurn = new Set(format.stopTokens);
    const textOf = (tokens: number[]) => cutAtStop(format.decode(endOfTurn.has(tokens.at(-1)!) ? tokens.slice(0, -1) : tokens), stops);
    const id = `cmpl-${randomUUID()}`, created = now();
    const top = req.logprobs ?? 0;
    const logprobsOf = (tokens: number[], lps: number[], tops: SampledSequence['topLogprobs'], startOffset: number) => {
      if (req.logprobs == null) return null;
      const texts = tokens.map((t) => format.decode([t]));
      let off = startOffset;
      const offsets = texts.map((p) => ((off += p.length), off - p.length));
      return { tokens: texts, token_logprobs: lps, top_logprobs: top ? (tops ?? []).map((row) => Object.fromEntries(row.map((x) => [format.decode([x.token]), x.logprob]))) : null, text_offset: offsets };
    };
    const choices: Chunk[] = [];
    let completion = 0;
    for (const [k, prompt] of prompts.entries()) {
      // Streaming: each token goes out as it is sampled (its text once it decodes to whole characters).
      const written = new Map<number, { tokens: number[]; sent: string }>();
      const onToken = sink.streaming
        ? (t: SampledToken) => {
            const w = written.get(t.sample) ?? { tokens: [], sent: '' };
            written.set(t.sample, w);
            w.tokens.push(t.token);
            if (endOfTurn.has(t.token)) return;
            const text = format.decode(w.tokens);
            if (text.endsWith('\uFFFD')) return;
            const cut = cutAtStop(text, stops);
            if (cut.length <= w.sent.length) return;
            const delta = cut.slice(w.sent.length);
            sink.event({ id, object: 'text_completion', created, model, choices: [{ index: k * n + t.sample, text: delta, token_ids: [t.token], finish_reason: null, logprobs: logprobsOf([t.token], [t.logprob], t.top ? [t.top] : undefined, w.sent.length) }] });
            w.sent = cut;
          }
        : undefined;
      const seqs = await sampler.sample(prompt, { maxTokens: room(prompt.length, req.max_tokens ?? 16), stop: format.stopTokens, stopStrings: stops, ...(top ? { topLogprobs: top } : {}), ...sampling(req) }, n, onToken);
      seqs.forEach((s, j) => {
        completion += s.tokens.length;
        const index = k * n + j;
        if (sink.streaming) {
          const w = written.get(j);
          const rest = textOf(s.tokens).slice(w?.sent.length ?? 0);
          sink.event({ id, object: 'text_completion', created, model, choices: [{ index, text: rest, finish_reason: s.stopReason, logprobs: null }] });
          return;
        }
        choices.push({ index, text: textOf(s.tokens), token_ids: s.tokens, finish_reason: s.stopReason, logprobs: logprobsOf(s.tokens, s.logprobs, s.topLogprobs, 0) });
      });
    }
    const promptTokens = prompts.reduce((a, p) => a + p.length, 0);
    const usage = { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
    if (!sink.streaming) return sink.event({ id, object: 'text_completion', created, model, choices, usage });
    if (req.stream_options?.include_usage) sink.event({ id, object: 'text_completion', created, model, choices: [], usage });
  };

  const ROUTES: Record<string, { method: 'GET' | 'POST' }> = { '/v1/models': { method: 'GET' }, '/v1/chat/completions': { method: 'POST' }, '/v1/completions': { method: 'POST' } };

  return createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) res.end();
      else sendJson(res, 500, { error: { message: (err as Error).message, type: 'server_error' } });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    try {
      const route = ROUTES[path] ?? (path.startsWith('/v1/models/') ? { method: 'GET' as const } : undefined);
      if (!route) throw new HttpError(404, `no route ${method} ${path}`);
      if (method !== route.method) throw new HttpError(405, `${method} ${path}: use ${route.method}`, { allow: route.method });
      if (path === '/v1/models') return sendJson(res, 200, { object: 'list', data: [modelObject()] });
      if (path.startsWith('/v1/models/')) {
        const id = decodeURIComponent(path.slice('/v1/models/'.length));
        if (id !== model) throw new HttpError(404, `model '${id}' not found (this server serves '${model}')`, {}, 'model_not_found');
        return sendJson(res, 200, modelObject());
      }
      const type = mediaType(req);
      if (type !== 'application/json') throw new HttpError(415, `Content-Type '${type}' is not accepted: send application/json`);
      const body = refuseUnsupported(jsonObject(await readJson(req)));
      const streaming = body['stream'] === true;
      let single: Chunk | undefined;
      const sink: Sink = {
        streaming,
        event(chunk) {
          if (!streaming) {
            single = chunk;
            return;
          }
          if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
          res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        },
      };
      await (path === '/v1/completions' ? complete(body, sink) : chat(body, sink));
      if (!streaming) return sendJson(res, 200, single);
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      res.end('data: [DONE]\n\n');
    } catch (err) {
      if (res.headersSent) {
        // Mid-stream: an error event, then the end (the status line is already sent).
        res.end(`data: ${JSON.stringify({ error: { message: (err as Error).message, type: 'server_error' } })}\n\n`);
        return;
      }
      const e = asHttpError(err);
      if (e.status >= 500 && !(e instanceof OpenAIError)) throw err;
      const type = e instanceof OpenAIError && e.type ? e.type : e.status === 404 ? 'not_found' : 'invalid_request_error';
      sendJson(res, e.status, { error: { message: e.message, type, param: e instanceof OpenAIError ? e.param : null, code: e.code ?? null, ...(e instanceof OpenAIError ? e.detail : {}) } }, e.headers);
    }
  }
}

/**
 * A 400 naming every parameter of OpenAI's API that this server does not implement; returns the
 * body without the ones that ask for nothing (null, or echo: false).
 */
function refuseUnsupported(body: Record<string, unknown>): Record<string, unknown> {
  const known = new Set([...Object.keys(ChatSchema.shape), ...Object.keys(CompletionSchema.shape)]);
  const entries = Object.entries(body);
  const asksNothing = ([k, v]: [string, unknown]) => v === null || (UNSUPPORTED_FALSY.has(k) && v === false);
  const bad = entries.filter((e) => !known.has(e[0]) && !asksNothing(e)).map(([k]) => k);
  // OpenAI's `param` names one parameter: the first; the message names them all.
  if (bad.length) throw new OpenAIError(400, `unsupported parameter${bad.length > 1 ? 's' : ''}: ${bad.join(', ')} (this server does not implement ${bad.length > 1 ? 'them' : 'it'}; remove ${bad.length > 1 ? 'them' : 'it'})`, { param: bad[0]!, code: 'unsupported_parameter' });
  return Object.fromEntries(entries.filter((e) => known.has(e[0]) || !asksNothing(e)));
}

/**
 * The calls a chat completion returns, and the raw text of those it refuses. A call is returned only
 * when it parsed and names a declared tool; anything else (the model's `{"name":"1-"}}`) goes back
 * as content: a client handed a call to a tool it never declared could not run it.
 */
export function splitCalls(parsed: ParsedCall[], tools: ToolSpec[]): { calls: ParsedCall[]; refused: string[] } {
  const callable = (c: ParsedCall) => c.status !== 'unparseable' && tools.some((t) => t.name === c.name);
  return { calls: parsed.filter(callable), refused: parsed.filter((c) => !callable(c)).map((c) => c.raw) };
}

/**
 * An error in OpenAI's shape, `{"error": {message, type, param, code}}`, with the fields an
 * HttpError lacks: `param`, the request field it is about, and a `type` other than the status's.
 */
export class OpenAIError extends HttpError {
  readonly param: string | null;
  readonly type: string | undefined;
  /** Further fields of the error object (a server's own, which OpenAI clients ignore). */
  readonly detail: Record<string, unknown>;
  constructor(status: number, message: string, o: { param?: string; type?: string; code?: string; headers?: Record<string, string>; detail?: Record<string, unknown> } = {}) {
    super(status, message, o.headers ?? {}, o.code);
    this.param = o.param ?? null;
    this.type = o.type;
    this.detail = o.detail ?? {};
  }
}

/**
 * Each declared tool's arguments as a zod schema read from its JSON Schema (zod's fromJSONSchema):
 * what a served call must satisfy. A schema zod cannot read is the request's error, naming it:
 * the server would otherwise return calls it never checked.
 */
export function argumentChecks(tools: readonly ToolSpec[]): Map<string, z.ZodType> {
  return new Map(
    tools.map((t, i) => {
      try {
        return [t.name, z.fromJSONSchema(Object.keys(t.parameters).length ? (t.parameters as Parameters<typeof z.fromJSONSchema>[0]) : { type: 'object' })];
      } catch (err) {
        const param = `tools[${i}].function.parameters`;
        throw new OpenAIError(400, `${param}: not a JSON Schema this server can check calls against (${(err as Error).message})`, { param, code: 'invalid_value' });
      }
    }),
  );
}

/** Why a call cannot be served: a short form that did not expand (its renderer's reason), or arguments the declared schema refuses. */
export type Unservable = { shortForm: string } | { schema: string };

/**
 * Why a parsed call cannot go to the client in the schema the request declared, if it cannot. The
 * local model writes short forms (`{"t":3,"q":"1-"}`, hit numbers) that the renderer's parse has
 * already expanded into text and chunk ids, exactly as in training (references.ts): one it could
 * not expand (a hit or word the conversation never showed) is left as written, with the reason.
 * Expanded arguments are then checked against the declared JSON Schema.
 */
export function unservable(call: ParsedCall, checks: ReadonlyMap<string, z.ZodType>): Unservable | undefined {
  if (call.argumentError !== undefined) return { shortForm: call.argumentError };
  const parsed = checks.get(call.name)?.safeParse(call.arguments ?? {});
  if (!parsed || parsed.success) return undefined;
  return { schema: parsed.error.issues.slice(0, 3).map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ') };
}

/**
 * A choice with a call that cannot be served: no call a client's tool could run, so the response is
 * an error naming it, as OpenAI answers a model's invalid output (HTTP 500, type model_error).
 * `deterministic`: the same request would sample the same call again, so the client is told not to
 * retry. The error also carries the turn as the model wrote it (`sleuth_message`; a call whose
 * short form did not expand has its reason as `argument_error`), which other clients ignore:
 * sleuth's `openai:` agent hands those calls to its environment, which answers them with an error
 * as it answers the local agent's, and the episode goes on.
 */
function unservedError(c: { content: string | null; toolCalls: { function: { name: string; arguments: string } }[]; problems: (Unservable | undefined)[] }, deterministic: boolean): OpenAIError {
  const k = c.problems.findIndex((p) => p !== undefined);
  const call = c.toolCalls[k]!.function;
  const problem = c.problems[k]!;
  const why = 'shortForm' in problem ? `a short form that does not expand: ${problem.shortForm}` : `the declared parameters refuse it: ${problem.schema}`;
  const toolCalls = c.toolCalls.map((t, i) => {
    const p = c.problems[i];
    return p && 'shortForm' in p ? { ...t, argument_error: p.shortForm } : t;
  });
  return new OpenAIError(500, `the model's call ${call.name} ${call.arguments} cannot be served in the schema the request declared (${why})`, {
    type: 'model_error',
    code: 'invalid_tool_call',
    headers: deterministic ? { 'x-should-retry': 'false' } : {},
    detail: { sleuth_message: { role: 'assistant', content: c.content, tool_calls: toolCalls } },
  });
}

/** The text before the first stop string (OpenAI returns text without the stop sequence). */
function cutAtStop(text: string, stops: string[]): string {
  let end = text.length;
  for (const s of stops) {
    const i = text.indexOf(s);
    if (i >= 0 && i < end) end = i;
  }
  return text.slice(0, end);
}

/** A streamed string in a few pieces (about 16 characters each). */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 16) out.push(text.slice(i, i + 16));
  return out;
}

const now = () => Math.floor(Date.now() / 1000);

function tokenLogprob(token: string, logprob: number, top?: { token: string; logprob: number; bytes: number[] }[]) {
  return { token, logprob, bytes: [...Buffer.from(token, 'utf8')], ...(top ? { top_logprobs: top.map(({ token: t, logprob: l, bytes }) => ({ token: t, logprob: l, bytes })) } : {}) };
}
