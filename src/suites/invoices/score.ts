/**
 * The invoice reward: the share of gold values present in the final reply, each matched on
 * word boundaries, so "active" does not match "inactive" and subscription 6748 does not match
 * 67484. A task passes when every gold value is present.
 *
 * Matching rules, by the shape of the gold value:
 * - text and identifiers: case-insensitive (Swedish letters included), any run of whitespace
 *   between words; a match may not be preceded or followed by a letter or digit.
 * - dates (gold YYYY-MM-DD): ISO with -, / or . separators; day-first numeric (31/12/2024,
 *   31.12.2024); and written months in English or Swedish, full or abbreviated
 *   ("31 December 2024", "December 31st, 2024", "31 dec. 2024", "den 31:a december 2024").
 *   Month-first numeric dates (12/31/2024) are not accepted: they are ambiguous.
 * - amounts (gold with two decimals, e.g. 16675.50): thousands grouped with a space, comma or
 *   dot or not at all; decimal comma or dot; trailing zero of the öre optional; whole amounts may
 *   drop the decimals or use the Swedish ":-". A longer number (16675.509, 116675.50) is not a match.
 *   Known limit: a whole-kronor amount also matches the same digits inside a date or code.
 */

const MONTHS: readonly (readonly string[])[] = [
  ['january', 'januari', 'jan'], ['february', 'februari', 'feb'], ['march', 'mars', 'mar'], ['april', 'apr'],
  ['may', 'maj'], ['june', 'juni', 'jun'], ['july', 'juli', 'jul'], ['august', 'augusti', 'aug'],
  ['september', 'sept', 'sep'], ['october', 'oktober', 'oct', 'okt'], ['november', 'nov'], ['december', 'dec'],
];

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The reply as matched: Unicode-normalised, lower case, one kind of space and dash. */
function normalizeReply(text: string): string {
  return text
    .normalize('NFC')
    .toLocaleLowerCase('sv-SE')
    .replace(/[\s\u00a0\u202f]+/gu, ' ')
    .replace(/[\u2010-\u2015\u2212]/gu, '-');
}

export type GoldKind = 'date' | 'amount' | 'text';

export function goldKind(value: string): GoldKind {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'date';
  if (/^\d+\.\d{2}$/.test(value)) return 'amount';
  return 'text';
}

function datePattern(value: string): string {
  const [y, m, d] = value.split('-') as [string, string, string];
  const month = Number(m);
  const day = String(Number(d));
  const dd = `0?${day}`;
  const mm = `0?${month}`;
  const names = `(?:${MONTHS[month - 1]!.join('|')})\\.?`;
  const ordinal = `(?:st|nd|rd|th|:e|:a)?`;
  return [
    `${y}[-/.]${mm}[-/.]${dd}`,
    `${dd}[-/.]${mm}[-/.]${y}`,
    `(?:den )?${dd}${ordinal} (?:of )?${names},? ${y}`,
    `${names} ${dd}${ordinal},? ${y}`,
  ].join('|');
}

function amountPattern(value: string): string {
  const [whole, cents] = value.split('.') as [string, string];
  // Group thousands from the right with a chosen separator.
  const grouped = (sep: string) => whole.replace(/\B(?=(\d{3})+$)/g, sep);
  const wholes = [...new Set([whole, grouped(' '), grouped(','), grouped('.')])].map(escapeRegex).join('|');
  const decimals = cents === '00' ? `(?:[.,]00?|:-)?` : cents.endsWith('0') ? `[.,]${cents[0]}0?` : `[.,]${cents}`;
  return `(?:${wholes})${decimals}`;
}

function textPattern(value: string): string {
  return normalizeReply(value).trim().split(' ').map(escapeRegex).join(' ');
}

const isLetterOrDigit = (ch: string | undefined) => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);
const isDigit = (ch: string | undefined) => ch !== undefined && /\p{N}/u.test(ch);
const isSeparator = (ch: string | undefined) => ch === '.' || ch === ',';

/**
 * Word boundaries, checked on the characters around a match (much faster than Unicode
 * lookbehind in the pattern). Amounts also may not continue a longer number: "1.16675,50" or
 * "16675,509" are not 16675.50.
 */
function atBoundaries(text: string, start: number, end: number, kind: GoldKind): boolean {
  if (isLetterOrDigit(text[start - 1]) || isLetterOrDigit(text[end])) return false;
  if (kind !== 'amount') return true;
  if (isSeparator(text[start - 1]) && isDigit(text[start - 2])) return false;
  return !(isSeparator(text[end]) && isDigit(text[end + 1]));
}

interface Matcher {
  kind: GoldKind;
  re: RegExp;
}

const matcherCache = new Map<string, Matcher>();

/** The compiled matcher for one gold value (cached: the same values are scored many times). */
function matcherFor(value: string): Matcher {
  let m = matcherCache.get(value);
  if (!m) {
    const kind = goldKind(value);
    const body = kind === 'date' ? datePattern(value) : kind === 'amount' ? amountPattern(value) : textPattern(value);
    m = { kind, re: new RegExp(body, 'gu') };
    matcherCache.set(value, m);
  }
  return m;
}

function matchesIn(normalizedText: string, gold: string): boolean {
  const { kind, re } = matcherFor(gold);
  re.lastIndex = 0;
  for (let m = re.exec(normalizedText); m !== null; m = re.exec(normalizedText)) {
    if (atBoundaries(normalizedText, m.index, m.index + m[0].length, kind)) return true;
    // Retry from the next character: a shorter match may start inside a rejected one.
    re.lastIndex = m.index + 1;
  }
  return false;
}

/** Is `gold` present in `text` under the rules above? */
export function containsGoldValue(text: string, gold: string): boolean {
  return matchesIn(normalizeReply(text), gold);
}

export interface ReplyScore {
  /** Share of gold values present, 0..1. */
  share: number;
  /** All gold values present. */
  pass: boolean;
  /** Per gold value, in order. */
  matched: boolean[];
}

export function scoreReply(reply: string, goldValues: readonly string[]): ReplyScore {
  const text = normalizeReply(reply);
  const matched = goldValues.map((g) => matchesIn(text, g));
  const hits = matched.filter(Boolean).length;
  return { share: goldValues.length === 0 ? 0 : hits / goldValues.length, pass: goldValues.length > 0 && hits === goldValues.length, matched };
}
