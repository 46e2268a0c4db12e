import { foldUnit } from './fold.js';
import type { Flags, Node, Parsed } from './parse.js';

/**
 * From a parsed regex, a boolean query over literal strings that every match must contain, in the
 * spirit of Russ Cox's "Regular Expression Matching with a Trigram Index" (2012): the same
 * exact/prefix/suffix/match bookkeeping, with whole folded strings where he has trigrams (the index,
 * index.ts, answers a string by the words it must touch).
 *
 * All strings are in the folded form of fold.ts, so a query derived here is satisfied by the folded
 * text of every chunk the regex matches, whatever its case flags. Dropping information is always
 * safe (it only widens the candidate set); every set is capped so analysis stays small.
 */

export type Query = { op: 'all' } | { op: 'lit'; s: string } | { op: 'and'; args: Query[] } | { op: 'or'; args: Query[] };

const ALL: Query = { op: 'all' };

/** Largest exact/prefix/suffix set kept before it is turned into a requirement and forgotten. */
const MAX_SET = 16;
/** Largest explicit class (in members) treated as a set of alternatives rather than "any character". */
const MAX_CLASS = 8;
/** Copies of a fixed-count repeat expanded exactly; beyond this the extra copies add nothing useful. */
const MAX_EXPAND = 4;

interface Info {
  emptyable: boolean;
  /** Every match is one of these strings (null: unknown or too many). */
  exact: Set<string> | null;
  /** Every match starts with one of these (meaningful when exact is null). */
  prefix: Set<string>;
  /** Every match ends with one of these (meaningful when exact is null). */
  suffix: Set<string>;
  match: Query;
}

const EMPTY_SET = (): Set<string> => new Set(['']);

function emptyInfo(): Info {
  return { emptyable: true, exact: EMPTY_SET(), prefix: EMPTY_SET(), suffix: EMPTY_SET(), match: ALL };
}

function anyCharInfo(): Info {
  return { emptyable: false, exact: null, prefix: EMPTY_SET(), suffix: EMPTY_SET(), match: ALL };
}

function exactInfo(strings: Set<string>): Info {
  return { emptyable: strings.has(''), exact: strings, prefix: EMPTY_SET(), suffix: EMPTY_SET(), match: ALL };
}

/**
 * Largest argument list an and/or keeps. Past it an `or` says nothing useful (too many ways to
 * match: the pattern is scanned instead) and an `and` keeps its first conjuncts (dropping a
 * requirement only widens the candidates). This is what keeps analysis linear in the pattern: an
 * alternation of 10,000 words costs a constant per alternative, not a pass over all the others.
 */
export const MAX_ARGS = 32;

type Lit = { op: 'lit'; s: string };

/** Flatten nested `op` nodes into at most `max + 1` arguments (the caller decides what overflow means). */
function flatten(args: Query[], op: 'and' | 'or', max: number): Query[] {
  const flat: Query[] = [];
  for (const a of args) {
    if (a.op === op) {
      for (const b of a.args) if (flat.length <= max) flat.push(b);
    } else if (a.op !== 'all' && flat.length <= max) flat.push(a);
  }
  return flat;
}

/**
 * Drop the literals that `redundant(mine, other)` says another literal already covers, and exact
 * duplicates (the first copy stays). Argument lists are at most MAX_ARGS long, so this is bounded.
 */
function pruneLits(flat: Query[], redundant: (mine: string, other: string) => boolean): Query[] {
  const lits = flat.filter((q): q is Lit => q.op === 'lit').map((q) => q.s);
  const seen = new Set<string>();
  return flat.filter((q) => {
    if (q.op !== 'lit') return true;
    if (seen.has(q.s)) return false;
    seen.add(q.s);
    return !lits.some((other) => other !== q.s && redundant(q.s, other));
  });
}

export function and(...args: Query[]): Query {
  // A conjunction already at the cap stays as it is (its first conjuncts are the ones kept anyway).
  const first = args[0];
  if (first?.op === 'and' && first.args.length >= MAX_ARGS) return first;
  // A required string inside another required string says nothing more: drop it (and duplicates).
  const kept = pruneLits(flatten(args, 'and', MAX_ARGS).slice(0, MAX_ARGS), (mine, other) => other.includes(mine));
  if (kept.length === 0) return ALL;
  return kept.length === 1 ? kept[0]! : { op: 'and', args: kept };
}

export function or(...args: Query[]): Query {
  if (args.some((a) => a.op === 'all')) return ALL;
  const flat = flatten(args, 'or', MAX_ARGS);
  if (flat.length > MAX_ARGS) return ALL;
  // "contains x or contains y" where y contains x is just "contains x": drop y (and duplicates).
  const kept = pruneLits(flat, (mine, other) => mine.includes(other));
  if (kept.length === 0) return ALL;
  return kept.length === 1 ? kept[0]! : { op: 'or', args: kept };
}

/** "The text contains one of these strings"; nothing is known if one of them is empty. */
function anyOf(strings: Iterable<string>): Query {
  const lits: Query[] = [];
  for (const s of strings) {
    if (s === '') return ALL;
    lits.push({ op: 'lit', s });
  }
  return or(...lits);
}

/**
 * Longest string kept in any set. A longer known prefix is cut to its head, a suffix to its tail
 * (each still true of every match), and an exact string that would grow past it stops being exact,
 * so a long literal costs a constant per character instead of copying ever longer strings.
 */
const MAX_LITERAL = 64;

type Keep = 'head' | 'tail';

function cross(a: Set<string>, b: Set<string>, keep?: Keep): Set<string> {
  const out = new Set<string>();
  for (const x of a) {
    for (const y of b) {
      const s = x + y;
      out.add(s.length <= MAX_LITERAL || keep === undefined ? s : keep === 'head' ? s.slice(0, MAX_LITERAL) : s.slice(-MAX_LITERAL));
    }
  }
  return out;
}

const longest = (a: Set<string>): number => {
  let n = 0;
  for (const s of a) n = Math.max(n, s.length);
  return n;
};

function union(a: Set<string>, b: Set<string>): Set<string> {
  return new Set([...a, ...b]);
}

/** The strings a match may begin with / end with. */
const pre = (x: Info): Set<string> => x.exact ?? x.prefix;
const suf = (x: Info): Set<string> => x.exact ?? x.suffix;

/** Turn a known exact set into a requirement plus prefix/suffix, so it can stop growing. */
function demote(x: Info): Info {
  if (!x.exact) return x;
  return { emptyable: x.emptyable, exact: null, prefix: x.exact, suffix: x.exact, match: and(x.match, anyOf(x.exact)) };
}

/** Keep prefix/suffix sets small: what they say is first recorded as a requirement. */
function bound(x: Info): Info {
  if (x.exact && x.exact.size > MAX_SET) x = demote(x);
  if (!x.exact) {
    if (x.prefix.size > MAX_SET) x = { ...x, match: and(x.match, anyOf(x.prefix)), prefix: EMPTY_SET() };
    if (x.suffix.size > MAX_SET) x = { ...x, match: and(x.match, anyOf(x.suffix)), suffix: EMPTY_SET() };
  }
  return x;
}

function concat(x: Info, y: Info): Info {
  if (x.exact && y.exact && x.exact.size * y.exact.size <= MAX_SET && longest(x.exact) + longest(y.exact) <= MAX_LITERAL) {
    return { emptyable: x.emptyable && y.emptyable, exact: cross(x.exact, y.exact), prefix: EMPTY_SET(), suffix: EMPTY_SET(), match: and(x.match, y.match) };
  }
  let prefix: Set<string>;
  if (x.exact) prefix = x.exact.size * y.prefix.size <= MAX_SET ? cross(x.exact, pre(y), 'head') : x.exact;
  else prefix = x.emptyable ? union(x.prefix, pre(y)) : x.prefix;
  let suffix: Set<string>;
  if (y.exact) suffix = x.suffix.size * y.exact.size <= MAX_SET ? cross(suf(x), y.exact, 'tail') : y.exact;
  else suffix = y.emptyable ? union(y.suffix, suf(x)) : y.suffix;
  // A match of xy contains, across the join, some suffix of x followed by some prefix of y.
  const across = suf(x).size * pre(y).size <= MAX_SET ? anyOf(cross(suf(x), pre(y))) : ALL;
  const match = and(demote(x).match, demote(y).match, across);
  return bound({ emptyable: x.emptyable && y.emptyable, exact: null, prefix, suffix, match });
}

function alternate(x: Info, y: Info): Info {
  if (x.exact && y.exact) return bound({ ...exactInfo(union(x.exact, y.exact)), emptyable: x.emptyable || y.emptyable, match: or(x.match, y.match) });
  const dx = demote(x);
  const dy = demote(y);
  return bound({
    emptyable: x.emptyable || y.emptyable,
    exact: null,
    prefix: union(pre(x), pre(y)),
    suffix: union(suf(x), suf(y)),
    match: or(dx.match, dy.match),
  });
}

/** The folded strings one code point can match under the given flags, or null if unknown. */
function charStrings(cp: number, flags: Flags): Set<string> | null {
  const s = String.fromCodePoint(cp);
  if (cp < 0x80 || cp === 0x17f || cp === 0x212a) return new Set([String.fromCharCode(foldUnit(cp))]);
  if (!flags.i) return new Set([s]);
  // Under case-insensitive matching a cased character also matches its other cases, which fold.ts
  // does not equate: say nothing about it. (Uncased characters match only themselves in RE2.)
  return s.toLowerCase() === s && s.toUpperCase() === s ? new Set([s]) : null;
}

function classStrings(node: Extract<Node, { type: 'class' }>): Set<string> | null {
  if (node.negated) return null;
  const out = new Set<string>();
  let members = 0;
  for (const it of node.items) {
    if (it.kind === 'shorthand') return null;
    members += it.hi - it.lo + 1;
    if (members > MAX_CLASS) return null;
    for (let cp = it.lo; cp <= it.hi; cp++) {
      const strings = charStrings(cp, node.flags);
      if (!strings) return null;
      for (const s of strings) out.add(s);
    }
  }
  return out;
}

function analyze(node: Node): Info {
  switch (node.type) {
    case 'empty':
    case 'assert':
      return emptyInfo();
    case 'char': {
      const strings = charStrings(node.cp, node.flags);
      return strings ? exactInfo(strings) : anyCharInfo();
    }
    case 'class': {
      const strings = classStrings(node);
      return strings ? exactInfo(strings) : anyCharInfo();
    }
    case 'shorthand':
    case 'any':
      return anyCharInfo();
    case 'concat':
      return node.parts.map(analyze).reduce(concat);
    case 'alt':
      // So many alternatives that no short list of strings can be required: scan, without analysing each.
      if (node.alts.length > MAX_ARGS * MAX_SET) return { ...emptyInfo(), exact: null };
      return node.alts.map(analyze).reduce(alternate);
    case 'group':
    case 'flagged':
      return analyze(node.sub);
    case 'repeat': {
      const sub = analyze(node.sub);
      if (node.max === 0) return emptyInfo();
      if (node.min === 0) return node.max === 1 ? alternate(sub, emptyInfo()) : { ...emptyInfo(), exact: null };
      // x{m,n} with m >= 1: at least min(m, MAX_EXPAND) copies in a row, then possibly more.
      const copies = Math.min(node.min, MAX_EXPAND);
      let info = sub;
      for (let k = 1; k < copies; k++) info = concat(info, sub);
      if (node.max !== node.min || node.min > MAX_EXPAND) info = concat(info, { ...emptyInfo(), exact: null });
      return info;
    }
  }
}

/** The query every match of the parsed regex satisfies (over folded text). */
export function requiredLiterals(parsed: Parsed): Query {
  return demote(bound(analyze(parsed.root))).match;
}
