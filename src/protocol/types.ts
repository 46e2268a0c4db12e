import type { CallStatus, ToolResult, ToolSpec } from '../env/types.js';

/** A tool call recovered from model output, with how cleanly it was written. */
export interface ParsedCall {
  name: string;
  arguments: unknown;
  /** ok: the strict parser accepts it; off_form: only the lenient parser does; unparseable: neither. */
  status: CallStatus;
  /** The raw text of the call as written. */
  raw: string;
  /** [start, end) into the sampled tokens. */
  tokenSpan?: [number, number];
  /** Why the strict (or lenient) parser rejected it. */
  problem?: string;
}

export interface ParsedTurn {
  /** Visible text of the turn (reasoning and final message; without the call syntax). */
  text: string;
  calls: ParsedCall[];
  /** The model ended its turn with a final message instead of calls (or an answer for QA). */
  final: boolean;
}

/**
 * Translates between tokens and tool calls for one model family. The episode's token stream is
 * built only by appending: prompt(), then per turn the sampled tokens and toolResults() — each
 * call's output starts exactly where the previous tokens end (the extension property).
 */
export interface Renderer {
  readonly name: string;
  /** System/developer/user messages and the header that opens the assistant's first turn. */
  prompt(input: { system: string; user: string; tools: ToolSpec[] }): number[];
  /** Token ids that end an assistant turn (e.g. Harmony <|call|> and <|return|>, Qwen3 <|im_end|>). */
  readonly stopTokens: number[];
  parse(sampled: number[]): ParsedTurn;
  /**
   * Tokens inserted after an assistant turn: what closes it if the stop token did not, the tool
   * results, and the header that opens the next assistant turn.
   */
  toolResults(sampled: number[], results: { call: ParsedCall; result: ToolResult }[]): number[];
  decode(tokens: number[]): string;
  encode(text: string): number[];
}
