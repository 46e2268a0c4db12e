import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OpenAI-compatible HTTP server on 127.0.0.1 for tests: it answers POST
 * /v1/chat/completions from a script of replies, in order, and records every request.
 */
export interface Reply {
  status?: number;
  /** The JSON body; for 200 replies, build it with completion(). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering (a slow or hung server). */
  delayMs?: number;
  /** Hold the reply until this many requests are in flight at once, or `maxMs` has passed. */
  holdUntil?: { inFlight: number; maxMs: number };
}

export interface RecordedRequest {
  body: any;
  authorization: string | undefined;
}

export interface ToolCallSpec {
  name: string;
  /** Passed verbatim: may be malformed on purpose. */
  arguments: string;
  id?: string;
}

let callCounter = 0;

/** A chat completion whose message holds the given tool calls (or only text). */
export function completion(calls: ToolCallSpec[], content = '', usage = { prompt_tokens: 100, completion_tokens: 20 }, finishReason?: string): Reply {
  return {
    body: {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 0,
      model: 'test-model',
      choices: [
        {
          index: 0,
          finish_reason: finishReason ?? (calls.length ? 'tool_calls' : 'stop'),
          message: {
            role: 'assistant',
            content,
            ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id ?? `call_${++callCounter}`, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
          },
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

export class ChatServer {
  readonly requests: RecordedRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private server: Server;
  private script: Reply[] = [];
  /** Used when the script is empty: a function of the request (e.g. for many parallel episodes). */
  fallback: ((body: any) => Reply) | undefined;

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  push(...replies: Reply[]): void {
    this.script.push(...replies);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    this.requests.push({ body, authorization: req.headers.authorization });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const reply = this.script.shift() ?? this.fallback?.(body) ?? { status: 500, body: { error: { message: 'script exhausted' } } };
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (reply.holdUntil) {
        const until = Date.now() + reply.holdUntil.maxMs;
        while (this.maxInFlight < reply.holdUntil.inFlight && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
      }
      if (res.destroyed) return;
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.body ?? {}));
    } finally {
      this.inFlight--;
    }
  }
}
