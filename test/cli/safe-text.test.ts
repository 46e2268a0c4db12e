import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../../src/cli/safe-text.js';

describe('terminalSafe', () => {
  it('shows C0, DEL, C1 and bidi controls instead of sending them', () => {
    expect(terminalSafe('a\u001b]0;t\u0007b')).toBe('a␛]0;t␇b');
    expect(terminalSafe('x\ry')).toBe('x␍y');
    expect(terminalSafe('\u007f\u009b\u202e')).toBe('␡<U+009B><U+202E>');
  });

  it('keeps tabs, keeps newlines only in multiline text, and leaves other text alone', () => {
    expect(terminalSafe('a\tb\nc')).toBe('a\tb␊c');
    expect(terminalSafe('a\tb\nc', { multiline: true })).toBe('a\tb\nc');
    expect(terminalSafe('Zürich — 東京 🙂')).toBe('Zürich — 東京 🙂');
  });
});
