import type { Task } from '../tasks/task.js';

/** The environment speaks tool calls, not tokens: renderers translate between the two. */

/** A JSON Schema object, as declared to models. */
export type JsonSchema = Record<string, unknown>;

export interface ToolSpec {
  name: string;
  /** One line. */
  description: string;
  parameters: JsonSchema;
}

export interface ToolCall {
  name: string;
  /** As the model wrote them; the environment validates. */
  arguments: unknown;
  /** Chat APIs give calls ids; token-level renderers may leave it empty. */
  id?: string;
  /** Why the renderer could not build the arguments (the call is answered with it, not run). */
  argumentError?: string;
}

/** Status of a call after parsing model output (see src/protocol). */
export type CallStatus = 'ok' | 'off_form' | 'unparseable';

/** Status of a call after the environment handled it. */
export type ToolOutcome = 'ok' | 'error';

export interface ToolResult {
  outcome: ToolOutcome;
  /** What the model is shown: JSON text of the result, or a short error. */
  content: string;
  /** Chunk ids that appeared in this result (they join the episode's seen set and trajectory). */
  chunkIds: string[];
  /** For an error: a short machine-readable kind (unknown_tool, bad_arguments, unseen_id, ...). */
  errorKind?: string;
}

/**
 * How an episode ended. `budget`: a search past the environment's search budget, which ends the
 * episode without an answer, as the Wikipedia research-agent tutorial's harness does.
 */
export type EndReason = 'finish' | 'answer' | 'turns' | 'tokens' | 'context' | 'budget' | 'error';

// ---------------------------------------------------------------------------------------------
// Episodes. An Environment is a definition (tools, prompts); start(task) opens one episode whose
// state (seen ids, curated set, trajectory, call log) lives in the EnvEpisode, never in the agent.
// ---------------------------------------------------------------------------------------------

/** Limits of one episode; running out of any ends it, and what was curated is still graded. */
export interface Budgets {
  maxTurns: number;
  /** New tokens the model may write in one turn. */
  maxTokensPerTurn: number;
  /** Prompt plus everything written and inserted so far, in tokens. */
  contextTokens: number;
}

/** Budgets for a large model: 40 turns, 2,048 new tokens per turn, a 30,720-token context. */
export const DEFAULT_BUDGETS: Budgets = { maxTurns: 40, maxTokensPerTurn: 2048, contextTokens: 30720 };

/**
 * An environment's settings from its options: the options over its defaults, and the budgets given,
 * else its own for those settings.
 */
export function environmentSettings<O extends { budgets?: Budgets }>(options: O, defaults: Required<Omit<O, 'budgets'>>, ownBudgets: (settings: Required<Omit<O, 'budgets'>>) => Budgets): { settings: Required<Omit<O, 'budgets'>>; budgets: Budgets } {
  const { budgets, ...rest } = options;
  const settings = { ...defaults, ...rest } as Required<Omit<O, 'budgets'>>;
  return { settings, budgets: budgets ?? ownBudgets(settings) };
}

/** One handled call, in the environment's log. */
export interface ToolLogEntry {
  turn: number;
  name: string;
  arguments: unknown;
  /** How the call was written (from the parser); the environment never sees unparseable calls as ok. */
  status: CallStatus;
  outcome: ToolOutcome;
  errorKind?: string;
  ms: number;
}

export interface EnvEpisode {
  /** Handle one call. Never throws for anything the model wrote: a bad call is an error result. */
  call(call: ToolCall, status?: CallStatus, turn?: number): Promise<ToolResult>;
  /** Close a turn: records the curated set after it (its history per turn). */
  endTurn(): void;
  /** Set once the episode is over by the model's own action (finish, answer). */
  readonly ended: EndReason | undefined;
  /** The model ended a turn with a final message and no calls: how this environment treats it. */
  finalMessage(text: string): EndReason;
  readonly curated: readonly string[];
  readonly curatedHistory: readonly string[][];
  readonly trajectory: readonly string[];
  readonly seen: ReadonlySet<string>;
  readonly read: readonly string[];
  readonly log: readonly ToolLogEntry[];
  /** Final answer, for QA environments. */
  readonly answer: string | undefined;
}

export interface Environment {
  /** e.g. `search`, `qa`. Recorded in every rollout. */
  readonly name: string;
  readonly tools: ToolSpec[];
  /** Budgets this environment suggests when the caller gives none. */
  readonly defaultBudgets: Budgets;
  systemPrompt(): string;
  userPrompt(task: Task): string;
  start(task: Task): EnvEpisode;
}
