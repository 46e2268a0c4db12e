/**
 * The normal form shared by the grep index and the literal prefilter. Both sides must agree exactly,
 * or the prefilter would skip chunks that match.
 *
 * Text is read as UTF-16 code units. Each unit is folded on its own: ASCII A-Z to a-z, and the two
 * non-ASCII characters that RE2's case-insensitive matching equates with ASCII letters (U+017F long s,
 * U+212A Kelvin sign) to 's' and 'k'; everything else is left alone. Because folding is per unit, a
 * string that occurs in a text still occurs, folded, in the folded text, whatever the case flags were.
 *
 * A "word" is a maximal run of word units: ASCII letters, digits, '_', and every non-ASCII unit
 * (so accents, CJK and surrogate pairs never split a word). All other ASCII units separate words.
 */

export function foldUnit(u: number): number {
  if (u >= 0x41 && u <= 0x5a) return u + 32;
  if (u === 0x17f) return 0x73;
  if (u === 0x212a) return 0x6b;
  return u;
}

/** Whether a (folded) code unit belongs to a word. */
export function isWordUnit(u: number): boolean {
  return (u >= 0x61 && u <= 0x7a) || (u >= 0x30 && u <= 0x39) || u === 0x5f || u >= 0x80 || (u >= 0x41 && u <= 0x5a);
}
