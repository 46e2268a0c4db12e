import type { Budgets, CallStatus, Environment, ToolResult, ToolSpec } from '../env/types.js';
import type { Task } from '../tasks/task.js';

/**
 * What acts in an episode. runEpisode (./episode.ts) drives every kind the same way:
 *
 *   const session = await agent.start(ctx);
 *   let turn = await session.next([]);              // first turn: sees the prompts
 *   ... run turn.calls in the environment ...
 *   turn = await session.next(resultsOfThoseCalls);  // each later turn: sees the last turn's results
 *
 * - Token-level agents (a Renderer + a Sampler, ./token-agent.ts) fill the token fields.
 * - Message-level agents (chat APIs) keep their own message list: on next(results) append one
 *   tool message per result (result.content, matched by call.id), call the API, and return the
 *   assistant's text and tool calls (arguments may stay a JSON string; the environment parses it),
 *   with the API's token usage. Set overBudget: 'tokens' when the API stopped at max_tokens.
 * - Scripted agents (./scripted.ts) choose calls from the task and the results they were shown.
 */
export interface AgentCall {
  name: string;
  arguments: unknown;
  /** How cleanly the call was written; chat APIs and scripts give 'ok'. */
  status: CallStatus;
  /** Chat APIs' call id, echoed in the tool message. */
  id?: string;
  raw?: string;
  /** [start, end) into this turn's sampledTokens. */
  tokenSpan?: [number, number];
  problem?: string;
  /** See ParsedCall.argumentError: the call is answered with this error instead of being run. */
  argumentError?: string;
}

export interface AgentTurn {
  /** The turn's visible text (reasoning and message, without call syntax). */
  text: string;
  /** Calls in the order written. A turn with none ends the episode as a final message. */
  calls: AgentCall[];
  /** Token-level agents only: tokens inserted before this turn's sampling (turn 0: the prompt). */
  insertedTokens?: number[];
  sampledTokens?: number[];
  sampledLogprobs?: number[];
  /** Context fed this turn and tokens written, as billed. */
  promptTokens?: number;
  completionTokens?: number;
  /** The turn hit a budget before it ended: its calls are not run and the episode ends. */
  overBudget?: 'tokens' | 'context';
}

export interface ToolExchange {
  call: AgentCall;
  result: ToolResult;
}

export interface AgentSession {
  /** The next turn, given the results of the previous turn's calls (empty for the first turn). */
  next(results: ToolExchange[]): Promise<AgentTurn>;
}

export interface AgentContext {
  task: Task;
  env: Environment;
  system: string;
  user: string;
  tools: ToolSpec[];
  budgets: Budgets;
  /** Index of this sample among the N for its task (seeds sampling). */
  sample: number;
  /**
   * This episode's own sampling seed, when the caller fixes one (an eval derives it from its seed,
   * the task and the sample): the episode then repeats whatever else runs at the same time.
   */
  seed?: number;
}

export interface Agent {
  /** The spec it was made from (`baseline`, `openai:gpt-4o-mini`, ...), recorded in the rollout. */
  readonly spec: string;
  /**
   * The budgets the model behind this agent is made for (a local model's context; a shipped
   * model's training budgets): an eval starts from them, over the environment's defaults.
   */
  readonly budgets?: Partial<Budgets>;
  /** The most tokens the model can hold at once; a context budget above it is refused. */
  readonly contextLimit?: number;
  start(ctx: AgentContext): AgentSession | Promise<AgentSession>;
}
