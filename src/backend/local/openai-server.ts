import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { isInputError } from '../../errors.js';
import type { ToolSpec } from '../../env/types.js';
import { localRenderer } from '../../protocol/compact/local.js';
import type { CompactRenderer } from '../../protocol/compact/renderer.js';
import type { LocalSampler } from './sampler.js';

/**
 * An OpenAI-compatible HTTP endpoint over a local checkpoint (node:http, 127.0.0.1 by default):
 *   GET  /v1/models
 *   POST /v1/chat/completions  messages + tools, rendered with the compact format; tool calls come
 *                              back in OpenAI's shape (choices[].message.tool_calls)
 *   POST /v1/completions       prompt as token ids (or text); logprobs of the sampled tokens, and
 *                              the ids themselves in choices[].token_ids (as vLLM does)
 * Requests are served one at a time: sampling runs on this thread.
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
  max_tokens: z.number().int().min(1).optional(),
  max_completion_tokens: z.number().int().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  top_k: z.number().int().optional(),
  seed: z.number().int().optional(),
  n: z.number().int().min(1).max(64).optional(),
};

const ChatSchema = z.object({ model: z.string().optional(), messages: z.array(MessageSchema).min(1), tools: z.array(ToolSchema).optional(), logprobs: z.boolean().nullable().optional(), ...Sampling });

const CompletionSchema = z.object({
  model: z.string().optional(),
  prompt: z.union([z.string(), z.array(z.number().int().min(0)).min(1)]),
  logprobs: z.number().int().min(0).max(5).nullable().optional(),
  stop: z.union([z.array(z.number().int()), z.array(z.string()), z.string()]).optional(),
  ...Sampling,
});

class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

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
  if (!first || first.role !== 'user') throw new RequestError(400, 'messages: the first message after system messages must be from the user');
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

export function createOpenAIServer(opts: ServeOptions): Server {
  const { sampler } = opts;
  const format = localRenderer(sampler.tokenizer);
  const model = opts.modelName ?? sampler.modelPath;
  const context = sampler.config.context;

  const room = (promptLen: number, asked?: number) => {
    const left = context - promptLen;
    if (left < 1) throw new RequestError(400, `prompt of ${promptLen} tokens fills the model context of ${context}`);
    return Math.min(asked ?? 256, left);
  };

  const chat = (body: unknown) => {
    const req = parse(ChatSchema, body);
    const tools: ToolSpec[] = (req.tools ?? []).map((t) => ({ name: t.function.name, description: t.function.description ?? '', parameters: t.function.parameters ?? {} }));
    const { tokens: prompt, renderer } = renderChat(format, req.messages, tools);
    const seqs = sampler.sampleSync(
      prompt,
      { maxTokens: room(prompt.length, req.max_completion_tokens ?? req.max_tokens), temperature: req.temperature ?? 1, topP: req.top_p, topK: req.top_k, seed: req.seed, stop: renderer.stopTokens },
      req.n ?? 1,
    );
    const choices = seqs.map((s, index) => {
      const turn = renderer.parse(s.tokens);
      const calls = turn.calls.filter((c) => c.status !== 'unparseable');
      const unparsed = turn.calls.filter((c) => c.status === 'unparseable').map((c) => c.raw);
      const content = [turn.text, ...unparsed].filter(Boolean).join('\n');
      return {
        index,
        message: {
          role: 'assistant',
          content: content || null,
          ...(calls.length ? { tool_calls: calls.map((c) => ({ id: `call_${randomUUID().slice(0, 12)}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } })) } : {}),
        },
        finish_reason: calls.length ? 'tool_calls' : s.stopReason === 'stop' ? 'stop' : 'length',
        // Per sampled token (template tokens included), in OpenAI's chat shape.
        logprobs: req.logprobs ? { content: s.tokens.map((t, i) => tokenLogprob(renderer.decode([t]), s.logprobs[i]!)) } : null,
      };
    });
    const completion = seqs.reduce((n, s) => n + s.tokens.length, 0);
    return { id: `chatcmpl-${randomUUID()}`, object: 'chat.completion', created: now(), model, choices, usage: { prompt_tokens: prompt.length, completion_tokens: completion, total_tokens: prompt.length + completion } };
  };

  const complete = (body: unknown) => {
    const req = parse(CompletionSchema, body);
    const prompt = typeof req.prompt === 'string' ? format.encode(req.prompt) : req.prompt;
    for (const [i, t] of prompt.entries()) if (t >= sampler.config.vocabSize) throw new RequestError(400, `prompt[${i}] = ${t} is not a token id of this model (vocabulary ${sampler.config.vocabSize})`);
    const stop = req.stop === undefined ? [] : typeof req.stop === 'string' ? [req.stop] : req.stop;
    const stopIds = stop.map((s) => {
      if (typeof s === 'number') return s;
      const ids = format.encode(s);
      if (ids.length !== 1) throw new RequestError(400, `stop string ${JSON.stringify(s)} is not a single token; give token ids`);
      return ids[0]!;
    });
    const seqs = sampler.sampleSync(prompt, { maxTokens: room(prompt.length, req.max_tokens ?? 16), temperature: req.temperature ?? 1, topP: req.top_p, topK: req.top_k, seed: req.seed, stop: stopIds }, req.n ?? 1);
    const choices = seqs.map((s, index) => {
      const pieces = s.tokens.map((t) => format.decode([t]));
      let off = 0;
      const offsets = pieces.map((p) => ((off += p.length), off - p.length));
      return {
        index,
        text: format.decode(s.tokens),
        token_ids: s.tokens,
        finish_reason: s.stopReason,
        logprobs: req.logprobs === undefined || req.logprobs === null ? null : { tokens: pieces, token_logprobs: s.logprobs, top_logprobs: null, text_offset: offsets },
      };
    });
    const completion = seqs.reduce((n, s) => n + s.tokens.length, 0);
    return { id: `cmpl-${randomUUID()}`, object: 'text_completion', created: now(), model, choices, usage: { prompt_tokens: prompt.length, completion_tokens: completion, total_tokens: prompt.length + completion } };
  };

  return createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, 500, { error: { message: (err as Error).message, type: 'server_error' } }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    try {
      if (req.method === 'GET' && path === '/v1/models') {
        return send(res, 200, { object: 'list', data: [{ id: model, object: 'model', created: now(), owned_by: 'sleuth' }] });
      }
      if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/v1/completions')) {
        const body = await readJson(req);
        return send(res, 200, path === '/v1/completions' ? complete(body) : chat(body));
      }
      throw new RequestError(404, `no route ${req.method} ${path}`);
    } catch (err) {
      if (err instanceof RequestError) return send(res, err.status, { error: { message: err.message, type: err.status === 404 ? 'not_found' : 'invalid_request_error' } });
      if (isInputError(err)) return send(res, 400, { error: { message: err.message, type: 'invalid_request_error' } });
      throw err;
    }
  }
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (!r.success) throw new RequestError(400, `request body: ${r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`);
  return r.data;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > 16 * 1024 * 1024) throw new RequestError(413, 'request body over 16 MB');
    chunks.push(c);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new RequestError(400, 'request body is not valid JSON');
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

const now = () => Math.floor(Date.now() / 1000);

function tokenLogprob(token: string, logprob: number) {
  return { token, logprob, bytes: [...Buffer.from(token, 'utf8')], top_logprobs: [] };
}

/** Listen and resolve with the bound port (port 0 picks a free one). */
export function listen(server: Server, port: number, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePort, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = server.address();
      resolvePort(typeof addr === 'object' && addr ? addr.port : port);
    });
  });
}
