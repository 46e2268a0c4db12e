import { InputError } from '../../errors.js';

/**
 * A parser for Python `re` syntax (as of CPython 3.11, `str` patterns) into a small syntax tree.
 * The tree is what both the RE2 translation (translate.ts) and the literal prefilter (literals.ts)
 * work from, so that the two can never disagree about what a pattern means.
 *
 * Constructs that no linear-time engine can run (backreferences, lookaround, conditionals,
 * possessive and atomic groups) are rejected here with an InputError naming the construct;
 * malformed patterns get Python's own wording plus the position.
 */

/** Flags that change meaning inside a scope. `a` is Python's ASCII flag (\d \w \s \b become ASCII). */
export interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  x: boolean;
  a: boolean;
}

export type Shorthand = 'd' | 'D' | 'w' | 'W' | 's' | 'S';

export type ClassItem = { kind: 'range'; lo: number; hi: number } | { kind: 'shorthand'; which: Shorthand };

export type AssertKind = 'bol' | 'eol' | 'bot' | 'eot' | 'wordb' | 'nwordb';

/** The escapes that assert a position (inside a class, `\b` is a backspace instead). */
const ESCAPED_ASSERTIONS: Readonly<Record<string, AssertKind>> = { A: 'bot', Z: 'eot', b: 'wordb', B: 'nwordb' };

function isShorthand(ch: string): ch is Shorthand {
  return ch.length === 1 && 'dDwWsS'.includes(ch);
}

export type Node =
  | { type: 'empty' }
  /** One code point, matched under the flags in force where it was written. */
  | { type: 'char'; cp: number; flags: Flags }
  | { type: 'class'; items: ClassItem[]; negated: boolean; flags: Flags }
  | { type: 'shorthand'; which: Shorthand; flags: Flags }
  | { type: 'any'; flags: Flags }
  | { type: 'assert'; kind: AssertKind; flags: Flags }
  | { type: 'concat'; parts: Node[] }
  | { type: 'alt'; alts: Node[] }
  | { type: 'repeat'; sub: Node; min: number; max: number; lazy: boolean }
  | { type: 'group'; sub: Node; name?: string; capture: boolean }
  /** A scoped-flags group `(?i-s:...)`: `flags` are the flags in force inside it. */
  | { type: 'flagged'; sub: Node; on: string; off: string };

export interface Parsed {
  root: Node;
  /** Flags set for the whole pattern by leading `(?imsx)` groups. */
  global: Flags;
}

/** Python's MAXREPEAT is far larger; RE2 refuses counts above 1000, so we say so up front. */
export const MAX_REPEAT = 1000;

/** Deepest group nesting accepted: the parser, translator and analysis recurse once per level. */
export const MAX_NESTING = 200;

const FLAG_LETTERS = 'aiLmsux';

const LINEAR_TIME = 'grep uses a linear-time engine (RE2)';

export function parsePythonRegex(pattern: string): Parsed {
  return new Parser(pattern).parse();
}

class Parser {
  private pos = 0;
  private groupCount = 0;
  private readonly groupNames = new Map<string, number>();
  private global: Flags = { i: false, m: false, s: false, x: false, a: false };

  constructor(private readonly src: string) {}

  private fail(problem: string, at = this.pos): never {
    throw new InputError(`invalid regex '${this.src}': ${problem} at position ${at}`);
  }

  private unsupported(construct: string): never {
    throw new InputError(`unsupported regex '${this.src}': ${construct} is not supported: ${LINEAR_TIME}`);
  }

  private peek(offset = 0): string {
    return this.src[this.pos + offset] ?? '';
  }

  private eof(): boolean {
    return this.pos >= this.src.length;
  }

  parse(): Parsed {
    if (this.src.length === 0) throw new InputError('empty regex: give a pattern to search for');
    const root = this.alternation({ ...this.global }, 0);
    if (!this.eof()) {
      // alternation() only stops early at a ')' that has no '('.
      this.fail('unbalanced parenthesis');
    }
    return { root, global: this.global };
  }

  /** Alternatives separated by '|', up to an unmatched ')' or the end. */
  private alternation(flags: Flags, depth: number): Node {
    const alts: Node[] = [];
    for (;;) {
      alts.push(this.sequence(flags, depth, alts.length === 0));
      if (this.peek() !== '|') break;
      this.pos++;
    }
    return alts.length === 1 ? alts[0]! : { type: 'alt', alts };
  }

  private sequence(flags: Flags, depth: number, firstBranch: boolean): Node {
    const parts: Node[] = [];
    // Leading global-flag groups may change flags (notably x) for the rest of the pattern.
    for (;;) {
      if (flags.x) this.skipVerbose();
      if (this.eof()) break;
      const ch = this.peek();
      if (ch === '|' || ch === ')') break;
      const start = this.pos;
      if (ch === '(' && this.peek(1) === '?' && this.isGlobalFlagGroup()) {
        if (depth > 0 || !firstBranch || parts.length > 0 || this.hasNonFlagPrefix(start)) this.fail('global flags not at the start of the expression', start);
        this.readGlobalFlags(flags);
        continue;
      }
      const atom = this.atom(flags, depth);
      if (atom === undefined) continue; // a comment group
      parts.push(this.quantified(atom, flags, start));
    }
    if (parts.length === 0) return { type: 'empty' };
    return parts.length === 1 ? parts[0]! : { type: 'concat', parts };
  }

  /** Whether anything other than global flag groups precedes `at` (Python requires them first). */
  private hasNonFlagPrefix(at: number): boolean {
    return !/^(?:\(\?[aiLmsux]+\))*$/.test(this.src.slice(0, at));
  }

  private isGlobalFlagGroup(): boolean {
    let j = this.pos + 2;
    if (!FLAG_LETTERS.includes(this.src[j] ?? '')) return false;
    while (FLAG_LETTERS.includes(this.src[j] ?? '')) j++;
    return this.src[j] === ')';
  }

  private readGlobalFlags(flags: Flags): void {
    this.pos += 2;
    const letters = this.readFlagLetters(true);
    this.pos++; // ')'
    this.applyFlags(flags, letters, '');
    this.applyFlags(this.global, letters, '');
  }

  private readFlagLetters(allowAsciiFlags: boolean): string {
    const start = this.pos;
    let letters = '';
    while (FLAG_LETTERS.includes(this.peek())) letters += this.src[this.pos++];
    if (letters.includes('L')) this.fail("bad inline flags: cannot use 'L' flag with a str pattern", this.pos);
    if (letters.includes('a') && letters.includes('u')) this.fail("bad inline flags: flags 'a', 'u' and 'L' are incompatible", this.pos);
    if (!allowAsciiFlags && /[aLu]/.test(letters)) this.fail("bad inline flags: cannot turn off flags 'a', 'u' and 'L'", start);
    return letters;
  }

  private applyFlags(flags: Flags, on: string, off: string): void {
    for (const f of on) {
      if (f === 'u') flags.a = false;
      else if (f === 'a' || f === 'i' || f === 'm' || f === 's' || f === 'x') flags[f] = true;
    }
    for (const f of off) if (f === 'i' || f === 'm' || f === 's' || f === 'x') flags[f] = false;
  }

  /** In verbose mode, white space and `#` comments outside classes are not part of the pattern. */
  private skipVerbose(): void {
    for (;;) {
      const ch = this.peek();
      if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f' || ch === '\v') this.pos++;
      else if (ch === '#') {
        while (!this.eof() && this.peek() !== '\n') this.pos++;
      } else return;
    }
  }

  /** One atom; undefined for a `(?#...)` comment, which matches nothing and takes no quantifier. */
  private atom(flags: Flags, depth: number): Node | undefined {
    const ch = this.src[this.pos]!;
    const at = this.pos;
    switch (ch) {
      case '(':
        return this.group(flags, depth);
      case '[':
        this.pos++;
        return this.charClass(flags, at);
      case '.':
        this.pos++;
        return { type: 'any', flags: { ...flags } };
      case '^':
        this.pos++;
        return { type: 'assert', kind: 'bol', flags: { ...flags } };
      case '$':
        this.pos++;
        return { type: 'assert', kind: 'eol', flags: { ...flags } };
      case '\\':
        return this.escape(flags);
      case '*':
      case '+':
      case '?':
        this.fail('nothing to repeat');
      // falls through (fail never returns)
      case '{':
        if (this.repeatBounds() !== undefined) this.fail('nothing to repeat');
        this.pos++;
        return { type: 'char', cp: 0x7b, flags: { ...flags } };
      default: {
        const cp = this.src.codePointAt(this.pos)!;
        this.pos += cp > 0xffff ? 2 : 1;
        return { type: 'char', cp, flags: { ...flags } };
      }
    }
  }

  private group(outer: Flags, depth: number): Node | undefined {
    const open = this.pos;
    this.pos++;
    if (this.peek() !== '?') return this.groupBody({ ...outer }, depth, open, true);
    this.pos++;
    const ch = this.peek();
    if (ch === ':') {
      this.pos++;
      return this.groupBody({ ...outer }, depth, open, false);
    }
    if (ch === '#') {
      const end = this.src.indexOf(')', this.pos);
      if (end < 0) this.fail('missing ), unterminated comment', open);
      this.pos = end + 1;
      return undefined;
    }
    if (ch === 'P') {
      const next = this.peek(1);
      if (next === '<') {
        this.pos += 2;
        return this.namedGroup(outer, depth, open);
      }
      if (next === '=') this.unsupported('the backreference (?P=name)');
      if (next === '>') this.unsupported('the recursion (?P>name)');
      this.fail(`unknown extension ?P${next}`, open + 1);
    }
    if (ch === '=') this.unsupported('lookahead (?=...)');
    if (ch === '!') this.unsupported('negative lookahead (?!...)');
    if (ch === '<') {
      const next = this.peek(1);
      if (next === '=') this.unsupported('lookbehind (?<=...)');
      if (next === '!') this.unsupported('negative lookbehind (?<!...)');
      // (?<name>...) is not Python, but JS, RE2 and PCRE all read it as a named group: accept it.
      this.pos++;
      return this.namedGroup(outer, depth, open);
    }
    if (ch === '(') this.unsupported('the conditional group (?(...)...)');
    if (ch === '>') this.unsupported('the atomic group (?>...)');
    if (FLAG_LETTERS.includes(ch) || ch === '-') return this.scopedFlags(outer, depth, open);
    if (ch === '') this.fail('unexpected end of pattern');
    this.fail(`unknown extension ?${ch}`, open + 1);
  }

  private namedGroup(outer: Flags, depth: number, open: number): Node {
    const end = this.src.indexOf('>', this.pos);
    if (end < 0) this.fail('missing >, unterminated name');
    const name = this.src.slice(this.pos, end);
    if (name === '') this.fail('missing group name');
    if (!/^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u.test(name)) this.fail(`bad character in group name '${name}'`);
    const existing = this.groupNames.get(name);
    if (existing !== undefined) this.fail(`redefinition of group name '${name}' as group ${this.groupCount + 1}; was group ${existing}`, end + 1);
    this.groupNames.set(name, this.groupCount + 1);
    this.pos = end + 1;
    return this.groupBody({ ...outer }, depth, open, true, name);
  }

  private scopedFlags(outer: Flags, depth: number, open: number): Node {
    const on = this.readFlagLetters(true);
    let off = '';
    if (this.peek() === '-') {
      this.pos++;
      off = this.readFlagLetters(false);
      if (off === '') this.fail('missing flag');
    }
    if (this.peek() !== ':') {
      if (this.peek() === ')' && off === '') this.fail('global flags not at the start of the expression', open);
      if (this.eof()) this.fail('missing -, : or )');
      this.fail(`unknown flag`);
    }
    for (const f of on) if (off.includes(f)) this.fail("bad inline flags: flag turned on and off", this.pos);
    this.pos++;
    const inner = { ...outer };
    this.applyFlags(inner, on, off);
    const sub = this.groupBody(inner, depth, open, false);
    return { type: 'flagged', sub, on: on.replace(/[aLu]/g, ''), off };
  }

  private groupBody(flags: Flags, depth: number, open: number, capture: boolean, name?: string): Node {
    if (capture) this.groupCount++;
    if (depth + 1 > MAX_NESTING) this.fail(`groups nested more than ${MAX_NESTING} deep`, open);
    const sub = this.alternation(flags, depth + 1);
    if (this.peek() !== ')') this.fail('missing ), unterminated subpattern', open);
    this.pos++;
    return name === undefined ? { type: 'group', sub, capture } : { type: 'group', sub, capture, name };
  }

  /** `{m}`, `{m,}`, `{,n}`, `{m,n}`, `{,}` at the current position, or undefined if `{` is a literal here. */
  private repeatBounds(): { min: number; max: number; end: number } | undefined {
    const m = /^\{(\d*)(?:(,)(\d*))?\}/.exec(this.src.slice(this.pos, this.pos + 40));
    if (!m || (m[1] === '' && m[2] === undefined)) return undefined;
    const min = m[1] === '' ? 0 : Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    return { min, max, end: this.pos + m[0].length };
  }

  private quantified(atom: Node, flags: Flags, atomStart: number): Node {
    let node = atom;
    let quantified = false;
    for (;;) {
      if (flags.x) this.skipVerbose();
      const ch = this.peek();
      let min: number;
      let max: number;
      const at = this.pos;
      if (ch === '*' || ch === '+' || ch === '?') {
        min = ch === '+' ? 1 : 0;
        max = ch === '?' ? 1 : Infinity;
        this.pos++;
      } else if (ch === '{') {
        const bounds = this.repeatBounds();
        if (!bounds) return node;
        ({ min, max } = bounds);
        if (max < min) this.fail('min repeat greater than max repeat', at + 1);
        if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) this.fail(`repetition count above ${MAX_REPEAT} is not supported`, at);
        this.pos = bounds.end;
      } else {
        return node;
      }
      if (quantified) this.fail('multiple repeat', at);
      if (atom.type === 'empty' || atom.type === 'assert') this.fail('nothing to repeat', at);
      let lazy = false;
      if (this.peek() === '?') {
        lazy = true;
        this.pos++;
      } else if (this.peek() === '+') {
        this.unsupported(`the possessive quantifier ${this.src.slice(at, this.pos + 1)}`);
      }
      node = { type: 'repeat', sub: node, min, max, lazy };
      quantified = true;
      void atomStart;
    }
  }

  // ---- escapes ------------------------------------------------------------------------------

  private escape(flags: Flags): Node {
    const start = this.pos;
    this.pos++; // backslash
    if (this.eof()) this.fail('bad escape (end of pattern)', start);
    const ch = this.peek();
    const f = { ...flags };
    if (Object.hasOwn(ESCAPED_ASSERTIONS, ch)) {
      this.pos++;
      return { type: 'assert', kind: ESCAPED_ASSERTIONS[ch]!, flags: f };
    }
    if (isShorthand(ch)) {
      this.pos++;
      return { type: 'shorthand', which: ch, flags: f };
    }
    if (ch >= '1' && ch <= '9') {
      const octal = /^[0-7]{3}/.exec(this.src.slice(this.pos, this.pos + 3));
      if (octal) return { type: 'char', cp: this.octal(start), flags: f };
      const digits = /^\d{1,2}/.exec(this.src.slice(this.pos))![0];
      if (Number(digits) > this.groupCount) this.fail(`invalid group reference ${digits}`, start + 1);
      this.unsupported(`the backreference \\${digits}`);
    }
    return { type: 'char', cp: this.commonEscape(start, false), flags: f };
  }

  /** Escapes with the same meaning inside and outside classes; returns the code point. */
  private commonEscape(start: number, inClass: boolean): number {
    const ch = this.peek();
    const simple: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92 };
    if (inClass && ch === 'b') {
      this.pos++;
      return 8;
    }
    if (ch in simple) {
      this.pos++;
      return simple[ch]!;
    }
    if (ch === 'x' || ch === 'u' || ch === 'U') {
      const width = ch === 'x' ? 2 : ch === 'u' ? 4 : 8;
      const hex = this.src.slice(this.pos + 1, this.pos + 1 + width);
      if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) this.fail(`incomplete escape \\${ch}${/^[0-9a-fA-F]*/.exec(hex)![0]}`, start);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) this.fail(`bad escape \\${ch}${hex}`, start);
      this.pos += 1 + width;
      return cp;
    }
    if (ch === 'N') this.fail('named Unicode escapes \\N{...} are not supported; write the character or \\uXXXX', start);
    if (ch === '0') return this.octal(start);
    if (/^[0-9A-Za-z]$/.test(ch)) this.fail(`bad escape \\${ch}`, start);
    // Any other escaped character stands for itself.
    const cp = this.src.codePointAt(this.pos)!;
    this.pos += cp > 0xffff ? 2 : 1;
    return cp;
  }

  /** Up to three octal digits at the current position (Python reads `\0`, `\01`, `\012`, `\123`). */
  private octal(start: number): number {
    const digits = /^[0-7]{1,3}/.exec(this.src.slice(this.pos, this.pos + 3))![0];
    const value = parseInt(digits, 8);
    if (value > 0o377) this.fail(`octal escape value \\${digits} outside of range 0-0o377`, start);
    this.pos += digits.length;
    return value;
  }

  // ---- character classes --------------------------------------------------------------------

  private charClass(flags: Flags, open: number): Node {
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.pos++;
    }
    const items: ClassItem[] = [];
    let first = true;
    for (;;) {
      if (this.eof()) this.fail('unterminated character set', open);
      const ch = this.peek();
      if (ch === ']' && !first) {
        this.pos++;
        break;
      }
      first = false;
      const itemStart = this.pos;
      const lo = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== '') {
        this.pos++;
        const hi = this.classAtom();
        if (typeof lo !== 'number' || typeof hi !== 'number') this.fail(`bad character range ${this.src.slice(itemStart, this.pos)}`, itemStart);
        if (hi < lo) this.fail(`bad character range ${this.src.slice(itemStart, this.pos)}`, itemStart);
        items.push({ kind: 'range', lo, hi });
      } else if (typeof lo === 'number') {
        items.push({ kind: 'range', lo, hi: lo });
      } else {
        items.push({ kind: 'shorthand', which: lo });
      }
    }
    return { type: 'class', items, negated, flags: { ...flags } };
  }

  private classAtom(): number | Shorthand {
    if (this.eof()) this.fail('unterminated character set');
    const ch = this.peek();
    if (ch !== '\\') {
      const cp = this.src.codePointAt(this.pos)!;
      this.pos += cp > 0xffff ? 2 : 1;
      return cp;
    }
    const start = this.pos;
    this.pos++;
    if (this.eof()) this.fail('bad escape (end of pattern)', start);
    const e = this.peek();
    if (isShorthand(e)) {
      this.pos++;
      return e;
    }
    if (e >= '1' && e <= '7') return this.octal(start);
    if (e === '8' || e === '9') this.fail(`bad escape \\${e}`, start);
    return this.commonEscape(start, true);
  }
}
