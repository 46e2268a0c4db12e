/** Text folding shared by the tools (partial matching) and the scorer (word-boundary matching). */

/**
 * Case- and space-insensitive form of a name. SQLite's LOWER and LIKE only fold ASCII, so
 * "Åberg" would not find "åberg"; the database stores this folded form next to each name.
 */
export function fold(text: string): string {
  return text.normalize('NFC').toLocaleLowerCase('sv-SE').replace(/\s+/gu, ' ').trim();
}
