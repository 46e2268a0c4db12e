/**
 * HTML character references as some published datasets leave them in titles and text (HotpotQA's
 * `Anchor &amp; Braille`, `&quot;Custom Shop&quot;`), decoded to the characters they name. One
 * pass, so `&amp;quot;` becomes `&quot;`, as a browser shows it; an unknown name stays as written.
 */
const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0',
  ndash: '\u2013', mdash: '\u2014', hellip: '\u2026', lsquo: '\u2018', rsquo: '\u2019', ldquo: '\u201c', rdquo: '\u201d',
};

export function decodeHtmlEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]+));/gu, (whole, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) return NAMED[name] ?? whole;
    const cp = dec !== undefined ? Number(dec) : Number.parseInt(hex!, 16);
    // Not a character: NUL, a surrogate, beyond Unicode. Kept as written.
    return cp === 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ? whole : String.fromCodePoint(cp);
  });
}
