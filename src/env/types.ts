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

export type EndReason = 'finish' | 'answer' | 'turns' | 'tokens' | 'context' | 'error';
