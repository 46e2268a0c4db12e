import { z } from 'zod';
import type { JsonSchema, ToolResult, ToolSpec } from '../env/types.js';
import { repairJson } from './json-repair.js';
import type { ParsedCall, ParsedTurn } from './types.js';

/**
 * JSON tool calls at the message level, for chat APIs that parse calls server-side (OpenAI-style
 * `tools` / `tool_calls`, where `arguments` is a JSON string the model wrote).
 *
 * Status of a call: ok when `arguments` is a JSON object (or the server already gave an object),
 * or an empty string (what chat servers send for a call without parameters); off_form when only
 * the lenient reading recovers an object (a double-encoded string, JSON that needed repair, or an
 * object wrapped in other text, a common drift of small served models); unparseable when there is
 * no function name or no object can be recovered. The `openai:` agent reads calls with these.
 */

export interface OpenAIToolDeclaration {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}

export function toOpenAITools(tools: readonly ToolSpec[]): OpenAIToolDeclaration[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

const chatToolCallSchema = z.object({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.object({ name: z.string(), arguments: z.unknown().optional() }),
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads one `arguments` value (normally a JSON string). */
export function parseChatArguments(given: unknown): Pick<ParsedCall, 'arguments' | 'status' | 'problem'> {
  if (isObject(given)) return { arguments: given, status: 'ok' };
  if (given === undefined || given === null) return { arguments: {}, status: 'off_form', problem: 'no arguments' };
  if (typeof given !== 'string') return { arguments: given, status: 'unparseable', problem: 'arguments are not a JSON object' };
  if (given.trim() === '') return { arguments: {}, status: 'ok' };
  let value: unknown;
  let parsed = true;
  try {
    value = JSON.parse(given);
  } catch {
    parsed = false;
  }
  if (parsed && isObject(value)) return { arguments: value, status: 'ok' };
  if (parsed && typeof value === 'string') {
    const inner = repairJson(value);
    if (inner && isObject(inner.value)) return { arguments: inner.value, status: 'off_form', problem: 'arguments JSON-encoded twice' };
  }
  if (!parsed) {
    const repaired = repairJson(given);
    if (repaired && isObject(repaired.value)) return { arguments: repaired.value, status: 'off_form', problem: 'arguments needed JSON repair' };
    const start = given.indexOf('{');
    const end = given.lastIndexOf('}');
    const wrapped = start >= 0 && end > start ? repairJson(given.slice(start, end + 1)) : undefined;
    if (wrapped && isObject(wrapped.value)) return { arguments: wrapped.value, status: 'off_form', problem: 'JSON object wrapped in other text' };
  }
  return { arguments: given, status: 'unparseable', problem: 'arguments are not a JSON object' };
}

/** Chat API tool_calls to ParsedCalls; a malformed entry becomes an unparseable call, never a throw. */
export function parseChatToolCalls(toolCalls: readonly unknown[]): ParsedCall[] {
  return toolCalls.map((entry, index) => {
    const raw = JSON.stringify(entry) ?? String(entry);
    const shape = chatToolCallSchema.safeParse(entry);
    if (!shape.success) {
      return { name: '', arguments: undefined, status: 'unparseable', raw, problem: `tool call ${index} is not {id, function: {name, arguments}}` };
    }
    const { id, function: fn } = shape.data;
    const args = parseChatArguments(fn.arguments);
    const call: ParsedCall = { name: fn.name, ...args, raw, ...(id !== undefined ? { id } : {}) };
    if (fn.name.trim() === '') return { ...call, status: 'unparseable', problem: 'no function name' };
    return call;
  });
}

/** A chat API assistant message (content and tool_calls) to a ParsedTurn. */
export function parseChatMessage(message: { content?: string | null; tool_calls?: readonly unknown[] | null }): ParsedTurn {
  const calls = parseChatToolCalls(message.tool_calls ?? []);
  return { text: message.content ?? '', calls, final: calls.length === 0 };
}

/** ParsedCalls back to the assistant message's tool_calls (string arguments), for the next request. */
export function toChatToolCalls(calls: readonly ParsedCall[]): ChatToolCall[] {
  return calls.map((c, i) => ({
    id: c.id ?? `call_${i}`,
    type: 'function',
    function: { name: c.name, arguments: c.status === 'unparseable' && typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}) },
  }));
}

/** The `tool` message that answers one call. */
export function toolResultMessage(call: Pick<ParsedCall, 'id'>, result: ToolResult, index = 0): { role: 'tool'; tool_call_id: string; content: string } {
  return { role: 'tool', tool_call_id: call.id ?? `call_${index}`, content: result.content };
}
