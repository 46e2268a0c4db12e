/**
 * Corpus and model text is data, and a terminal must never run it. An escape sequence stored in a
 * chunk (ESC ] 0 ; title BEL, ESC [ 2 J, an OSC 52 clipboard write), a carriage return that
 * overwrites the line before it, or a bidirectional override that reorders what is shown would
 * otherwise act on the user's terminal when `read`, `grep`, `search`, `play` or the eval report
 * prints it. This is the one place such text is made safe: every control character becomes a
 * visible stand-in, so the user sees that it is there and nothing acts on it. `--json` output
 * bypasses this (JSON escapes control characters itself, and must stay exact).
 */

/** What C0 controls, DEL, C1 controls and the bidi controls are shown as. */
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
const CONTROLS_BUT_NEWLINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

function visible(ch: string): string {
  const cp = ch.codePointAt(0)!;
  // C0 controls have their own pictures (␛ for ESC, ␍ for CR, ␊ for LF); DEL is ␡.
  if (cp < 0x20) return String.fromCodePoint(0x2400 + cp);
  if (cp === 0x7f) return '\u2421';
  return `<U+${cp.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/**
 * `text` with every control character shown instead of acted on. Tabs stay; newlines stay when
 * `multiline` (a chunk's text, a report), else they are shown too (a title or snippet that must
 * stay on its line).
 */
export function terminalSafe(text: string, options: { multiline?: boolean } = {}): string {
  return text.replace(options.multiline ? CONTROLS_BUT_NEWLINE : CONTROLS, visible);
}
