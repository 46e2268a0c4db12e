import type { ParsedCall, ParsedTurn, StopReason } from '../types.js';
import { QWEN3, qwenDecode } from './tokenizer.js';

/**
 * Parsing a Qwen3 (Hermes) turn (docs/reference/FORMATS.md §2.4). `<tool_call>`, `</tool_call>`, `<think>` and
 * `</think>` are single added tokens, so blocks and their token spans are found on ids, not text.
 *
 * ok: every block closed, a JSON object with a string `name` and an object `arguments`.
 * off_form (lenient accepts, strict rejects): an unclosed last block when the sampler stopped on
 * its stop token (or the stop reason is unknown), `arguments` given as a JSON-encoded string or
 * left out, a `<tool_call>` inside `<think>`.
 * unparseable: invalid JSON, no name, a block cut by the token limit.
 */
export function parseQwen3Turn(sampled: readonly number[], options: { stopReason?: StopReason } = {}): ParsedTurn {
  let end = sampled.length;
  while (end > 0 && (sampled[end - 1] === QWEN3.imEnd || sampled[end - 1] === QWEN3.endOfText)) end--;
  const tokens = sampled.slice(0, end);
  const thinkEnd = tokens.indexOf(QWEN3.thinkEnd);
  const calls: ParsedCall[] = [];
  const visible: number[][] = [];
  let i = 0;
  let segmentStart = 0;
  while (i < tokens.length) {
    if (tokens[i] !== QWEN3.toolCall) {
      i++;
      continue;
    }
    visible.push(tokens.slice(segmentStart, i));
    const close = tokens.indexOf(QWEN3.toolCallEnd, i + 1);
    const blockEnd = close < 0 ? tokens.length : close + 1;
    calls.push(parseBlock(tokens, [i, blockEnd], close >= 0, i < thinkEnd, options.stopReason));
    i = segmentStart = blockEnd;
  }
  visible.push(tokens.slice(segmentStart));
  const text = visible
    .map((t) => qwenDecode(t))
    .join('')
    .replace(/<\/?think>/g, '')
    .trim();
  const reasoning = thinkEnd >= 0 ? stripThink(qwenDecode(tokens.slice(0, thinkEnd))) : undefined;
  return { text, calls, final: calls.length === 0, ...(reasoning ? { reasoning } : {}) };
}

function stripThink(text: string): string {
  return text.replace(/^[\s\S]*<think>/, '').replace(/<tool_call>[\s\S]*?(<\/tool_call>|$)/g, '').trim();
}

function parseBlock(
  tokens: readonly number[],
  span: [number, number],
  closed: boolean,
  inThink: boolean,
  stopReason: StopReason | undefined,
): ParsedCall {
  const raw = qwenDecode(tokens.slice(...span));
  const inner = qwenDecode(tokens.slice(span[0] + 1, closed ? span[1] - 1 : span[1]));
  const problems: string[] = [];
  const fatal: string[] = [];
  if (!closed) {
    if (stopReason === 'length') fatal.push('truncated at the token limit');
    else problems.push('unclosed <tool_call>');
  }
  if (inThink) problems.push('<tool_call> inside <think>');
  let name = '';
  let args: unknown = inner;
  let value: unknown;
  try {
    value = JSON.parse(inner);
  } catch {
    fatal.push('invalid JSON');
  }
  if (value !== undefined) {
    const obj = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    if (typeof obj?.['name'] !== 'string' || obj['name'] === '') fatal.push('no function name');
    else name = obj['name'];
    const given = obj?.['arguments'];
    if (obj && !('arguments' in obj)) {
      problems.push('no arguments');
      args = {};
    } else if (typeof given === 'string') {
      args = parseObject(given);
      if (args === undefined) {
        fatal.push('arguments are not a JSON object');
        args = given;
      } else problems.push('arguments JSON-encoded as a string');
    } else if (typeof given === 'object' && given !== null && !Array.isArray(given)) {
      args = given;
    } else if (obj) {
      fatal.push('arguments are not a JSON object');
      args = given;
    }
  }
  const status = fatal.length > 0 ? 'unparseable' : problems.length > 0 ? 'off_form' : 'ok';
  const problem = [...fatal, ...problems].join('; ');
  return { name, arguments: args, status, raw, tokenSpan: span, ...(problem ? { problem } : {}) };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
