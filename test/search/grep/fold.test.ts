import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/**
 * The prefilter's folding (src/search/grep/fold.ts, literals.ts) rests on two facts about RE2's
 * case-insensitive matching. If an RE2 upgrade changed either, the prefilter could skip matching
 * chunks; these tests say so first.
 */
const RE2 = createRequire(import.meta.url)('re2') as new (source: string, flags: string) => { [Symbol.matchAll](s: string): IterableIterator<RegExpMatchArray> };

function allNonAscii(): string {
  let s = '';
  for (let cp = 0x80; cp <= 0x10ffff; cp++) if (cp < 0xd800 || cp > 0xdfff) s += String.fromCodePoint(cp);
  return s;
}

describe('RE2 case folding, as the grep prefilter assumes it', () => {
  const text = allNonAscii();


  it('equates exactly two non-ASCII characters with ASCII letters: U+017F (s) and U+212A (k)', () => {
    const found = [...text.matchAll(new RE2('(?i)[a-z]', 'gu') as unknown as RegExp)].map((m) => m[0].codePointAt(0));
    expect(found).toEqual([0x17f, 0x212a]);
  });

  it('matches an uncased character (lower = upper = itself) only with itself', () => {
    const ranges: string[] = [];
    let others = '';
    let start = -1;
    for (let cp = 0; cp <= 0x110000; cp++) {
      const s = cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : '';
      const uncased = cp >= 0x80 && s !== '' && s.toLowerCase() === s && s.toUpperCase() === s;
      if (uncased) {
        if (start < 0) start = cp;
        continue;
      }
      if (start >= 0) {
        ranges.push(`\\x{${start.toString(16)}}-\\x{${(cp - 1).toString(16)}}`);
        start = -1;
      }
      others += s;
    }
    // Were any uncased character folded with another character, the class would match that one.
    const uncasedClass = new RE2(`(?i)[${ranges.join('')}]`, 'u') as unknown as RegExp;
    expect(others.length).toBeGreaterThan(1000);
    expect(uncasedClass.test(others)).toBe(false);
  });
});
