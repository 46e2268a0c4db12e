import { decode as decodeO200k, encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_harmony';

/**
 * The o200k_harmony encoding (gpt-oss), as shipped by gpt-tokenizer. Special tokens are emitted
 * by id, never parsed out of text: text is always encoded as ordinary text, so a document that
 * contains "<|end|>" cannot end a message (no injection through tool results).
 */
export const SPECIAL = {
  start: 200006,
  end: 200007,
  message: 200008,
  channel: 200005,
  constrain: 200003,
  return: 200002,
  call: 200012,
} as const;

export type SpecialName = keyof typeof SPECIAL;

/** Tokens that end a message (docs/reference/FORMATS.md §1.1: the parser's terminator set). */
export const TERMINATORS: ReadonlySet<number> = new Set([SPECIAL.end, SPECIAL.return, SPECIAL.call]);

const NO_SPECIAL = new Set<string>();

/** Text to token ids, with any special-token spelling in it encoded as plain text. */
export function encodeText(text: string): number[] {
  return text.length === 0 ? [] : encodeO200k(text, { disallowedSpecial: NO_SPECIAL });
}

export function decodeTokens(tokens: readonly number[]): string {
  return decodeO200k(tokens);
}

/** A piece of a rendering: text, or a special token by name. */
export type Piece = string | { special: SpecialName };

export const sp = (name: SpecialName): Piece => ({ special: name });

/**
 * Encodes pieces, joining adjacent text first so the result equals encoding the whole text with
 * special tokens recognised (the vectors are compared that way).
 */
export function encodePieces(pieces: readonly Piece[]): number[] {
  const out: number[] = [];
  let text = '';
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      text += piece;
      continue;
    }
    out.push(...encodeText(text), SPECIAL[piece.special]);
    text = '';
  }
  out.push(...encodeText(text));
  return out;
}

/**
 * Encodes text in which the seven Harmony special tokens are written out (as in the shared test
 * vectors) to ids. For tests and fixtures; model input is built from pieces.
 */
export function encodeWithSpecials(text: string): number[] {
  const pieces: Piece[] = [];
  let last = 0;
  for (const m of text.matchAll(/<\|(start|end|message|channel|constrain|return|call)\|>/g)) {
    pieces.push(text.slice(last, m.index), { special: m[1] as SpecialName });
    last = m.index + m[0].length;
  }
  pieces.push(text.slice(last));
  return encodePieces(pieces);
}

