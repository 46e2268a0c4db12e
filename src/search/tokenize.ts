/**
 * Word splitting without regular expressions or per-token strings: the indexer's hot path.
 * A word is a maximal run of Unicode letters, marks and digits (\p{L}\p{M}\p{N}), where an
 * apostrophe (' ’ ʼ) between two word characters joins ("o'neill", "kiss's"). The callback gets
 * the word's UTF-16 span and an FNV-1a hash of its code units, so a caller can look words up in
 * a hash table (WordTable) and build a string only for words it has not seen.
 */

const WORD_CHAR = /[\p{L}\p{M}\p{N}]/u;
/** Per BMP code unit: 0 = not yet classified, 1 = word character, 2 = not. */
const bmpClass = new Uint8Array(65536);
for (let c = 0; c < 128; c++) {
  const word = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  bmpClass[c] = word ? 1 : 2;
}

function isApostrophe(c: number): boolean {
  return c === 39 || c === 0x2019 || c === 0x02bc;
}

/** Width in code units of the word character at i (1 or 2), or 0 if text[i] starts none. */
function wordCharAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdfff) {
    let k = bmpClass[c]!;
    if (k === 0) bmpClass[c] = k = WORD_CHAR.test(String.fromCharCode(c)) ? 1 : 2;
    return k === 1 ? 1 : 0;
  }
  // Astral plane: classify the whole code point (a lone surrogate is not a word character).
  const cp = text.codePointAt(i)!;
  if (cp <= 0xffff) return 0;
  return WORD_CHAR.test(String.fromCodePoint(cp)) ? 2 : 0;
}

export type WordCallback = (start: number, end: number, hash: number) => void;

export function scanWords(text: string, fn: WordCallback): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let w = wordCharAt(text, i);
    if (w === 0) {
      i++;
      continue;
    }
    const start = i;
    let h = 0x811c9dc5;
    for (;;) {
      for (let j = 0; j < w; j++) h = Math.imul(h ^ text.charCodeAt(i + j), 0x01000193);
      i += w;
      if (i >= n) break;
      w = wordCharAt(text, i);
      if (w === 0) {
        // An apostrophe joins two word characters.
        if (i + 1 < n && isApostrophe(text.charCodeAt(i)) && (w = wordCharAt(text, i + 1)) !== 0) {
          h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
          i++;
          continue;
        }
        break;
      }
    }
    fn(start, i, h >>> 0);
  }
}

/**
 * Surface word -> number, keyed by the exact code units of the word, found by hash and compared
 * in place against the text: no substring is made for a word already in the table.
 */
export class WordTable {
  private slots = new Int32Array(1 << 16).fill(-1);
  private hashes: number[] = [];
  private keys: string[] = [];
  private values: number[] = [];

  get size(): number {
    return this.keys.length;
  }

  /** The value of text[start, end), or undefined. */
  get(text: string, start: number, end: number, hash: number): number | undefined {
    const mask = this.slots.length - 1;
    const len = end - start;
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const e = this.slots[s]!;
      if (e < 0) return undefined;
      if (this.hashes[e] !== hash) continue;
      const key = this.keys[e]!;
      if (key.length !== len) continue;
      let same = true;
      for (let j = 0; j < len; j++) {
        if (key.charCodeAt(j) !== text.charCodeAt(start + j)) {
          same = false;
          break;
        }
      }
      if (same) return this.values[e];
    }
  }

  /** Add a word known to be absent. */
  add(word: string, hash: number, value: number): void {
    if ((this.keys.length + 1) * 2 > this.slots.length) this.grow();
    const e = this.keys.length;
    this.keys.push(word);
    this.hashes.push(hash);
    this.values.push(value);
    this.place(e);
  }

  private place(e: number): void {
    const mask = this.slots.length - 1;
    let s = this.hashes[e]! & mask;
    while (this.slots[s]! >= 0) s = (s + 1) & mask;
    this.slots[s] = e;
  }

  private grow(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    for (let e = 0; e < this.keys.length; e++) this.place(e);
  }
}
