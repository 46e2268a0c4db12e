import type { ToolSpec } from '../../env/types.js';
import type { Untrusted } from './tokenizer.js';

/**
 * The text pieces of the official Qwen3 chat template (docs/reference/FORMATS.md §2.2), written out so an episode
 * can be built turn by turn. test/protocol/qwen3.test.ts renders the same conversations with the
 * template itself (@huggingface/jinja) and checks that the two agree token for token.
 */

/** JSON as Python's json.dumps writes it (the template's `tojson`): `, ` and `: ` separators. */
export function pyJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pyJson).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`).join(', ')}}`;
  }
  throw new TypeError(`cannot write ${typeof value} as JSON`);
}

/** A tool as chat templates and OpenAI-style APIs declare it. */
export function toolDeclaration(tool: ToolSpec): { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } } {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

export function systemTurn(system: string, tools: readonly ToolSpec[]): string {
  if (tools.length === 0) return system ? `<|im_start|>system\n${system}<|im_end|>\n` : '';
  return (
    `<|im_start|>system\n${system ? `${system}\n\n` : ''}# Tools\n\nYou may call one or more functions to assist with the user query.\n\n` +
    'You are provided with function signatures within <tools></tools> XML tags:\n<tools>' +
    tools.map((t) => `\n${pyJson(toolDeclaration(t))}`).join('') +
    '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
  );
}

/** A user turn; the content is variable text (see qwenEncodeFramed). */
export function userTurnParts(content: string): (string | Untrusted)[] {
  return ['<|im_start|>user\n', { untrusted: content }, '<|im_end|>\n'];
}

/** The generation prompt; with thinking off the template pre-fills an empty think block. */
export function assistantOpen(thinking: boolean): string {
  return thinking ? '<|im_start|>assistant\n' : '<|im_start|>assistant\n<think>\n\n</think>\n\n';
}

/** Consecutive tool results merge into one user turn, each in a <tool_response> block. */
export function toolResponsesParts(contents: readonly string[]): (string | Untrusted)[] {
  return ['<|im_start|>user', ...contents.flatMap((c) => ['\n<tool_response>\n', { untrusted: c }, '\n</tool_response>']), '<|im_end|>\n'];
}

/** A call as the template writes it (the form the model is prompted with). */
export function toolCallText(name: string, args: unknown): string {
  return `<tool_call>\n{"name": "${name}", "arguments": ${pyJson(args)}}\n</tool_call>`;
}
