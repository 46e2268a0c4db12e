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
  /**
   * The renderer could not turn what the model wrote into the tool's arguments (e.g. a reference to
   * a question word that does not exist): the call is not run, and the model gets this message.
   */
  argumentError?: string;
  /** Chat APIs give calls ids (message-level protocols); token-level renderers leave it empty. */
  id?: string;
}

export interface ParsedTurn {
  /** Visible text of the turn (reasoning and final message; without the call syntax). */
  text: string;
  calls: ParsedCall[];
  /** The model ended its turn with a final message instead of calls (or an answer for QA). */
  final: boolean;
  /** Reasoning the model wrote (Harmony analysis channel, Qwen3 <think> block), if any. */
  reasoning?: string;
  /** Turn-level form problems that belong to no single call (e.g. text after <|return|>). */
  problems?: string[];
}

/** A turn to write out in a renderer's canonical form. */
export interface WrittenTurn {
  reasoning?: string;
  /** Visible text before the calls (a preamble), or the final message when there are no calls. */
  text?: string;
  calls: { name: string; arguments: unknown }[];
}

/** How the sampler stopped: at a stop token, or at the per-turn token limit. */
export type StopReason = 'stop' | 'length';

export interface ParseOptions {
  /**
   * Decides unterminated calls (docs/reference/FORMATS.md §1.10 row 13): 'length' makes them unparseable, 'stop'
   * means the sampler ended on a stop token it left out of the returned tokens. Unknown (absent):
   * the lenient parser accepts an unterminated call and the strict one does not (off_form).
   */
  stopReason?: StopReason;
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
  parse(sampled: number[], options?: ParseOptions): ParsedTurn;
  /**
   * Tokens inserted after an assistant turn: what closes it if the stop token did not, the tool
   * results, and the header that opens the next assistant turn.
   */
  toolResults(sampled: number[], results: { call: ParsedCall; result: ToolResult }[]): number[];
  /**
   * Tokens inserted after an assistant turn that made no call: what closes it, a user message
   * (e.g. a nudge, or a QA observation), and the header that opens the next assistant turn.
   */
  userTurn?(sampled: number[], text: string): number[];
  /**
   * The tokens a model following the format exactly would sample for this turn, stop token
   * included: for SFT demonstrations (e.g. from scripted agents) and round-trip tests.
   * parse(writeTurn(t)) gives t's calls with status ok.
   */
  writeTurn?(turn: WrittenTurn): number[];
  decode(tokens: number[]): string;
  encode(text: string): number[];
  /**
   * A renderer for one episode, for formats that keep state across its turns (the compact
   * format's short id aliases); formats without episode state need not implement it. Whoever
   * renders an episode calls it once at the start: `renderer.forEpisode?.() ?? renderer`.
   */
  forEpisode?(): Renderer;
}
