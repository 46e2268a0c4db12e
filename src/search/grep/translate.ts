import { parsePythonRegex, type ClassItem, type Flags, type Node, type Parsed, type Shorthand } from './parse.js';

/**
 * Python `re` syntax -> RE2 syntax, from the parsed tree.
 *
 * Meaning is kept where RE2 can express it:
 * - `\d`, `\w`, `\s` get Python's Unicode meaning (`\p{Nd}`, `[\p{L}\p{N}_]`, Python's str.isspace set);
 *   under `(?a)` they are ASCII, as in Python.
 * - `\Z` (Python: end of string) becomes RE2's `\z`.
 * - `$` without MULTILINE becomes `(?:\n?\z)`: like Python it matches before a final newline, but the
 *   match then includes that newline (RE2 has no lookahead). Matching is unaffected; only a span is.
 * - `(?x)` verbose patterns lose their white space and comments in the parser; RE2 never sees them.
 * Known drift: `\b` and `\B` are ASCII word boundaries in RE2 (Python's are Unicode); case-insensitive
 * matching uses RE2's simple case folding.
 */

export interface Translation {
  /** RE2 pattern source. */
  source: string;
  /** Flags for the RE2 constructor: always `u`, plus global `i`, `m`, `s` from leading `(?ims)`. */
  flags: string;
}

export function translatePythonRegex(pattern: string): Translation {
  return translateParsed(parsePythonRegex(pattern));
}

export function translateParsed(parsed: Parsed): Translation {
  const g = parsed.global;
  const flags = `${g.i ? 'i' : ''}${g.m ? 'm' : ''}${g.s ? 's' : ''}u`;
  return { source: emit(parsed.root), flags };
}

/** Python's str.isspace() set (Unicode White_Space minus a few, plus the information separators). */
const UNICODE_SPACE: Array<[number, number]> = [
  [0x09, 0x0d],
  [0x1c, 0x20],
  [0x85, 0x85],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
];
const ASCII_SPACE: Array<[number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
];
const ASCII_WORD: Array<[number, number]> = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const ASCII_DIGIT: Array<[number, number]> = [[0x30, 0x39]];
const MAX_CP = 0x10ffff;

function complement(ranges: Array<[number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

let unicodeNonWord: Array<[number, number]> | undefined;

/**
 * Code point ranges outside Python's Unicode `\w` ([\p{L}\p{N}_]), computed once from V8's Unicode
 * tables. Needed only for `\W` inside a class, where RE2 has no way to write "not (L or N or _)"
 * as a class member.
 */
function nonWordRanges(): Array<[number, number]> {
  if (unicodeNonWord) return unicodeNonWord;
  const word = /[\p{L}\p{N}_]/u;
  const ranges: Array<[number, number]> = [];
  let start = -1;
  for (let cp = 0; cp <= MAX_CP + 1; cp++) {
    const outside = cp <= MAX_CP && !word.test(String.fromCodePoint(cp));
    if (outside && start < 0) start = cp;
    else if (!outside && start >= 0) {
      ranges.push([start, cp - 1]);
      start = -1;
    }
  }
  unicodeNonWord = ranges;
  return ranges;
}

/** The members of a shorthand, written to go inside an RE2 `[...]`. */
function shorthandInClass(which: Shorthand, ascii: boolean): string {
  switch (which) {
    case 'd':
      return ascii ? rangesInClass(ASCII_DIGIT) : '\\p{Nd}';
    case 'D':
      return ascii ? rangesInClass(complement(ASCII_DIGIT)) : '\\P{Nd}';
    case 'w':
      return ascii ? rangesInClass(ASCII_WORD) : '\\p{L}\\p{N}_';
    case 'W':
      return rangesInClass(ascii ? complement(ASCII_WORD) : nonWordRanges());
    case 's':
      return rangesInClass(ascii ? ASCII_SPACE : UNICODE_SPACE);
    case 'S':
      return rangesInClass(complement(ascii ? ASCII_SPACE : UNICODE_SPACE));
  }
}

/** A shorthand on its own, outside a class. */
function shorthandAlone(which: Shorthand, ascii: boolean): string {
  if (!ascii && which === 'd') return '\\p{Nd}';
  if (!ascii && which === 'D') return '\\P{Nd}';
  const lower = which.toLowerCase() as Shorthand;
  const negate = which !== lower;
  return `[${negate ? '^' : ''}${shorthandInClass(lower, ascii)}]`;
}

function rangesInClass(ranges: Array<[number, number]>): string {
  return ranges.map(([lo, hi]) => (lo === hi ? classChar(lo) : `${classChar(lo)}-${classChar(hi)}`)).join('');
}

function hexEscape(cp: number): string {
  return `\\x{${cp.toString(16)}}`;
}

/** A code point as an RE2 literal outside a class. */
function literalChar(cp: number): string {
  if ((cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp === 0x5f || cp === 0x20) return String.fromCharCode(cp);
  if (cp < 0x80) return cp > 0x20 && cp < 0x7f ? `\\${String.fromCharCode(cp)}` : hexEscape(cp);
  return isPrintable(cp) ? String.fromCodePoint(cp) : hexEscape(cp);
}

/** A code point inside an RE2 class: every ASCII punctuation escaped, so `[[:x:]]`-style syntax can never form. */
function classChar(cp: number): string {
  return literalChar(cp);
}

function isPrintable(cp: number): boolean {
  if (cp >= 0xd800 && cp <= 0xdfff) return false;
  return /[\p{L}\p{N}\p{P}\p{S}]/u.test(String.fromCodePoint(cp));
}

function emitClass(items: ClassItem[], negated: boolean, ascii: boolean): string {
  const body = items.map((it) => (it.kind === 'range' ? (it.lo === it.hi ? classChar(it.lo) : `${classChar(it.lo)}-${classChar(it.hi)}`) : shorthandInClass(it.which, ascii))).join('');
  return `[${negated ? '^' : ''}${body}]`;
}

function emitAssert(kind: string, flags: Flags): string {
  switch (kind) {
    case 'bol':
      return '^';
    case 'eol':
      return flags.m ? '$' : '(?:\\n?\\z)';
    case 'bot':
      return '\\A';
    case 'eot':
      return '\\z';
    case 'wordb':
      return '\\b';
    default:
      return '\\B';
  }
}

/** Wrap in a non-capturing group when a quantifier would otherwise bind to less than the node. */
function atomic(node: Node, text: string): string {
  switch (node.type) {
    case 'char':
    case 'class':
    case 'any':
    case 'group':
    case 'flagged':
      return text;
    case 'shorthand':
      return text.startsWith('[') || text.length <= 6 ? text : `(?:${text})`;
    default:
      return `(?:${text})`;
  }
}

function emit(node: Node): string {
  switch (node.type) {
    case 'empty':
      return '';
    case 'char':
      return literalChar(node.cp);
    case 'class':
      return emitClass(node.items, node.negated, node.flags.a);
    case 'shorthand':
      return shorthandAlone(node.which, node.flags.a);
    case 'any':
      return '.';
    case 'assert':
      return emitAssert(node.kind, node.flags);
    case 'concat':
      return node.parts.map((p) => (p.type === 'alt' ? `(?:${emit(p)})` : emit(p))).join('');
    case 'alt':
      return node.alts.map(emit).join('|');
    case 'repeat': {
      const sub = atomic(node.sub, emit(node.sub));
      let q: string;
      if (node.min === 0 && node.max === Infinity) q = '*';
      else if (node.min === 1 && node.max === Infinity) q = '+';
      else if (node.min === 0 && node.max === 1) q = '?';
      else if (node.max === Infinity) q = `{${node.min},}`;
      else if (node.min === node.max) q = `{${node.min}}`;
      else q = `{${node.min},${node.max}}`;
      return `${sub}${q}${node.lazy ? '?' : ''}`;
    }
    case 'group': {
      const inner = emit(node.sub);
      if (!node.capture) return `(?:${inner})`;
      return node.name === undefined ? `(${inner})` : `(?P<${node.name}>${inner})`;
    }
    case 'flagged': {
      const on = node.on.replace(/x/g, '');
      const off = node.off.replace(/x/g, '');
      const spec = `${on}${off ? `-${off}` : ''}`;
      return spec ? `(?${spec}:${emit(node.sub)})` : `(?:${emit(node.sub)})`;
    }
  }
}
