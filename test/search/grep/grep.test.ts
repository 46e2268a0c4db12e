import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { sharedText } from '../../fixtures/shared.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../../src/errors.js';
import { GrepIndexBuilder, grep, grepLatency, loadGrepIndex, parsePythonRegex, requiredLiterals, touchPages, type GrepIndex } from '../../../src/search/grep/index.js';
import type { ChunkStore } from '../../../src/search/types.js';
import { writeGrepFile } from '../../../src/search/grep/builder.js';
import { WordKernel } from '../../../src/search/word-loops.js';

interface TestChunk {
  id: string;
  title: string;
  text: string;
}

/**
 * A chunk store over real paragraphs. `contiguous` keeps all texts in one buffer in document order
 * (as the index's store does, which lets grep test a whole block in one call); otherwise every text
 * has its own buffer and grep must go chunk by chunk.
 */
class MemoryStore implements ChunkStore {
  readonly size: number;
  private readonly bytes: Uint8Array[];
  constructor(
    private readonly chunks: TestChunk[],
    contiguous: boolean,
  ) {
    this.size = chunks.length;
    if (contiguous) {
      const parts = chunks.map((c) => Buffer.from(c.text, 'utf8'));
      const all = Buffer.concat(parts);
      let off = 0;
      this.bytes = parts.map((p) => {
        const view = all.subarray(off, off + p.length);
        off += p.length;
        return view;
      });
    } else {
      this.bytes = chunks.map((c) => Buffer.from(c.text, 'utf8'));
    }
  }
  id(doc: number) {
    return this.chunks[doc]!.id;
  }
  title(doc: number) {
    return this.chunks[doc]!.title;
  }
  text(doc: number) {
    return this.chunks[doc]!.text;
  }
  textBytes(doc: number) {
    return this.bytes[doc]!;
  }
  docOf(id: string) {
    return this.chunks.findIndex((c) => c.id === id);
  }
}

/** Paragraphs of the HotpotQA dev-500 file, deduplicated by title + text, in file order. */
function hotpotParagraphs(): TestChunk[] {
  const seen = new Set<string>();
  const out: TestChunk[] = [];
  const lines = sharedText('hotpotqa/dev500.ircot.jsonl').trim().split('\n');
  for (const line of lines) {
    for (const c of (JSON.parse(line) as { contexts: Array<{ title: string; paragraph_text: string }> }).contexts) {
      const key = `${c.title}\n${c.paragraph_text}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ id: `p${out.length}`, title: c.title, text: c.paragraph_text });
    }
  }
  return out;
}

/** Deterministic PRNG (mulberry32). */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\\-#&~\s]/g, (c) => (c === ' ' ? ' ' : `\\${c}`));

let dir: string;
let chunks: TestChunk[];
let contiguousStore: MemoryStore;
let separateStore: MemoryStore;
let index: GrepIndex;
/** The same documents indexed with the default block size (64: whole bitmap words per block). */
let index64: GrepIndex;
let dir64: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sleuth-grep-'));
  // A few hand-made chunks first: case folding that RE2 does beyond ASCII, an unpaired surrogate.
  chunks = [
    { id: 'kelvin', title: 'Kelvin sign', text: 'A \u212Aiss and a long \u017Ftory.' },
    { id: 'lone', title: 'Lone surrogate', text: 'broken \ud800text here' },
    { id: 'newline', title: 'Trailing newline', text: 'ends with a newline\n' },
    { id: 'aaaa', title: 'Backtracking trap', text: 'a'.repeat(20_000) + '!' },
    { id: 'saga', title: 'Ends in a', text: 'the end of the saga' },
    ...hotpotParagraphs().slice(0, 2000),
  ];
  contiguousStore = new MemoryStore(chunks, true);
  separateStore = new MemoryStore(chunks, false);
  const builder = new GrepIndexBuilder({ blockSize: 16 });
  chunks.forEach((c, doc) => builder.add(doc, c.text));
  builder.write(dir);
  index = loadGrepIndex(dir)!;
  dir64 = mkdtempSync(join(tmpdir(), 'sleuth-grep-'));
  const builder64 = new GrepIndexBuilder();
  chunks.forEach((c, doc) => builder64.add(doc, c.text));
  builder64.write(dir64);
  index64 = loadGrepIndex(dir64)!;
  expect(index64.blockSize).toBe(64);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(dir64, { recursive: true, force: true });
});

/** All matching ids in document order, by a scan without the index. */
const fullScan = (pattern: string) => grep(separateStore, undefined, pattern, { k: 1_000_000, timeLimitMs: 60_000 }).hits.map((h) => h.id);

describe('grep over chunks', () => {
  it('finds the Corliss Archer paragraphs with a case-insensitive pattern, with title and snippet', () => {
    const r = grep(contiguousStore, index, '(?i)corliss\\s+archer', { k: 50 });
    expect(r.timedOut).toBe(false);
    const titles = r.hits.map((h) => h.title);
    expect(titles).toContain('Kiss and Tell (1945 film)');
    for (const h of r.hits) expect(h.snippet).toMatch(/corliss\s+archer/i);
    // The prefilter kept most of the corpus out of the regex.
    expect(r.scanned).toBeLessThan(chunks.length / 4);
  });

  it('gives exactly the hits of a full scan on random literals and regexes, with and without contiguous texts', () => {
    const rand = rng(7);
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
    const patterns: string[] = ['(?i)kiss', '(?i)story', 'text', '(?i)KISS AND', 'newline$', 'newline\\Z', '\\bnewline\\b', '(?i)ω'];
    for (let n = 0; n < 100; n++) {
      const c = pick(chunks.slice(5));
      const words = c.text.split(/\s+/).filter((w) => w.length > 0);
      const i = Math.floor(rand() * words.length);
      const word = words[i]!;
      const phrase = words.slice(i, i + 2 + Math.floor(rand() * 2)).join(' ');
      const start = Math.floor(rand() * Math.max(1, c.text.length - 8));
      const piece = c.text.slice(start, start + 3 + Math.floor(rand() * 6));
      switch (n % 10) {
        case 0: patterns.push(escape(word)); break;
        case 1: patterns.push(`(?i)${escape(word.toUpperCase())}`); break;
        case 2: patterns.push(escape(phrase)); break;
        case 3: patterns.push(escape(piece)); break;
        case 4: patterns.push(`${escape(word)}|${escape(pick(words))}`); break;
        case 5: patterns.push(`${escape(word)}.*${escape(pick(words))}`); break;
        case 6: patterns.push(`\\b${escape(word)}\\b`); break;
        case 7: patterns.push(`(?i)${escape(phrase).replace(/ /g, '\\s+')}`); break;
        case 8: patterns.push(`${escape(word)}${String.fromCharCode(97 + Math.floor(rand() * 26))}`); break; // often absent
        default: patterns.push(`[${word[0]}${String.fromCharCode(97 + Math.floor(rand() * 26))}]${escape(word.slice(1))}`);
      }
    }
    let filtered = 0;
    for (const p of patterns) {
      const expected = fullScan(p);
      const withIndex = grep(contiguousStore, index, p, { k: 1_000_000, timeLimitMs: 60_000 });
      expect(withIndex.hits.map((h) => h.id), p).toEqual(expected);
      expect(grep(separateStore, index, p, { k: 1_000_000, timeLimitMs: 60_000 }).hits.map((h) => h.id), p).toEqual(expected);
      expect(grep(contiguousStore, index64, p, { k: 1_000_000, timeLimitMs: 60_000 }).hits.map((h) => h.id), p).toEqual(expected);
      // With a hit cap, the first k of the same list.
      expect(grep(contiguousStore, index, p, { k: 3 }).hits.map((h) => h.id), p).toEqual(expected.slice(0, 3));
      if (withIndex.scanned < chunks.length) filtered++;
    }
    // Most of these patterns have a usable literal; the prefilter must actually have skipped chunks.
    expect(filtered).toBeGreaterThan(patterns.length / 2);
  });

  it('finds chunks whose letters RE2 folds to ASCII (Kelvin sign, long s) through the index', () => {
    expect(grep(contiguousStore, index, '(?i)kiss').hits.map((h) => h.id)).toContain('kelvin');
    expect(grep(contiguousStore, index, '(?i)long story').hits.map((h) => h.id)).toEqual(['kelvin']);
    expect(grep(contiguousStore, index, 'long story').hits).toEqual([]);
  });

  it('stops at k hits, in document order', () => {
    const all = fullScan('the');
    const r = grep(contiguousStore, index, 'the', { k: 5 });
    expect(r.hits.map((h) => h.id)).toEqual(all.slice(0, 5));
  });

  it('stops at the time limit and says so', () => {
    const r = grep(contiguousStore, index, '\\d', { timeLimitMs: 0 });
    expect(r.timedOut).toBe(true);
    expect(r.hits).toEqual([]);
  });

  it('returns from catastrophic-backtracking patterns (RE2 is linear)', () => {
    const r = grep(contiguousStore, index, '(a+)+$', { k: 1000, timeLimitMs: 60_000 });
    expect(r.timedOut).toBe(false);
    expect(r.hits.map((h) => h.id)).toEqual(fullScan('(a+)+$'));
    expect(r.hits.map((h) => h.id)).toContain('saga');
    expect(r.hits.map((h) => h.id)).not.toContain('aaaa');
  });

  it('times grep calls for benchmarks: every pattern warmed once, then each round timed', () => {
    const calls: string[] = [];
    const lat = grepLatency((p) => {
      calls.push(p);
      return grep(contiguousStore, index, p);
    }, ['(?i)corliss', 'Shirley Temple'], 2);
    expect(calls).toEqual(['(?i)corliss', 'Shirley Temple', '(?i)corliss', 'Shirley Temple', '(?i)corliss', 'Shirley Temple']);
    expect(lat.samples).toBe(4);
    expect(lat.p50_ms).toBeLessThanOrEqual(lat.p99_ms);
  });

  it('matches the text only, not the title', () => {
    expect(grep(contiguousStore, index, 'Trailing').hits).toEqual([]);
  });

  it('cuts snippets to about the requested length, around the match', () => {
    const r = grep(contiguousStore, index, '(?i)kiss and tell', { k: 3, snippetChars: 60 });
    expect(r.hits.length).toBeGreaterThan(0);
    for (const h of r.hits) {
      expect(h.snippet.length).toBeLessThanOrEqual(62);
      expect(h.snippet).toMatch(/kiss and tell/i);
    }
  });

  it('throws InputError for invalid and unsupported patterns', () => {
    expect(() => grep(contiguousStore, index, '(?<=a)b')).toThrow(InputError);
    expect(() => grep(contiguousStore, index, '(?<=a)b')).toThrow(/lookbehind/);
    expect(() => grep(contiguousStore, index, 'a[')).toThrow(/unterminated character set/);
  });
});

describe('grep index files', () => {
  it('writes the same bytes for the same documents', () => {
    const other = mkdtempSync(join(tmpdir(), 'sleuth-grep-'));
    try {
      const builder = new GrepIndexBuilder({ blockSize: 16 });
      chunks.forEach((c, doc) => builder.add(doc, c.text));
      builder.write(other);
      expect(readFileSync(join(other, 'grep.bin')).equals(readFileSync(join(dir, 'grep.bin')))).toBe(true);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('is absent (undefined) from a directory without one', () => {
    const empty = mkdtempSync(join(tmpdir(), 'sleuth-grep-'));
    try {
      expect(loadGrepIndex(empty)).toBeUndefined();
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('rejects a truncated file or another format version with InputError naming the file', () => {
    const bad = mkdtempSync(join(tmpdir(), 'sleuth-grep-'));
    try {
      const bytes = readFileSync(join(dir, 'grep.bin'));
      writeFileSync(join(bad, 'grep.bin'), bytes.subarray(0, bytes.length - 5));
      expect(() => loadGrepIndex(bad)).toThrow(InputError);
      expect(() => loadGrepIndex(bad)).toThrow(/grep\.bin is truncated/);
      const other = Buffer.from(bytes);
      other.writeUInt32LE(99, 8);
      writeFileSync(join(bad, 'grep.bin'), other);
      expect(() => loadGrepIndex(bad)).toThrow(/format version 99/);
      writeFileSync(join(bad, 'grep.bin'), Buffer.from('not an index at all, really not one of ours'));
      expect(() => loadGrepIndex(bad)).toThrow(InputError);
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });

  it('touches one byte of every 4 KiB page (and the last byte), the sum proving the reads', () => {
    const bytes = new Uint8Array(3 * 4096 + 10);
    bytes[0] = 1;
    bytes[4096] = 2;
    bytes[8192] = 3;
    bytes[12288] = 4;
    bytes[bytes.length - 1] = 5;
    bytes[100] = 100; // not on a page start: not read
    expect(touchPages(bytes)).toBe(15);
    expect(touchPages(new Uint32Array(bytes.buffer, 4096, 1))).toBe(2); // a view: its own first and last byte
    expect(touchPages(new Uint8Array(0))).toBe(0);
    expect(typeof index.touch()).toBe('number');
  });

  it('requires documents in order', () => {
    const builder = new GrepIndexBuilder();
    builder.add(0, 'a');
    expect(() => builder.add(2, 'b')).toThrow(/expected document 1/);
  });
});

describe('the prefilter narrows to chunks, not blocks', () => {
  /**
   * 200 documents: "alpha" in every even one, "beta" in every third, "gamma" in documents 5 and 77
   * only, "omega" in every one of 16..31, "the" in all. So in a block each word is in all, many (a
   * bitmask), or few (a list) of its chunks, "the" is a bitmap of blocks, and "alpha" AND "beta" holds
   * in exactly the multiples of 6.
   */
  const texts = Array.from({ length: 200 }, (_, d) =>
    [d % 2 === 0 ? 'Alpha' : 'x', d % 3 === 0 ? 'BETA' : 'y', d === 5 || d === 77 ? 'gamma' : 'z', d >= 16 && d < 32 ? 'omega' : 'w', `filler${d}`, 'the'].join(' '),
  );
  const docsIn = (set: Uint32Array | null) => (set === null ? null : texts.map((_, d) => d).filter((d) => (set[d >>> 5]! & (1 << (d & 31))) !== 0));
  const lit = (s: string) => ({ op: 'lit' as const, s });

  it('writes the same grep.bin from the WebAssembly forward list as from GrepIndexBuilder, at every block size', () => {
    // Words in every chunk, in most chunks of most blocks (bitmaps), in a few; more than 128 chunks
    // of a block holding one word (a two-byte count); ſ and K folded; a block with no words.
    const pool = ['Alpha', 'beta', 'ſtraße', 'Kelvin', 'x_1', '東京', 'café', 'rare'];
    const docs = Array.from({ length: 700 }, (_, d) =>
      d >= 300 && d < 320 ? '' : ['the', pool[d % 8]!, pool[(d * 5) % 7]!, d % 97 === 0 ? `only${d}` : '', d % 3 ? 'common' : ''].join(' '),
    );
    for (const blockSize of [1, 7, 64, 200, 256]) {
      const dirs = [mkdtempSync(join(tmpdir(), 'sleuth-grep-')), mkdtempSync(join(tmpdir(), 'sleuth-grep-'))];
      try {
        const builder = new GrepIndexBuilder({ blockSize });
        docs.forEach((t, d) => builder.add(d, t));
        builder.write(dirs[0]!);
        const kernel = WordKernel.create()!;
        const list = kernel.grepList(blockSize);
        docs.forEach((t, d) => {
          kernel.encode(t);
          list.add(d);
        });
        // The postings filled in one pass, and a few words at a time.
        for (const passBytes of [1 << 30, 40]) {
          writeGrepFile(dirs[1]!, list, list.words(), passBytes);
          expect(readFileSync(join(dirs[1]!, 'grep.bin')).equals(readFileSync(join(dirs[0]!, 'grep.bin'))), `block size ${blockSize}, passes of ${passBytes} bytes`).toBe(true);
        }
      } finally {
        for (const d of dirs) rmSync(d, { recursive: true, force: true });
      }
    }
  });

  for (const blockSize of [16, 64, 12, 1]) {
    it(`answers words and their conjunctions chunk by chunk (block size ${blockSize})`, () => {
      const tmp = mkdtempSync(join(tmpdir(), 'sleuth-grep-'));
      try {
        const builder = new GrepIndexBuilder({ blockSize });
        texts.forEach((t, d) => builder.add(d, t));
        builder.write(tmp);
        const gi = loadGrepIndex(tmp)!;
        const multiples = (m: number) => texts.map((_, d) => d).filter((d) => d % m === 0);
        expect(docsIn(gi.candidates(lit('alpha')))).toEqual(multiples(2));
        expect(docsIn(gi.candidates(lit('beta')))).toEqual(multiples(3));
        expect(docsIn(gi.candidates(lit('gamma')))).toEqual([5, 77]);
        expect(docsIn(gi.candidates(lit('omega')))).toEqual(texts.map((_, d) => d).filter((d) => d >= 16 && d < 32));
        expect(docsIn(gi.candidates({ op: 'and', args: [lit('alpha'), lit('beta')] }))).toEqual(multiples(6));
        expect(docsIn(gi.candidates(lit('the')))).toEqual(multiples(1));
        expect(docsIn(gi.candidates({ op: 'and', args: [lit('the'), lit('gamma')] }))).toEqual([5, 77]);
        expect(docsIn(gi.candidates({ op: 'or', args: [lit('gamma'), lit('omega')] }))).toEqual([5, ...Array.from({ length: 16 }, (_, i) => 16 + i), 77]);
        // Pieces of words, found through the vocabulary's trigrams: inside a word, ending one, starting one.
        expect(docsIn(gi.candidates(lit('lph')))).toEqual(multiples(2));
        expect(docsIn(gi.candidates(lit('mma')))).toEqual([5, 77]);
        expect(docsIn(gi.candidates(lit('ler7')))).toEqual([7, ...Array.from({ length: 10 }, (_, i) => 70 + i)]);
        expect(docsIn(gi.candidates(lit('eta omeg')))).toEqual([18, 21, 24, 27, 30]);
        expect(docsIn(gi.candidates(lit('lpha gam')))).toEqual([]);
        expect(docsIn(gi.candidates(lit('xyz')))).toEqual([]);
        // And grep, with the regex run only on those chunks, finds what a full scan finds.
        const store = new MemoryStore(texts.map((text, d) => ({ id: `d${d}`, title: '', text })), true);
        const r = grep(store, gi, '(?i)alpha\\s+beta', { k: 1000 });
        expect(r.hits.map((h) => h.id)).toEqual(multiples(6).map((d) => `d${d}`));
        expect(r.scanned).toBe(multiples(6).length);
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    });
  }
});

describe('literal analysis stays linear in the pattern', () => {
  it('scans an alternation of 10,000 words instead of analysing it, and keeps small alternations exact', () => {
    const many = `(${Array.from({ length: 10_000 }, (_, i) => `w${i}`).join('|')})`;
    expect(requiredLiterals(parsePythonRegex(many))).toEqual({ op: 'all' });
    expect(requiredLiterals(parsePythonRegex('(foo|bar)baz'))).toEqual({ op: 'or', args: [{ op: 'lit', s: 'foobaz' }, { op: 'lit', s: 'barbaz' }] });
  });

  it('still requires pieces of a literal longer than the cap, and refuses nesting past 200 groups', () => {
    const long = 'abcdefghij'.repeat(20);
    const q = requiredLiterals(parsePythonRegex(long));
    const lits = JSON.stringify(q).match(/"s":"([a-j]+)"/gu) ?? [];
    expect(lits.length).toBeGreaterThan(0);
    for (const l of lits) expect(long.includes(l.slice(5, -1))).toBe(true);
    expect(() => parsePythonRegex(`${'('.repeat(201)}a${')'.repeat(201)}`)).toThrow(/nested more than 200 deep/u);
  });
});
