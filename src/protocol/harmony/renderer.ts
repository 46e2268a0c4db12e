import type { ToolResult, ToolSpec } from '../../env/types.js';
import type { ParseOptions, ParsedCall, ParsedTurn, Renderer, WrittenTurn } from '../types.js';
import { isCallMessage, parseHarmonyTurn, splitMessages } from './parse.js';
import { conversationPieces, messagePieces, type HarmonyMessage, type HarmonySystemOptions } from './format.js';
import { SPECIAL, TERMINATORS, decodeTokens, encodePieces, encodeText, sp, type Piece } from './tokens.js';

/**
 * The Harmony renderer for gpt-oss episodes.
 *
 * History and the extension property. Harmony's history rules (docs/reference/FORMATS.md §1.5) drop the analysis
 * of turns that ended in a `final` message and write a finished answer's `<|return|>` as `<|end|>`.
 * An episode is one user query answered through tool calls, and analysis before tool calls is
 * kept until a final message follows, so within an episode the rules keep everything the model
 * wrote: the next prompt is exactly the previous tokens + the sampled tokens + the tool results +
 * `<|start|>assistant`. The only turns the rules would rewrite are ones that end in `final` (or
 * `<|return|>`) when the environment still continues (e.g. a nudge to call `finish`); sleuth keeps
 * those sampled tokens verbatim too, so the stream the sampler saw and the one the trainer scores
 * are the same tokens. A re-rendered transcript differs from the stream only there (and in the
 * header form a model chose), which is why episodes never re-render.
 */
export interface HarmonyRendererOptions extends HarmonySystemOptions {
  /** Tool names the parser resolves bare or glued recipients against, besides those given to prompt(). */
  tools?: readonly string[];
}

export class HarmonyRenderer implements Renderer {
  readonly name = 'harmony';
  readonly stopTokens = [SPECIAL.return, SPECIAL.call];
  /** Every tool name declared in any prompt(): all episodes of a run share one tool set. */
  private readonly declared: Set<string>;

  constructor(private readonly options: HarmonyRendererOptions = {}) {
    this.declared = new Set(options.tools ?? []);
  }

  prompt(input: { system: string; user: string; tools: ToolSpec[] }): number[] {
    for (const tool of input.tools) this.declared.add(tool.name);
    return encodePieces(
      conversationPieces({
        system: this.options,
        developer: { instructions: input.system, tools: input.tools },
        messages: [{ author: 'user', content: input.user }],
      }),
    );
  }

  parse(sampled: number[], options: ParseOptions = {}): ParsedTurn {
    const { messages: _messages, ...turn } = parseHarmonyTurn(sampled, { ...options, declared: this.declared });
    return turn;
  }

  toolResults(sampled: number[], results: { call: ParsedCall; result: ToolResult }[]): number[] {
    const pieces: Piece[] = [...this.closing(sampled)];
    for (const { call, result } of results) {
      pieces.push(
        ...messagePieces({
          author: call.name.includes('.') ? call.name : `functions.${call.name || 'unknown'}`,
          recipient: 'assistant',
          channel: 'commentary',
          content: result.content,
        }),
      );
    }
    pieces.push(sp('start'), 'assistant');
    return encodePieces(pieces);
  }

  userTurn(sampled: number[], text: string): number[] {
    return encodePieces([...this.closing(sampled), ...messagePieces({ author: 'user', content: text }), sp('start'), 'assistant']);
  }

  /**
   * Sleuth's canonical form: analysis, an optional commentary preamble, then one call in the
   * Harmony docs' header order (`<|channel|>commentary to=functions.NAME <|constrain|>json`) ended
   * by `<|call|>`; without calls, a final message ended by `<|return|>`. One call per turn: the
   * sampler stops at the first `<|call|>`.
   */
  writeTurn(turn: WrittenTurn): number[] {
    if (turn.calls.length > 1) throw new Error(`a Harmony turn holds one call (sampling stops at <|call|>), got ${turn.calls.length}`);
    const messages: HarmonyMessage[] = [];
    if (turn.reasoning !== undefined) messages.push({ author: 'assistant', channel: 'analysis', content: turn.reasoning });
    const [call] = turn.calls;
    if (call) {
      if (turn.text) messages.push({ author: 'assistant', channel: 'commentary', content: turn.text });
      messages.push({
        author: 'assistant',
        channel: 'commentary',
        recipient: `functions.${call.name}`,
        contentType: '<|constrain|>json',
        content: JSON.stringify(call.arguments ?? {}),
      });
    } else {
      messages.push({ author: 'assistant', channel: 'final', content: turn.text ?? '', terminator: 'return' });
    }
    // The prompt already opened the first message with `<|start|>assistant`.
    return encodePieces(messages.flatMap((m) => messagePieces(m)).slice(2));
  }

  /** A sampler may leave the stop token out: close the last message the way it was heading. */
  private closing(sampled: readonly number[]): Piece[] {
    const last = sampled.at(-1);
    if (last !== undefined && TERMINATORS.has(last)) return [];
    const lastMessage = splitMessages(sampled).messages.at(-1);
    return [sp(lastMessage && isCallMessage(lastMessage) ? 'call' : 'end')];
  }

  // The o200k_harmony codec, as it is.
  readonly decode: (tokens: number[]) => string = decodeTokens;
  readonly encode: (text: string) => number[] = encodeText;
}

export function createHarmonyRenderer(options: HarmonyRendererOptions = {}): HarmonyRenderer {
  return new HarmonyRenderer(options);
}
