import { parseChatArguments, toOpenAITools } from '../protocol/json-tools.js';
import OpenAI from 'openai';
import { z } from 'zod';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { InputError } from '../errors.js';
import { findLooseCall } from '../protocol/compact/renderer.js';
import type { Agent, AgentCall, AgentContext, AgentSession, AgentTurn, ToolExchange } from './types.js';
import type { AgentFactory, AgentFactoryContext } from './registry.js';

/**
 * A message-level agent over any OpenAI-compatible chat endpoint (hosted APIs, vLLM, SGLang,
 * llama.cpp server, Ollama): the environment's tools are declared as functions, the model may call
 * several per turn, and each result goes back as a tool message. The API key is read from the
 * environment when the agent is made and lives only in the client: it is never part of the spec,
 * the run config, a rollout, or an error message.
 */
export interface OpenAIAgentOptions {
  model: string;
  /** e.g. http://127.0.0.1:8000/v1; default the SDK's (api.openai.com). */
  baseURL?: string;
  apiKey: string;
  /** The spec recorded in rollouts (no key in it). */
  spec?: string;
  /** Requests in flight at once across all episodes of this agent (default 8). */
  maxConcurrent?: number;
  /** Retries on 429, 5xx, connection errors and timeouts, with exponential backoff (default 4). */
  maxRetries?: number;
  /** Per-request timeout in ms (default 120,000). */
  timeoutMs?: number;
  temperature?: number;
}

/** Counting semaphore: at most `limit` holders; the rest wait in order. */
class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); // the slot passes straight to the next waiter
      else this.active--;
    }
  }
}


class OpenAISession implements AgentSession {
  private readonly messages: ChatCompletionMessageParam[];
  private readonly tools: ChatCompletionTool[];

  constructor(
    private readonly agent: OpenAIAgent,
    private readonly ctx: AgentContext,
  ) {
    this.messages = [
      { role: 'system', content: ctx.system },
      { role: 'user', content: ctx.user },
    ];
    this.tools = toOpenAITools(ctx.tools);
  }

  async next(results: ToolExchange[]): Promise<AgentTurn> {
    for (const { call, result } of results) {
      this.messages.push({ role: 'tool', tool_call_id: call.id ?? '', content: result.content });
    }
    let completion: Pick<OpenAI.Chat.ChatCompletion, 'choices' | 'usage'>;
    try {
      completion = await this.agent.complete({
        model: this.agent.options.model,
        messages: this.messages,
        tools: this.tools,
        parallel_tool_calls: true,
        max_tokens: this.ctx.budgets.maxTokensPerTurn,
        // The episode's seed, moved on each turn, as a local agent seeds each turn: a server that
        // honours `seed` (sleuth serve does) then repeats the episode.
        ...(this.ctx.seed !== undefined ? { seed: (this.ctx.seed + this.messages.length) % 2 ** 31 } : {}),
        ...(this.agent.options.temperature !== undefined ? { temperature: this.agent.options.temperature } : {}),
      });
    } catch (err) {
      // The conversation outgrew the served model's context: the episode ends on its context, as a
      // local agent's does when its prompt leaves no room, rather than in an error.
      if (err instanceof ContextLengthExceeded) return { text: '', calls: [], promptTokens: 0, completionTokens: 0, overBudget: 'context' };
      // `sleuth serve` refused a call it could not serve in the declared schema, and sent the turn
      // as written: its calls go to the environment, which answers a bad one with an error, as it
      // answers the local agent's; the episode goes on.
      if (!(err instanceof UnservedTurn)) throw err;
      completion = { choices: [{ index: 0, message: err.turn, finish_reason: 'tool_calls', logprobs: null }] };
    }
    const choice = completion.choices[0];
    if (!choice) throw new Error(`${this.agent.spec}: the endpoint returned no choices`);
    const message = choice.message;
    const calls: AgentCall[] = [];
    for (const [i, tc] of (message.tool_calls ?? []).entries()) {
      // Some servers omit call ids; the tool message must still name one, so make it up.
      const id = tc.id || `call_${this.messages.length}_${i}`;
      if (tc.type !== 'function') {
        calls.push({ name: '', arguments: {}, status: 'unparseable', id, raw: JSON.stringify(tc), problem: `not a function call (${tc.type})` });
        continue;
      }
      const parsed = parseChatArguments(tc.function.arguments ?? '');
      const argumentError = (tc as { argument_error?: unknown }).argument_error;
      calls.push({ name: tc.function.name, id, raw: tc.function.arguments, ...parsed, ...(typeof argumentError === 'string' ? { argumentError } : {}) });
    }
    // A call written as text instead of a tool call (a drift of small served models): off-form, as
    // the token-level parsers count it, and carried out, so the episode does not end as a finish.
    if (!calls.length && message.content) {
      const loose = findLooseCall(message.content);
      if (loose && this.ctx.tools.some((t) => t.name === loose.name)) {
        const id = `call_${this.messages.length}_text`;
        if (typeof loose.arguments === 'object' && loose.arguments !== null && !Array.isArray(loose.arguments)) calls.push({ name: loose.name, arguments: loose.arguments, status: 'off_form', id, raw: loose.raw, problem: 'call written as text, not as a tool call' });
        else calls.push({ name: loose.name, arguments: loose.arguments, status: 'unparseable', id, raw: loose.raw, problem: 'call written as text, with arguments that are not an object' });
      }
    }
    // Echo the assistant turn back as the API expects, with the ids the tool messages will use.
    this.messages.push({
      role: 'assistant',
      content: message.content ?? '',
      ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id!, type: 'function' as const, function: { name: c.name, arguments: typeof c.raw === 'string' ? c.raw : JSON.stringify(c.arguments) } })) } : {}),
    });
    const turn: AgentTurn = {
      text: message.content ?? '',
      calls,
      promptTokens: completion.usage?.prompt_tokens ?? 0,
      completionTokens: completion.usage?.completion_tokens ?? 0,
    };
    if (choice.finish_reason === 'length') turn.overBudget = 'tokens';
    return turn;
  }
}

/** The endpoint refused the conversation as longer than the model's context (OpenAI's context_length_exceeded). */
export class ContextLengthExceeded extends Error {}

const UnservedMessageSchema = z.object({
  role: z.literal('assistant'),
  content: z.string().nullable(),
  tool_calls: z.array(z.object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }), argument_error: z.string().optional() })).min(1),
});

/**
 * `sleuth serve`'s model_error for a call it cannot serve in the declared schema (code
 * invalid_tool_call), with the turn as the model wrote it (`sleuth_message`).
 */
export class UnservedTurn extends Error {
  constructor(
    message: string,
    readonly turn: OpenAI.Chat.ChatCompletionMessage,
  ) {
    super(message);
  }
}

export class OpenAIAgent implements Agent {
  readonly spec: string;
  private readonly client: OpenAI;
  private readonly limiter: Limiter;

  constructor(readonly options: OpenAIAgentOptions) {
    this.spec = options.spec ?? `openai:${options.model}${options.baseURL ? `@${options.baseURL}` : ''}`;
    this.client = new OpenAI({
      apiKey: options.apiKey,
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      maxRetries: options.maxRetries ?? 4,
      timeout: options.timeoutMs ?? 120_000,
    });
    this.limiter = new Limiter(options.maxConcurrent ?? 8);
  }

  /** One chat completion, within the concurrency limit; the SDK retries 429/5xx/timeouts with backoff. */
  complete(body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming): Promise<OpenAI.Chat.ChatCompletion> {
    return this.limiter.run(async () => {
      try {
        return await this.client.chat.completions.create(body);
      } catch (err) {
        if (err instanceof OpenAI.APIError && err.code === 'context_length_exceeded') throw new ContextLengthExceeded(`${this.spec}: ${err.message}`.slice(0, 500));
        const unserved = err instanceof OpenAI.APIError && err.code === 'invalid_tool_call' ? UnservedMessageSchema.safeParse((err.error as { sleuth_message?: unknown } | undefined)?.sleuth_message) : undefined;
        if (unserved?.success) throw new UnservedTurn(`${this.spec}: ${(err as Error).message}`.slice(0, 500), { ...unserved.data, refusal: null } as OpenAI.Chat.ChatCompletionMessage);
        // The SDK's messages carry status and body, never the key; keep them short for the rollout.
        const status = err instanceof OpenAI.APIError && err.status ? ` (HTTP ${err.status})` : '';
        throw new Error(`${this.spec}: chat completion failed${status}: ${(err as Error).message}`.slice(0, 500));
      }
    });
  }

  start(ctx: AgentContext): AgentSession {
    return new OpenAISession(this, ctx);
  }
}

/** Options the CLI may pass through the agent factory context. */
export interface OpenAIFactoryOptions {
  /** Name of the environment variable holding the key (default OPENAI_API_KEY). */
  apiKeyEnv?: string;
  maxConcurrent?: number;
  maxRetries?: number;
  timeoutMs?: number;
  temperature?: number;
  /** Where to read the key from (default process.env); tests pass their own. */
  environment?: NodeJS.ProcessEnv;
}

/**
 * `openai:MODEL[@BASE_URL]`. The model name may itself contain ':' (ollama's `qwen3:4b`); the base
 * URL starts at the first '@' followed by http(s)://.
 */
export function parseOpenAISpec(arg: string | undefined, spec: string): { model: string; baseURL?: string } {
  if (!arg) throw new InputError(`agent '${spec}': openai:MODEL[@BASE_URL] needs a model name`);
  const m = /^(.*?)@(https?:\/\/.+)$/u.exec(arg);
  const model = m ? m[1]! : arg;
  if (model === '') throw new InputError(`agent '${spec}': openai:MODEL[@BASE_URL] needs a model name`);
  if (!m && arg.includes('@')) throw new InputError(`agent '${spec}': the base URL after '@' must start with http:// or https://`);
  return m ? { model, baseURL: m[2]! } : { model };
}

export function openAIAgentFromSpec(arg: string | undefined, spec: string, ctx: AgentFactoryContext & { openai?: OpenAIFactoryOptions } = {}): OpenAIAgent {
  const { model, baseURL } = parseOpenAISpec(arg, spec);
  const o = ctx.openai ?? {};
  const envName = o.apiKeyEnv ?? 'OPENAI_API_KEY';
  const key = (o.environment ?? process.env)[envName];
  let apiKey: string;
  if (key && key.trim() !== '') apiKey = key.trim();
  else if (o.apiKeyEnv) throw new InputError(`agent '${spec}': --api-key-env ${envName} names an environment variable that is not set`);
  // Self-hosted servers (vLLM, llama.cpp, Ollama) usually need no key; the hosted default does.
  else if (baseURL) apiKey = 'none';
  else throw new InputError(`agent '${spec}': set OPENAI_API_KEY (or name another variable with --api-key-env) to call the hosted API`);
  const options: OpenAIAgentOptions = { model, apiKey, spec };
  if (baseURL) options.baseURL = baseURL;
  if (o.maxConcurrent !== undefined) options.maxConcurrent = o.maxConcurrent;
  if (o.maxRetries !== undefined) options.maxRetries = o.maxRetries;
  if (o.timeoutMs !== undefined) options.timeoutMs = o.timeoutMs;
  if (o.temperature !== undefined) options.temperature = o.temperature;
  return new OpenAIAgent(options);
}

/** The `openai:` spec's factory (cli/agents.ts's table of model agents). */
export const openAIAgentFactory: AgentFactory = (arg, spec, ctx) => openAIAgentFromSpec(arg, spec, ctx as AgentFactoryContext & { openai?: OpenAIFactoryOptions });
