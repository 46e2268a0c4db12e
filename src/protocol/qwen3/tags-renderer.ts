import type { ToolResult, ToolSpec } from '../../env/types.js';
import { TAGS_INSTRUCTIONS, parseTagAction, tagActionToCall } from '../tags.js';
import type { ParseOptions, ParsedCall, ParsedTurn, WrittenTurn } from '../types.js';
import { assistantOpen, userTurnParts } from './format.js';
import { Qwen3Renderer } from './renderer.js';
import { QWEN3, qwenDecode, qwenEncode, qwenEncodeFramed } from './tokenizer.js';

/**
 * Search-R1 tags in the Qwen3 chat format, as Search-R1 runs its QA agent: no tool
 * declarations; the model writes `<search>…</search>` or `<answer>…</answer>` as text, and each
 * result comes back in a user turn inside `<information>…</information>`. The turns are stitched by
 * hand exactly like the Qwen3 renderer (see there), so the stream only grows.
 */
export class Qwen3TagsRenderer extends Qwen3Renderer {
  override readonly name = 'qwen3-tags';

  override prompt(input: { system: string; user: string; tools: ToolSpec[] }): number[] {
    const system = input.system ? `${input.system}\n\n${TAGS_INSTRUCTIONS}` : TAGS_INSTRUCTIONS;
    return qwenEncodeFramed([`<|im_start|>system\n${system}<|im_end|>\n`, ...userTurnParts(input.user), assistantOpen(this.thinking)]);
  }

  override parse(sampled: number[], options: ParseOptions = {}): ParsedTurn {
    let end = sampled.length;
    while (end > 0 && this.stopTokens.includes(sampled[end - 1] as (typeof this.stopTokens)[number])) end--;
    const tokens = sampled.slice(0, end);
    const text = qwenDecode(tokens);
    const thinkEnd = tokens.indexOf(QWEN3.thinkEnd);
    // Actions count only after the reasoning block.
    const actionFrom = thinkEnd >= 0 ? qwenDecode(tokens.slice(0, thinkEnd + 1)).length : 0;
    const act = parseTagAction(text.slice(actionFrom));
    const reasoning = thinkEnd >= 0 ? text.slice(0, actionFrom).replace(/<\/?think>/g, '').trim() : undefined;
    const visible = text.slice(actionFrom).trim();
    const base = { text: visible, ...(reasoning ? { reasoning } : {}) };
    if (act.kind === 'none') return { ...base, calls: [], final: true };
    const call = tagActionToCall(text.slice(actionFrom), act)!;
    if (options.stopReason === 'length' && call.status === 'off_form') {
      // An unclosed tag at the token limit is a cut-off action, not one the sampler stopped after.
      call.status = 'unparseable';
      call.problem = 'truncated at the token limit';
    }
    const span: [number, number] = [act.span[0] + actionFrom, act.span[1] + actionFrom];
    return { ...base, calls: [{ ...call, tokenSpan: tokenSpan(tokens, span) }], final: false };
  }

  /** `<search>query</search>` or `<answer>answer</answer>` (the QA tools), after any text. */
  override writeTurn(turn: WrittenTurn): number[] {
    if (turn.calls.length > 1) throw new Error(`a tags turn holds one action, got ${turn.calls.length}`);
    const think = this.thinking ? `<think>\n${turn.reasoning ?? ''}\n</think>\n\n` : '';
    const [call] = turn.calls;
    const args = (call?.arguments ?? {}) as Record<string, unknown>;
    let tag = '';
    if (call?.name === 'search') tag = `<search>${String(args['query'] ?? '')}</search>`;
    else if (call?.name === 'answer') tag = `<answer>${String(args['answer'] ?? '')}</answer>`;
    else if (call) throw new Error(`the tags protocol has no tag for ${JSON.stringify(call.name)} (only search and answer)`);
    return [...qwenEncode(think + [turn.text ?? '', tag].filter(Boolean).join(' ')), QWEN3.imEnd];
  }

  override toolResults(sampled: number[], results: { call: ParsedCall; result: ToolResult }[]): number[] {
    if (results.length === 0) return super.toolResults(sampled, results);
    const content = results.map((r) => `<information>${r.result.content}</information>`).join('\n');
    return this.userTurn(sampled, content);
  }
}

/** Character span in the decoded tokens to the token span that covers it. */
function tokenSpan(tokens: readonly number[], [from, to]: [number, number]): [number, number] {
  const ends = charEnds(tokens);
  let start = 0;
  while (start < tokens.length && ends[start]! <= from) start++;
  let end = start;
  while (end < tokens.length && (end === 0 ? 0 : ends[end - 1]!) < to) end++;
  return [start, end];
}

/** ends[k] = length of the text of tokens[0..k]. Per-token decoding unless a character spans tokens. */
function charEnds(tokens: readonly number[]): number[] {
  const pieces = tokens.map((t) => qwenDecode([t]));
  if (pieces.join('') === qwenDecode(tokens)) {
    let sum = 0;
    return pieces.map((p) => (sum += p.length));
  }
  return tokens.map((_, k) => qwenDecode(tokens.slice(0, k + 1)).replace(/\uFFFD+$/, '').length);
}

export function createQwen3TagsRenderer(options: { thinking?: boolean } = {}): Qwen3TagsRenderer {
  return new Qwen3TagsRenderer(options);
}
