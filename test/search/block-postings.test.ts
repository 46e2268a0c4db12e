import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BLOCK, BlockPostingsWriter, MAX_BLOCK_WORDS, MAX_POSTING_TF, widthFor, blockOffsets, blockWords, decodeBlock, encodeBlock, f32Above } from '../../src/search/block-postings.js';
import { ScoringMemory } from '../../src/search/scoring-memory.js';
import { rng } from './bm25-reference.js';

const root = mkdtempSync(join(tmpdir(), 'sleuth-blocks-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** n ascending documents after prev whose gaps take exactly gapBits bits (at least one gap that wide), tfs of tfBits. */
function makeBlock(r: () => number, n: number, prev: number, gapBits: number, tfBits: number): { docs: number[]; tfs: number[] } {
  const most = (bits: number) => (bits === 0 ? 0 : 2 ** bits - 1);
  const docs: number[] = [];
  const tfs: number[] = [];
  let last = prev;
  const wide = Math.floor(r() * n);
  for (let i = 0; i < n; i++) {
    // One gap at the width's maximum, the others anywhere below it, never past 2^32 - 1 in all.
    const room = 0xffffffff - last - (n - i);
    const gap = Math.min(room, i === wide ? most(gapBits) : Math.floor(r() * (most(gapBits) + 1)));
    last = last + 1 + gap;
    docs.push(last);
    // tf - 1 is at most 65534 (tf 65535), so 16 bits are needed but never filled.
    tfs.push(1 + Math.min(MAX_POSTING_TF - 1, i === wide ? most(tfBits) : Math.floor(r() * (most(tfBits) + 1))));
  }
  return { docs, tfs };
}

function roundTrip(docs: number[], tfs: number[], prev: number) {
  const out = new Uint32Array(MAX_BLOCK_WORDS + 4);
  const end = encodeBlock(docs, tfs, docs.length, prev, out, 2, new Uint32Array(BLOCK));
  const gotDocs = new Uint32Array(BLOCK);
  const gotTfs = new Uint32Array(BLOCK);
  const read = decodeBlock(out, 2, docs.length, prev, gotDocs, gotTfs);
  return { words: out.subarray(2, end), read: read - 2, docs: [...gotDocs.subarray(0, docs.length)], tfs: [...gotTfs.subarray(0, docs.length)] };
}

describe('block postings codec', () => {
  it('round trips every width of gaps (0-32 bits) and tfs (0-16 bits), in full and shorter blocks', () => {
    const r = rng(3);
    for (const n of [1, 2, 31, 32, 33, 100, 127, BLOCK]) {
      for (let gapBits = 0; gapBits <= 32; gapBits++) {
        for (const tfBits of [0, 1, 5, 15, 16]) {
          const prev = r() < 0.5 ? -1 : Math.floor(r() * 1000);
          const { docs, tfs } = makeBlock(r, n, prev, gapBits, tfBits);
          const got = roundTrip(docs, tfs, prev);
          expect(got.docs, `n=${n} gap bits ${gapBits}`).toEqual(docs);
          expect(got.tfs, `n=${n} tf bits ${tfBits}`).toEqual(tfs);
          // The header names the widths the block needs, and the block is as long as they say.
          const header = got.words[0]!;
          expect(header & 0xff).toBe(widthFor(Math.max(...docs.map((d, i) => d - (i === 0 ? prev : docs[i - 1]!) - 1))));
          expect(header >>> 8).toBe(widthFor(Math.max(...tfs) - 1));
          expect(got.words.length).toBe(blockWords(n, header & 0xff, header >>> 8));
          expect(got.read).toBe(got.words.length);
        }
      }
    }
  });

  it('holds the extremes: document 2^32 - 1 (a 32-bit gap from the start), document 0, tf 65535', () => {
    expect(roundTrip([0xffffffff], [MAX_POSTING_TF], -1)).toMatchObject({ docs: [0xffffffff], tfs: [MAX_POSTING_TF] });
    expect(roundTrip([0], [1], -1)).toMatchObject({ docs: [0], tfs: [1], words: Uint32Array.of(0) });
    const full = Array.from({ length: BLOCK }, (_, i) => (i === BLOCK - 1 ? 0xffffffff : i));
    const tfs = Array.from({ length: BLOCK }, (_, i) => (i % 2 ? MAX_POSTING_TF : 1));
    expect(roundTrip(full, tfs, -1)).toMatchObject({ docs: full, tfs });
    // Consecutive documents and tf 1 everywhere: the block is its header alone.
    const dense = roundTrip(Array.from({ length: BLOCK }, (_, i) => 500 + i), new Array(BLOCK).fill(1), 499);
    expect(dense.words).toEqual(Uint32Array.of(0));
    expect(dense.docs[BLOCK - 1]).toBe(500 + BLOCK - 1);
  });

  it('refuses postings it cannot hold', () => {
    const out = new Uint32Array(MAX_BLOCK_WORDS);
    const scratch = new Uint32Array(BLOCK);
    expect(() => encodeBlock([5, 5], [1, 1], 2, -1, out, 0, scratch)).toThrow(/document 5 after 5/);
    expect(() => encodeBlock([3], [1], 1, 3, out, 0, scratch)).toThrow(/document 3 after 3/);
    expect(() => encodeBlock([1], [0], 1, -1, out, 0, scratch)).toThrow(/tf 0 outside/);
    expect(() => encodeBlock([1], [MAX_POSTING_TF + 1], 1, -1, out, 0, scratch)).toThrow(/tf 65536 outside/);
  });

  it('writes terms of 1, 127, 128, 129, 256 and 300 postings as blocks whose metadata bounds them, and WebAssembly decodes them as TypeScript does', () => {
    const r = rng(8);
    const docsInIndex = 5000;
    const norms = Float64Array.from({ length: docsInIndex }, () => 0.3 + 2 * r());
    const path = join(root, 'post.data');
    const writer = new BlockPostingsWriter(path, norms);
    const terms = [1, 127, 128, 129, 256, 300].map((df) => {
      const docs = Uint32Array.from(new Set(Array.from({ length: df * 3 }, () => Math.floor(r() * docsInIndex)))).sort().subarray(0, df);
      const tfs = Uint16Array.from(docs, () => 1 + Math.floor(r() ** 4 * 40));
      return { docs, tfs, max: writer.addTerm(docs, tfs) };
    });
    const { blockAt, blockLast, blockMax } = writer.finish();
    const bytes = readFileSync(path);
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    expect(blockAt[blockAt.length - 1]).toBe(words.length);
    const postOff = Uint32Array.from([0, ...terms.map((t) => t.docs.length)].map((_, i, a) => a.slice(0, i + 1).reduce((s, x) => s + x, 0)));
    const blockOff = blockOffsets(postOff);
    expect([...blockOff]).toEqual([0, 1, 2, 3, 5, 7, 10]);
    expect(blockLast.length).toBe(10);

    const memory = ScoringMemory.create(docsInIndex, words.length, blockLast.length);
    expect(memory, 'bm25.wasm is built (npm run build)').toBeDefined();
    memory!.words.set(words);
    memory!.blockAt.set(blockAt);
    terms.forEach(({ docs, tfs, max }, t) => {
      const got: number[] = [];
      const gotTfs: number[] = [];
      let termMax = 0;
      for (let b = blockOff[t]!; b < blockOff[t + 1]!; b++) {
        const n = Math.min(BLOCK, docs.length - BLOCK * (b - blockOff[t]!));
        const prev = b === blockOff[t] ? -1 : blockLast[b - 1]!;
        const d = new Uint32Array(BLOCK);
        const f = new Uint32Array(BLOCK);
        decodeBlock(words, blockAt[b]!, n, prev, d, f);
        expect(memory!.decode(b, n, prev >>> 0), `term ${t} block ${b}`).toEqual({ docs: d.slice(0, n), tfs: f.slice(0, n) });
        expect(blockLast[b]).toBe(d[n - 1]);
        for (let i = 0; i < n; i++) {
          const w = f[i]! / (f[i]! + norms[d[i]!]!);
          expect(blockMax[b]).toBeGreaterThanOrEqual(w);
          termMax = Math.max(termMax, w);
        }
        got.push(...d.subarray(0, n));
        gotTfs.push(...f.subarray(0, n));
      }
      expect(got).toEqual([...docs]);
      expect(gotTfs).toEqual([...tfs]);
      expect(max).toBe(termMax);
    });
  });

  it('rounds block bounds up to the next float32, never down', () => {
    for (const v of [0, 1, 0.1, 1 / 3, 0.999999999, 2 ** -140]) {
      const f = f32Above(v);
      expect(f).toBeGreaterThanOrEqual(v);
      expect(Math.fround(f)).toBe(f);
      if (Math.fround(v) !== v) expect(f - v).toBeLessThan(Math.abs(v) * 2 ** -22 + 2 ** -148);
    }
  });
});
