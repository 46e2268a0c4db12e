import { format } from 'node:util';

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

/**
 * Make every console line terminal-safe (multiline), whatever a command prints: ids, query ids,
 * run names, task fields, server logs and error messages all come from files or requests someone
 * else wrote, and a field missed at one print site is one escape reaching the terminal. The
 * guard sits where every line passes. Deliberate escapes (the progress line's redraw) and exact
 * output (`--json` through printJson, a TREC run) are written to the streams directly, past it.
 */
let consoleGuarded = false;

export function guardConsole(): void {
  if (consoleGuarded) return;
  consoleGuarded = true;
  for (const name of ['log', 'error', 'warn', 'info'] as const) {
    const write = console[name].bind(console);
    console[name] = (...args: unknown[]) => write(terminalSafe(format(...args), { multiline: true }));
  }
}
