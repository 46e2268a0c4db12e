import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/errors.js';
import { compilePattern, parsePythonRegex, requiredLiterals, translatePythonRegex } from '../../../src/search/grep/index.js';

/** Whether a Python-syntax pattern finds a match in `text` (re.search semantics), run by RE2. */
const finds = (pattern: string, text: string) => compilePattern(pattern).re.test(Buffer.from(text, 'utf8'));

/** The span of the first match, as JS string offsets. */
function firstMatch(pattern: string, text: string): string | undefined {
  const bytes = Buffer.from(text, 'utf8');
  const m = compilePattern(pattern).re.exec(bytes);
  return m ? m[0].toString('utf8') : undefined;
}

function inputError(pattern: string): string {
  try {
    compilePattern(pattern);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as Error).message;
  }
  throw new Error(`expected '${pattern}' to be rejected`);
}

describe('Python regex syntax, run by RE2', () => {
  it('reads named groups and inline flags', () => {
    expect(translatePythonRegex('(?P<year>\\d{4})')).toEqual({ source: '(?P<year>\\p{Nd}{4})', flags: 'u' });
    expect(translatePythonRegex('(?i)abc').flags).toBe('iu');
    expect(translatePythonRegex('(?i)(?s)abc').flags).toBe('isu');
    expect(firstMatch('(?P<year>\\d{4})-(?P<m>\\d\\d)', 'on 1999-12-31')).toBe('1999-12');
    expect(finds('(?i)corliss\\s+archer', 'Meet CORLISS   Archer')).toBe(true);
    expect(finds('corliss\\s+archer', 'Meet CORLISS Archer')).toBe(false);
  });

  it('scopes flags to (?i:...) and (?-i:...)', () => {
    expect(finds('(?i:ab)c', 'ABc')).toBe(true);
    expect(finds('(?i:ab)c', 'ABC')).toBe(false);
    expect(finds('(?i)a(?-i:b)', 'Ab')).toBe(true);
    expect(finds('(?i)a(?-i:b)', 'AB')).toBe(false);
  });

  it('reads \\A as start and \\Z as end of text (not a literal A, not RE2 syntax)', () => {
    expect(finds('\\Aab', 'abc')).toBe(true);
    expect(finds('\\Aab', 'cab')).toBe(false);
    expect(finds('\\AA', 'xA')).toBe(false);
    expect(finds('bc\\Z', 'abc')).toBe(true);
    expect(finds('bc\\Z', 'abc\n')).toBe(false);
    expect(translatePythonRegex('x\\Z').source).toBe('x\\z');
  });

  it("matches $ at the end and before a final newline, as Python does, and per line with (?m)", () => {
    expect(finds('c$', 'abc')).toBe(true);
    expect(finds('c$', 'abc\n')).toBe(true);
    expect(finds('c$', 'abc\nd')).toBe(false);
    expect(finds('(?m)c$', 'abc\nd')).toBe(true);
    expect(finds('(?m)^d', 'abc\nd')).toBe(true);
    expect(finds('^d', 'abc\nd')).toBe(false);
  });

  it('gives \\d, \\w and \\s their Unicode meaning, and ASCII under (?a)', () => {
    expect(finds('^\\d+$', '\u0663\u0664')).toBe(true); // Arabic-Indic digits
    expect(finds('^\\w+$', 'café_Ωmega')).toBe(true);
    expect(finds('^\\s$', '\u00a0')).toBe(true);
    expect(finds('^\\s$', '\u3000')).toBe(true);
    expect(finds('^\\s$', '\x1c')).toBe(true); // str.isspace() counts the information separators
    expect(finds('(?a)^\\w+$', 'café')).toBe(false);
    expect(finds('(?a)^\\d$', '\u0663')).toBe(false);
    expect(finds('(?a)^\\s$', '\u00a0')).toBe(false);
    expect(finds('^\\S+$', 'a\u00a0b')).toBe(false);
    expect(finds('^\\D$', '\u0663')).toBe(false);
  });

  it('handles negated shorthands inside classes ([^\\W\\d_] is "letters")', () => {
    expect(firstMatch('[^\\W\\d_]+', '__42Ωmega7')).toBe('Ωmega');
    expect(finds('^[\\W]$', 'é')).toBe(false);
    expect(finds('^[\\W]$', '-')).toBe(true);
    expect(finds('^[\\S]+$', 'ab\u00a0')).toBe(false);
    expect(finds('^[\\s\\S]$', '\n')).toBe(true);
  });

  it('strips white space and comments in verbose (?x) patterns, but keeps them inside classes', () => {
    expect(finds('(?x) kiss \\  and  # a comment\n tell', 'kiss andtell')).toBe(true);
    expect(finds('(?x) kiss \\  and  # a comment\n tell', 'kiss and tell')).toBe(false);
    expect(finds('(?x)a[ ]b', 'a b')).toBe(true);
    expect(finds('(?x)a b', 'a b')).toBe(false);
    expect(finds('(?x:a b)c', 'abc')).toBe(true);
  });

  it('reads {,n}, literal braces, escapes and dot as Python does', () => {
    expect(translatePythonRegex('a{,3}').source).toBe('a{0,3}');
    expect(finds('x{2', 'x{2')).toBe(true);
    expect(finds('x{a}', 'x{a}')).toBe(true);
    expect(finds('\\x41\\u00e9\\U0001F600\\101\\0', 'Aé😀A\0')).toBe(true);
    expect(finds('a.c', 'a\rc')).toBe(true);
    expect(finds('a.c', 'a\nc')).toBe(false);
    expect(finds('(?s)a.c', 'a\nc')).toBe(true);
    expect(finds('[[:alpha:]]', 'x')).toBe(false); // Python: a class of "[:alph" then a literal "]"
    expect(finds('[[:alpha:]]', 'a]')).toBe(true);
    expect(finds('[]a]', ']')).toBe(true);
    expect(finds('a[-x]b', 'a-b')).toBe(true);
    expect(finds('(?#note)ab', 'ab')).toBe(true);
    expect(finds('a\\/b\\.c', 'a/b.c')).toBe(true);
  });

  it('returns promptly on patterns that are catastrophic for backtracking engines', () => {
    expect(finds('(a+)+$', 'a'.repeat(50_000) + 'b')).toBe(false);
    expect(finds('(x+x+)+y', 'x'.repeat(50_000))).toBe(false);
  });

  it.each([
    ['(?<=a)b', 'lookbehind (?<=...)'],
    ['(?<!a)b', 'negative lookbehind (?<!...)'],
    ['a(?=b)', 'lookahead (?=...)'],
    ['a(?!b)', 'negative lookahead (?!...)'],
    ['(a)\\1', 'backreference \\1'],
    ['(?P<n>a)(?P=n)', 'backreference (?P=name)'],
    ['(a)?(?(1)b|c)', 'conditional group'],
    ['(?>ab)', 'atomic group'],
    ['a++', 'possessive quantifier ++'],
    ['a{2,3}+', 'possessive quantifier {2,3}+'],
  ])('rejects %s, naming the construct and why', (pattern, construct) => {
    const msg = inputError(pattern);
    expect(msg).toContain(construct);
    expect(msg).toContain(pattern);
    expect(msg).toContain('linear-time');
  });

  it.each([
    ['a(b', 'missing ), unterminated subpattern at position 1'],
    ['ab)', 'unbalanced parenthesis at position 2'],
    ['[ab', 'unterminated character set at position 0'],
    ['*a', 'nothing to repeat at position 0'],
    ['a**', 'multiple repeat at position 2'],
    ['a{3,2}', 'min repeat greater than max repeat'],
    ['\\q', 'bad escape \\q'],
    ['[z-a]', 'bad character range z-a'],
    ['[a-\\d]', 'bad character range a-\\d'],
    ['\\x4', 'incomplete escape \\x4'],
    ['a(?i)b', 'global flags not at the start of the expression at position 1'],
    ['(?P<1x>a)', "bad character in group name '1x'"],
    ['(?P<a>x)(?P<a>y)', "redefinition of group name 'a'"],
    ['\\400', 'outside of range 0-0o377'],
    ['(?L)a', "cannot use 'L' flag with a str pattern"],
    ['(?Q)a', 'unknown extension ?Q'],
    ['a{1001}', 'repetition count above 1000'],
    ['\\N{EM DASH}', 'named Unicode escapes'],
  ])('rejects the invalid pattern %s with a message naming it and the problem', (pattern, problem) => {
    const msg = inputError(pattern);
    expect(msg).toContain(`'${pattern}'`);
    expect(msg).toContain(problem);
  });

  it('rejects an empty pattern', () => {
    expect(inputError('')).toContain('empty regex');
  });
});

describe('required literals (the prefilter query)', () => {
  const q = (p: string) => requiredLiterals(parsePythonRegex(p));

  it('folds case and keeps whole literals across \\s+ and .*', () => {
    expect(q('(?i)Corliss\\s+Archer')).toEqual({ op: 'and', args: [{ op: 'lit', s: 'corliss' }, { op: 'lit', s: 'archer' }] });
    expect(q('foo.*bar')).toEqual({ op: 'and', args: [{ op: 'lit', s: 'foo' }, { op: 'lit', s: 'bar' }] });
    expect(q('Kiss and Tell')).toEqual({ op: 'lit', s: 'kiss and tell' });
  });

  it('turns alternations and small classes into alternatives', () => {
    expect(q('foo|bar')).toEqual({ op: 'or', args: [{ op: 'lit', s: 'foo' }, { op: 'lit', s: 'bar' }] });
    expect(q('[bc]at')).toEqual({ op: 'or', args: [{ op: 'lit', s: 'bat' }, { op: 'lit', s: 'cat' }] });
    expect(q('ab(cd|ef)gh')).toEqual({ op: 'or', args: [{ op: 'lit', s: 'abcdgh' }, { op: 'lit', s: 'abefgh' }] });
  });

  it('requires nothing when a pattern has no literal, or an optional one', () => {
    expect(q('\\d+')).toEqual({ op: 'all' });
    expect(q('(?:abc)?\\d')).toEqual({ op: 'all' });
    expect(q('(?:abc)?xyz')).toEqual({ op: 'lit', s: 'xyz' });
    expect(q('(abc)*')).toEqual({ op: 'all' });
    expect(q('.')).toEqual({ op: 'all' });
  });

  it('says nothing about cased non-ASCII letters under (?i), which fold.ts does not equate', () => {
    expect(q('(?i)Ωmega')).toEqual({ op: 'lit', s: 'mega' });
    expect(q('Ωmega')).toEqual({ op: 'lit', s: 'Ωmega' });
  });
});
