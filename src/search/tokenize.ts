/**
 * Word splitting without regular expressions or per-token strings: the indexer's hot path.
 * A word is a maximal run of Unicode letters, marks and digits (\p{L}\p{M}\p{N}), where an
 * apostrophe (' ’ ʼ) between two word characters joins ("o'neill", "kiss's"). The callback gets
 * the word's UTF-16 span and an FNV-1a hash of its code units (an int32, kept in small-integer range), so a caller can look words up in
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
  for (let i = 0; ; ) {
    const start = nextWord(text, i);
    if (start === text.length) return;
    const end = foundEnd;
    fn(start, end, foundHash);
    i = end;
  }
}

/** The end and hash of the word nextWord found last: its other results, kept here so that no object is made per word. */
let foundEnd = 0;
let foundHash = 0;

/** The start of the first word at or after `from` (text.length if there is none); sets foundEnd and foundHash. */
function nextWord(text: string, from: number): number {
  const n = text.length;
  let i = from;
  let w = 0;
  while (i < n && (w = wordCharAt(text, i)) === 0) i++;
  if (i === n) return n;
  const start = i;
  let h = 0x811c9dc5 | 0;
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
  foundEnd = i;
  foundHash = h;
  return start;
}

/**
 * Surface word -> number, keyed by the exact code units of the word, found by hash and compared
 * in place against the text: no substring is made for a word already in the table. Keys live in
 * one Uint16Array pool (not as JS strings, which could be slices pinning whole chunk texts).
 */
export class WordTable {
  private slots = new Int32Array(1 << 16).fill(-1);
  private hashes = new Int32Array(1 << 15);
  private starts = new Uint32Array(1 << 15);
  private lengths = new Uint32Array(1 << 15);
  private values = new Int32Array(1 << 15);
  private pool = new Uint16Array(1 << 18);
  private poolUsed = 0;
  size = 0;

  /** The value of text[start, end), or undefined. */
  get(text: string, start: number, end: number, hash: number): number | undefined {
    hash |= 0;
    const mask = this.slots.length - 1;
    const len = end - start;
    const pool = this.pool;
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const e = this.slots[s]!;
      if (e < 0) return undefined;
      if (this.hashes[e] !== hash || this.lengths[e] !== len) continue;
      const at = this.starts[e]!;
      let j = 0;
      while (j < len && pool[at + j] === text.charCodeAt(start + j)) j++;
      if (j === len) return this.values[e];
    }
  }

  /**
   * The indexer's inner loop: split text exactly as scanWords does and append the value of each
   * word to `out` (returning the new length), asking onMiss for the value of a word not yet in
   * the table. No per-word callback, because it runs once per token.
   * With `spans`, word i's UTF-16 span is also written there, start at 2i and end at 2i + 1 (i
   * counted from outLength); it must hold 2 * (text.length / 2 + 1) values past that.
   */
  lookupAll(text: string, onMiss: (word: string) => number, out: Int32Array, outLength: number, spans?: Uint32Array): number {
    for (let i = 0; ; ) {
      const start = nextWord(text, i);
      if (start === text.length) return outLength;
      const end = foundEnd;
      const h = foundHash;
      let v = this.get(text, start, end, h);
      if (v === undefined) {
        const word = text.slice(start, end);
        v = onMiss(word);
        this.add(word, h, v);
      }
      if (spans !== undefined) {
        spans[2 * outLength] = start;
        spans[2 * outLength + 1] = end;
      }
      out[outLength++] = v;
      i = end;
    }
  }

  /** Add a word known to be absent; values must fit in an int32. */
  add(word: string, hash: number, value: number): void {
    hash |= 0;
    const e = this.size;
    if (e === this.hashes.length) {
      this.hashes = growTo(this.hashes, e * 2);
      this.starts = growTo(this.starts, e * 2);
      this.lengths = growTo(this.lengths, e * 2);
      this.values = growTo(this.values, e * 2);
    }
    while (this.poolUsed + word.length > this.pool.length) this.pool = growTo(this.pool, this.pool.length * 2);
    for (let j = 0; j < word.length; j++) this.pool[this.poolUsed + j] = word.charCodeAt(j);
    this.hashes[e] = hash;
    this.starts[e] = this.poolUsed;
    this.lengths[e] = word.length;
    this.values[e] = value;
    this.poolUsed += word.length;
    this.size++;
    if (this.size * 2 > this.slots.length) this.rehash();
    else this.place(e);
  }

  private place(e: number): void {
    const mask = this.slots.length - 1;
    let s = this.hashes[e]! & mask;
    while (this.slots[s]! >= 0) s = (s + 1) & mask;
    this.slots[s] = e;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    for (let e = 0; e < this.size; e++) this.place(e);
  }
}

function growTo<T extends Uint32Array | Int32Array | Uint16Array>(a: T, length: number): T {
  const next = new (a.constructor as new (n: number) => T)(length);
  next.set(a as never);
  return next;
}
