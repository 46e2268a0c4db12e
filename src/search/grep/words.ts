import { foldUnit } from './fold.js';

/**
 * The grep prefilter's vocabulary in TypeScript: splits a text into its folded words (fold.ts) and
 * numbers each distinct word 0, 1, 2, ... in order of first sight. The index builder's WebAssembly
 * loop (../assembly/words.ts, grepAdd) does the same over UTF-8; this one serves builds without
 * it and is the reference the tests hold that loop to.
 *
 * Memory: a hash table over a typed-array arena of the words' folded code units.
 */
const REC = 4;

/** Word records with "last document" unset (-1). */
function newRecords(words: number): Int32Array {
  const rec = new Int32Array(words * REC);
  for (let r = 0; r < rec.length; r += REC) rec[r + 3] = -1;
  return rec;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

export class GrepWords {
  /** Folded code units of every distinct word, back to back; word id's units start at wordStart[id]. */
  private arena = new Uint16Array(1 << 16);
  private wordStart: Uint32Array = new Uint32Array(1025);
  private nWords = 0;
  /** Per word, REC int32s side by side so that a lookup touches one cache line: hash, arena start, length, last document seen. */
  private rec = newRecords(1024);
  private table = new Int32Array(2048);
  private out = new Uint32Array(1024);

  get size(): number {
    return this.nWords;
  }

  /**
   * The numbers of the words of `text` (document `doc`; documents in increasing order), each once,
   * in order of first appearance: a view valid until the next call.
   */
  wordsOf(doc: number, text: string): Uint32Array {
    // The hot loop: everything it touches per word is a local, and a word seen before (nearly all of
    // them) costs one table probe and one comparison.
    let table = this.table;
    let mask = table.length - 1;
    let rec = this.rec;
    let arena = this.arena;
    const n = text.length;
    // At most one word per two code units, plus one.
    if (this.out.length < n / 2 + 1) this.out = new Uint32Array(n + 2);
    const out = this.out;
    let count = 0;
    let h = FNV_OFFSET;
    let len = 0;
    let lone = false; // the current word contains an unpaired surrogate
    for (let i = 0; i <= n; i++) {
      let u = i < n ? text.charCodeAt(i) : 0x20;
      if (u >= 0x41 && u <= 0x5a) u += 32;
      else if (u >= 0x80) {
        if (u === 0x17f) u = 0x73;
        else if (u === 0x212a) u = 0x6b;
        else if (u >= 0xd800 && u <= 0xdfff && !pairedSurrogate(text, i)) {
          // Stored text is UTF-8, where an unpaired surrogate becomes U+FFFD: index what grep sees.
          u = 0xfffd;
          lone = true;
        }
      }
      if ((u >= 0x61 && u <= 0x7a) || (u >= 0x30 && u <= 0x39) || u === 0x5f || u >= 0x80) {
        h = Math.imul(h ^ u, FNV_PRIME);
        len++;
        continue;
      }
      if (len === 0) continue;
      const hash = mix(h) | 0;
      const from = i - len;
      let slot = hash & mask;
      let id = -1;
      for (;;) {
        const cand = table[slot]! - 1;
        if (cand < 0) break;
        const r = cand * REC;
        if (rec[r] === hash && rec[r + 2] === len && (lone ? this.sameFolded(rec[r + 1]!, text, from, len) : sameAscii(arena, rec[r + 1]!, text, from, len))) {
          id = cand;
          break;
        }
        slot = (slot + 1) & mask;
      }
      if (id < 0) {
        id = this.newWord(text, from, len, hash, lone, slot);
        table = this.table;
        mask = table.length - 1;
        rec = this.rec;
        arena = this.arena;
      }
      const r = id * REC;
      if (rec[r + 3] !== doc) {
        rec[r + 3] = doc;
        out[count++] = id;
      }
      h = FNV_OFFSET;
      len = 0;
      lone = false;
    }
    return out.subarray(0, count);
  }

  /** Every word so far, by number. */
  words(): string[] {
    const words: string[] = [];
    for (let id = 0; id < this.nWords; id++) words.push(unitsToString(this.arena, this.wordStart[id]!, this.wordStart[id + 1]!));
    return words;
  }

  /** Record a word not seen before, whose table slot is `slot`; returns its id. */
  private newWord(text: string, start: number, len: number, h: number, lone: boolean, slot: number): number {
    const id = this.nWords++;
    this.storeWord(text, start, len, lone);
    if ((id + 1) * REC > this.rec.length) {
      const next = newRecords(2 * (id + 1));
      next.set(this.rec);
      this.rec = next;
    }
    const r = id * REC;
    this.rec[r] = h;
    this.rec[r + 1] = this.wordStart[id]!;
    this.rec[r + 2] = len;
    this.table[slot] = id + 1;
    if ((id + 1) * 2 > this.table.length) this.rehash();
    return id;
  }

  /** Append the folded units of text[start, start+len) to the arena as word number nWords-1. */
  private storeWord(text: string, start: number, len: number, lone: boolean): void {
    const id = this.nWords - 1;
    if (id + 2 > this.wordStart.length) {
      const next = new Uint32Array(2 * (id + 2));
      next.set(this.wordStart);
      this.wordStart = next;
    }
    let at = this.wordStart[id]!;
    if (at + len > this.arena.length) {
      const next = new Uint16Array(Math.max(this.arena.length * 2, at + len));
      next.set(this.arena);
      this.arena = next;
    }
    for (let j = start; j < start + len; j++) {
      const u = text.charCodeAt(j);
      this.arena[at++] = lone && u >= 0xd800 && u <= 0xdfff && !pairedSurrogate(text, j) ? 0xfffd : foldUnit(u);
    }
    this.wordStart[id + 1] = at;
  }

  /** Whether the arena units at `at` equal the folded text at `start` (len units). */
  private sameFolded(at: number, text: string, start: number, len: number): boolean {
    const arena = this.arena;
    for (let j = 0; j < len; j++) {
      let u = text.charCodeAt(start + j);
      if (u >= 0x41 && u <= 0x5a) u += 32;
      else if (u === 0x17f) u = 0x73;
      else if (u === 0x212a) u = 0x6b;
      else if (u >= 0xd800 && u <= 0xdfff && !pairedSurrogate(text, start + j)) u = 0xfffd;
      if (arena[at + j] !== u) return false;
    }
    return true;
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let id = 0; id < this.nWords; id++) {
      let slot = this.rec[id * REC]! & mask;
      while (table[slot] !== 0) slot = (slot + 1) & mask;
      table[slot] = id + 1;
    }
    this.table = table;
  }
}

/** Finish an FNV-1a hash (murmur3's fmix32): FNV's low bits, used for the table slot, are weak alone. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function pairedSurrogate(text: string, i: number): boolean {
  const u = text.charCodeAt(i);
  if (u <= 0xdbff) {
    const next = text.charCodeAt(i + 1);
    return next >= 0xdc00 && next <= 0xdfff;
  }
  const before = text.charCodeAt(i - 1);
  return before >= 0xd800 && before <= 0xdbff;
}

function unitsToString(units: Uint16Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i += 8192) s += String.fromCharCode(...units.subarray(i, Math.min(to, i + 8192)));
  return s;
}

/**
 * Whether arena units at `at` equal text[start, start+len) folded, for words without unpaired
 * surrogates (the folding here is fold.ts's, inlined).
 */
function sameAscii(arena: Uint16Array, at: number, text: string, start: number, len: number): boolean {
  for (let j = 0; j < len; j++) {
    let u = text.charCodeAt(start + j);
    if (u >= 0x41 && u <= 0x5a) u += 32;
    else if (u === 0x17f) u = 0x73;
    else if (u === 0x212a) u = 0x6b;
    if (arena[at + j] !== u) return false;
  }
  return true;
}
