/**
 * The search harness as an MCP server (Model Context Protocol, with the official SDK): the six
 * tools of the search environment with their real JSON Schemas, one MCP session = one episode
 * (its own seen, read and curated sets, turn budget and error messages, all those of training: the
 * calls run through runEpisode, see ./episode-session.ts). With a task set, each session is given
 * a task (named in the server's instructions and in the `search_task` prompt) and `finish` returns
 * the reward breakdown, computed as in training and eval.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  isInitializeRequest,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { SearchEnvironment } from '../suites/search/env.js';
import type { Budgets, ToolResult } from '../env/types.js';
import { asHttpError, HttpError, readJson } from '../http/request.js';
import { sendJson } from '../http/response.js';
import type { Rubric } from '../reward/rubric.js';
import type { Task } from '../tasks/task.js';
import { ExternalEpisode, type EpisodeOutcome } from './episode-session.js';

export interface SearchMcpOptions {
  env: SearchEnvironment;
  budgets: Budgets;
  /** Tasks the sessions are given, in order (cycling); none: the client brings its own question. */
  tasks?: Task[];
  /** How `finish` scores a session's episode against its task (with tasks only). */
  rubric?: Rubric;
  /** The server's version, reported at initialize. */
  version: string;
}

/** A session without a task still runs an episode; it is never scored. */
const OPEN_TASK: Task = { id: 'mcp-session', query: "the client's own question", facts: [{ text: 'none', chunkIds: ['none'] }] };

/** MCP tool result of one environment result: an error is a tool error (isError), never a protocol error. */
function toolResult(result: ToolResult, outcome: EpisodeOutcome | undefined, task: Task | undefined): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: result.content }];
  if (outcome) {
    const r = outcome.rollout;
    const summary = {
      episode: { endReason: r.endReason, turns: r.turns.length, curated: r.curated, read: r.read.length, seen: r.trajectory.length },
      ...(task ? { task: task.id } : {}),
      ...(outcome.reward ? { reward: outcome.reward } : {}),
      ...(outcome.rewardError ? { rewardError: outcome.rewardError } : {}),
    };
    content.push({ type: 'text', text: JSON.stringify(summary) });
  }
  return result.outcome === 'error' ? { content, isError: true } : { content };
}

export class SearchMcp {
  private nextTask = 0;

  constructor(private readonly options: SearchMcpOptions) {
    if (options.tasks && options.tasks.length === 0) throw new Error('SearchMcp: an empty task list');
  }

  /** A new MCP server for one session, with its own episode (and task, with a task set). */
  session(): { server: Server; episode: ExternalEpisode } {
    const { env, budgets, tasks, rubric } = this.options;
    const task = tasks ? tasks[this.nextTask++ % tasks.length]! : undefined;
    const episode = new ExternalEpisode(env, task ?? OPEN_TASK, budgets, task ? rubric : undefined);
    const taskLine = task ? `\n\nYour task (${task.id}): ${env.userPrompt(task)}` : '';
    const server = new Server(
      { name: 'sleuth-search', version: this.options.version },
      { capabilities: { tools: {}, prompts: {} }, instructions: `${env.systemPrompt()}${taskLine}` },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: env.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters as { type: 'object' } })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (req) => {
      const { result, outcome } = await episode.call(req.params.name, req.params.arguments ?? {});
      return toolResult(result, outcome, task);
    });
    server.setRequestHandler(ListPromptsRequestSchema, () => ({
      prompts: [{ name: 'search_task', description: task ? `The task of this session (${task.id}) with the harness's instructions.` : "The harness's instructions; give your question as `question`.", arguments: task ? [] : [{ name: 'question', description: 'What to find evidence for.', required: true }] }],
    }));
    server.setRequestHandler(GetPromptRequestSchema, (req) => {
      if (req.params.name !== 'search_task') throw new McpError(ErrorCode.InvalidParams, `no prompt named '${req.params.name}' (prompts: search_task)`);
      const question = task ? env.userPrompt(task) : req.params.arguments?.['question'];
      if (!question) throw new McpError(ErrorCode.InvalidParams, "prompt 'search_task' needs the argument 'question' in a session without a task");
      return { messages: [{ role: 'user', content: { type: 'text', text: `${env.systemPrompt()}\n\n${question}` } }] };
    });
    return { server, episode };
  }

  /**
   * Streamable HTTP on `path` (default /mcp): an initialize request without a session id opens a
   * session (a new server and episode); later requests name it in the Mcp-Session-Id header;
   * DELETE ends it. Requests whose Host is not this machine are refused (DNS rebinding).
   */
  httpServer(path = '/mcp'): HttpServer {
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      const url = (req.url ?? '/').split('?')[0]!;
      if (url !== path) throw new HttpError(404, `no route ${url} (the MCP endpoint is ${path})`);
      const host = (req.headers.host ?? '').replace(/:\d+$/u, '');
      if (!['127.0.0.1', 'localhost', '[::1]'].includes(host)) throw new HttpError(403, `Host '${req.headers.host ?? ''}' is not this machine`);
      const sid = req.headers['mcp-session-id'];
      if (typeof sid === 'string') {
        const transport = sessions.get(sid);
        if (!transport) return rpcError(res, 404, `no session '${sid}' (it ended, or the server restarted): initialize a new one`);
        return transport.handleRequest(req, res);
      }
      if (req.method !== 'POST') return rpcError(res, 400, 'no Mcp-Session-Id header: POST an initialize request to open a session');
      const body = await readJson(req);
      if (!isInitializeRequest(body)) return rpcError(res, 400, 'no Mcp-Session-Id header: the first request of a session is initialize');
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await this.session().server.connect(transport);
      await transport.handleRequest(req, res, body);
    };
    return createServer((req, res) => {
      handle(req, res).catch((err: unknown) => {
        if (res.headersSent) return res.end();
        const e = asHttpError(err);
        if (e.status >= 500) return rpcError(res, e.status, e.message);
        sendJson(res, e.status, { error: e.message }, e.headers);
      });
    });
  }
}

function rpcError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}
