import type { ToolResult, ToolSpec } from '../../env/types.js';
import type { ParseOptions, ParsedCall, ParsedTurn, Renderer, WrittenTurn } from '../types.js';
import { parseQwen3Turn } from './parse.js';
import { assistantOpen, systemTurn, toolCallText, toolResponsesParts, userTurnParts } from './format.js';
import { QWEN3, qwenDecode, qwenEncode, qwenEncodeFramed } from './tokenizer.js';

/**
 * The Hermes / Qwen3 renderer: `<tool_call>{json}</tool_call>` with the real Qwen3 tokenizer.
 *
 * Reasoning in history, as the official chat template handles it: the template drops the `<think>`
 * block of every assistant turn before the last real user query, and drops even an empty block
 * (the one `enable_thinking=False` pre-fills) from every turn but the last. Re-rendering a
 * transcript would therefore rewrite tokens the model already produced. So the episode is stitched
 * by hand: the prompt is the template's, each turn appends the sampled tokens as they are, and
 * toolResults() appends exactly what the template writes after a turn (`\n`, the merged
 * `<tool_response>` user turn) plus the generation prompt, including the empty think block when
 * thinking is off. The test checks this against the template, with the template's drops undone.
 */
export interface Qwen3RendererOptions {
  /**
   * false (default, the tutorial's `enable_thinking=False`): every assistant turn opens with an
   * empty `<think>\n\n</think>\n\n`. true: the model writes its own `<think>` block.
   */
  thinking?: boolean;
}

export class Qwen3Renderer implements Renderer {
  readonly name: string = 'qwen3';
  readonly stopTokens = [QWEN3.imEnd, QWEN3.endOfText];
  protected readonly thinking: boolean;

  constructor(options: Qwen3RendererOptions = {}) {
    this.thinking = options.thinking ?? false;
  }

  prompt(input: { system: string; user: string; tools: ToolSpec[] }): number[] {
    return qwenEncodeFramed([systemTurn(input.system, input.tools), ...userTurnParts(input.user), assistantOpen(this.thinking)]);
  }

  parse(sampled: number[], options: ParseOptions = {}): ParsedTurn {
    return parseQwen3Turn(sampled, options);
  }

  toolResults(sampled: number[], results: { call: ParsedCall; result: ToolResult }[]): number[] {
    // No calls (e.g. a turn of plain text the environment lets pass): the next assistant turn follows.
    if (results.length === 0) return qwenEncode(this.closing(sampled) + assistantOpen(this.thinking));
    const contents = results.map((r) => r.result.content);
    return qwenEncodeFramed([this.closing(sampled), ...toolResponsesParts(contents), assistantOpen(this.thinking)]);
  }

  userTurn(sampled: number[], text: string): number[] {
    return qwenEncodeFramed([this.closing(sampled), ...userTurnParts(text), assistantOpen(this.thinking)]);
  }

  /**
   * The template's form: with thinking on, a `<think>` block first; then the text and one
   * `<tool_call>` block per call, newline-separated, and `<|im_end|>`. Reasoning is not written
   * when thinking is off (the prompt already holds the empty block).
   */
  writeTurn(turn: WrittenTurn): number[] {
    const think = this.thinking ? `<think>\n${turn.reasoning ?? ''}\n</think>\n\n` : '';
    const blocks = turn.calls.map((c) => toolCallText(c.name, c.arguments ?? {}));
    const text = [turn.text ?? '', ...blocks].filter((part, i) => i > 0 || part !== '').join('\n');
    return [...qwenEncode(think + text), QWEN3.imEnd];
  }

  /** The template ends a turn with `<|im_end|>\n`; a sampler may leave the stop token out. */
  protected closing(sampled: readonly number[]): string {
    const last = sampled.at(-1);
    return last !== undefined && this.stopTokens.includes(last as (typeof this.stopTokens)[number]) ? '\n' : '<|im_end|>\n';
  }

  // Qwen3's byte-level BPE, as it is.
  readonly decode: (tokens: number[]) => string = qwenDecode;
  readonly encode: (text: string) => number[] = qwenEncode;
}

export function createQwen3Renderer(options: Qwen3RendererOptions = {}): Qwen3Renderer {
  return new Qwen3Renderer(options);
}
