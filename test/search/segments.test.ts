import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Chunk } from '../../src/corpus/chunk.js';
import { Bm25Scorer, buildIndex, openIndex, openSearcher, SegmentedIndex, type SearchIndex } from '../../src/search/index.js';
import { MAX_SEGMENT_DOCS } from '../../src/search/scoring-memory.js';
import { lz4Bound, lz4Compress, lz4Decompress, lz4DecompressPlain, lz4DecompressWasm, lz4WasmAvailable } from '../../src/search/lz4.js';
import { expectSameRanking, iterate, randomChunks, reference, rng, VOCAB } from './bm25-reference.js';
import { unseal } from './damage.js';

const root = mkdtempSync(join(tmpdir(), 'sleuth-segments-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = () => join(root, `ix${dirCount++}`);

function randomQuery(r: () => number): string {
  return Array.from({ length: 1 + Math.floor(r() * 6) }, () => VOCAB[Math.floor(r() * VOCAB.length)]!).join(' ');
}

describe('an index built in segments', () => {
  for (const [k1, b, seed] of [[1.5, 0.75, 1], [0.9, 0.4, 2], [1.2, 1, 3]] as const) {
    it(`returns exactly the top k of one index over the same chunks, and of brute force (k1=${k1}, b=${b})`, async () => {
      const chunks = randomChunks(3000, seed);
      const single = freshDir();
      const split = freshDir();
      await buildIndex(iterate(chunks), single, { k1, b });
      // About 40,000 postings in all: segments of at most 5,000 make eight or nine.
      await buildIndex(iterate(chunks), split, { k1, b, segmentPostings: 5_000 });
      const one = (await openSearcher(single)) as SearchIndex;
      const many = await openSearcher(split);
      expect(many).toBeInstanceOf(SegmentedIndex);
      const segments = (many as SegmentedIndex).segments;
      expect(segments.length).toBeGreaterThanOrEqual(6);
      // Segment lengths differ, so each segment's own avgdl differs from the collection's.
      expect(new Set(segments.map((s) => s.manifest.avgdl)).size).toBeGreaterThan(1);
      expect(many.size).toBe(chunks.length);
      const brute = reference(chunks, one.analyzer, k1, b);
      const r = rng(seed * 7);
      let compared = 0;
      for (let q = 0; q < 200; q++) {
        const query = randomQuery(r);
        if (one.analyzer.terms(query).length === 0) continue;
        const k = [1, 3, 10, 50][q % 4]!;
        const want = one.searchDocs(query, k);
        // To the bit: the same documents, the same scores, the same order.
        expect(many.searchDocs(query, k), `query "${query}" k=${k}`).toEqual(want);
        expectSameRanking(want, brute(query, k), `query "${query}" k=${k} (brute force)`);
        compared++;
      }
      expect(compared).toBeGreaterThan(150);
      // Hits as the one index gives them: ids, titles, scores and snippets.
      for (const query of ['film actress comedy', 'river bridge tower', 'kings dynasty empire ruled']) {
        expect(many.search(query, 10, { snippetChars: 60 })).toEqual(one.search(query, 10, { snippetChars: 60 }));
      }
      one.close();
      many.close();
    });
  }

  it('reads, greps and refuses as one index does', async () => {
    const chunks = randomChunks(2000, 11);
    const single = freshDir();
    const split = freshDir();
    await buildIndex(iterate(chunks), single);
    await buildIndex(iterate(chunks), split, { segmentPostings: 4_000 });
    const one = await openIndex(single);
    const many = await openSearcher(split);
    for (const i of [0, 1, 499, 1000, 1999]) {
      expect(many.read(chunks[i]!.id)).toEqual(one.read(chunks[i]!.id));
      expect(many.has(chunks[i]!.id)).toBe(true);
    }
    expect(many.read('no-such-id')).toBeUndefined();
    expect(many.has('no-such-id')).toBe(false);
    for (const pattern of ['kiss tell', '(?i)SHIRLEY\\s+temple', 'x[0-9] x[0-9]', 'protocol']) {
      for (const k of [1, 10, 100]) {
        const a = one.grep(pattern, { k });
        const b = many.grep(pattern, { k });
        expect(b.hits, `${pattern} k=${k}`).toEqual(a.hits);
        expect(b.timedOut).toBe(false);
      }
    }
    expect(() => many.search('the of and')).toThrow(/no searchable words/);
    expect(() => many.search('   ')).toThrow(/empty query/);
    // One-segment readers name the problem rather than misread it.
    await expect(openIndex(split)).rejects.toThrow(/is an index of \d+ segments/);
    one.close();
    many.close();
  });

  it('refuses an id repeated across segments, leaving nothing behind', async () => {
    const chunks = randomChunks(1200, 4);
    const dup: Chunk[] = [...chunks, { ...chunks[3]!, text: 'another text' }];
    const dir = freshDir();
    await expect(buildIndex(iterate(dup), dir, { segmentPostings: 3_000 })).rejects.toThrow(`duplicate chunk id "${chunks[3]!.id}"`);
    expect(readdirSync(root).filter((n) => n.includes('tmp'))).toEqual([]);
  });

  it('replaces a segmented index with a one-segment one and back', async () => {
    const chunks = randomChunks(800, 6);
    const dir = freshDir();
    await buildIndex(iterate(chunks), dir, { segmentPostings: 2_000 });
    expect(await openSearcher(dir)).toBeInstanceOf(SegmentedIndex);
    await buildIndex(iterate(chunks), dir);
    const one = await openSearcher(dir);
    expect(one).not.toBeInstanceOf(SegmentedIndex);
    expect(one.size).toBe(800);
    await buildIndex(iterate(chunks), dir, { segmentPostings: 2_000 });
    expect((await openSearcher(dir)).size).toBe(800);
  });
});

describe('LZ4 blocks', () => {
  const r = rng(3);
  const inputs: Uint8Array[] = [
    new Uint8Array(0),
    new Uint8Array([7]),
    new TextEncoder().encode('abcabcabcabcabcabcabcabcabcabc'),
    new Uint8Array(65_535).fill(42),
    Uint8Array.from({ length: 40_000 }, () => Math.floor(r() * 256)),
    Uint8Array.from({ length: 50_000 }, (_, i) => (i % 1000 < 500 ? i % 7 : Math.floor(r() * 4))),
    new TextEncoder().encode(randomChunks(300, 9).map((c) => c.text).join(' ').slice(0, 60_000)),
    // Every match offset from 1 to 20 and lengths around the 8-byte copy steps.
    new TextEncoder().encode(Array.from({ length: 400 }, (_, i) => 'xyzw'.repeat(1 + (i % 5)).slice(0, 1 + (i % 20)) + String(i % 13)).join('')),
  ];

  it('decode the same in WebAssembly and TypeScript, and refuse the same damaged blocks', () => {
    // npm test builds the module first: this checks the path the index really reads through.
    expect(lz4WasmAvailable()).toBe(true);
    const decode = (f: (s: Uint8Array, d: Uint8Array) => unknown, src: Uint8Array, length: number) => {
      const out = new Uint8Array(length);
      try {
        return f(src, out) === false ? 'refused' : Buffer.from(out).toString('hex');
      } catch {
        return 'refused';
      }
    };
    const damage = rng(11);
    let cases = 0;
    let refused = 0;
    for (const input of inputs) {
      const out = new Uint8Array(lz4Bound(input.length));
      const block = out.subarray(0, lz4Compress(input, out));
      const variants: [Uint8Array, number][] = [[block, input.length], [block, input.length + 1], [block, Math.max(0, input.length - 1)]];
      for (let cut = 1; cut <= Math.min(6, block.length); cut++) variants.push([block.subarray(0, block.length - cut), input.length]);
      for (let v = 0; v < 60 && block.length > 0; v++) {
        const bad = block.slice();
        bad[Math.floor(damage() * bad.length)] = Math.floor(damage() * 256);
        variants.push([bad, input.length]);
      }
      for (const [src, length] of variants) {
        const plain = decode(lz4DecompressPlain, src, length);
        expect(decode(lz4DecompressWasm, src, length), `input of ${input.length} bytes, block of ${src.length}`).toBe(plain);
        cases++;
        if (plain === 'refused') refused++;
      }
    }
    expect(cases).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(100);
  });

  it('round-trip every kind of input byte for byte', () => {
    for (const input of inputs) {
      const out = new Uint8Array(lz4Bound(input.length));
      const n = lz4Compress(input, out);
      const back = new Uint8Array(input.length);
      lz4Decompress(out.subarray(0, n), back);
      expect(Buffer.from(back).equals(Buffer.from(input)), `input of ${input.length} bytes`).toBe(true);
    }
    const text = inputs[6]!;
    const out = new Uint8Array(lz4Bound(text.length));
    expect(lz4Compress(text, out)).toBeLessThan(text.length * 0.7);
    // A damaged block is an error, not wrong bytes.
    const n = lz4Compress(inputs[2]!, out);
    expect(() => lz4Decompress(out.subarray(0, n - 3), new Uint8Array(inputs[2]!.length))).toThrow(/damaged LZ4 block/);
  });
});

describe('compressed texts', () => {
  it('read back byte-identical, and search, grep and read as plain texts do', async () => {
    const chunks = randomChunks(3000, 8);
    // Texts of every size: empty, multi-byte characters, and longer than a block (and than 64 KiB).
    chunks[5] = { ...chunks[5]!, text: '' };
    chunks[6] = { ...chunks[6]!, text: 'naïve café — 東京 🎉 '.repeat(50) };
    chunks[7] = { ...chunks[7]!, text: randomChunks(2500, 1).map((c) => c.text).join(' ') };
    chunks[2500] = { ...chunks[2500]!, text: 'ship '.repeat(30_000) };
    expect(new TextEncoder().encode(chunks[7]!.text).length).toBeGreaterThan(70_000);
    const plain = freshDir();
    const packed = freshDir();
    const packedSegments = freshDir();
    await buildIndex(iterate(chunks), plain, { textShardBytes: 100_000 });
    await buildIndex(iterate(chunks), packed, { compressTexts: true, textShardBytes: 100_000 });
    await buildIndex(iterate(chunks), packedSegments, { compressTexts: true, segmentPostings: 6_000 });
    const m = JSON.parse(readFileSync(join(packed, 'manifest.json'), 'utf8'));
    expect(m.version).toBe(4);
    expect(m.textCodec).toBe('lz4');
    expect(m.textShards.length).toBeGreaterThan(1);
    const onDisk = (dir: string, ext: string) => readdirSync(dir).filter((n) => n.endsWith(ext)).reduce((s, n) => s + readFileSync(join(dir, n)).length, 0);
    expect(onDisk(packed, '.lz4')).toBeLessThan(onDisk(plain, '.bin') * 0.8);
    const a = await openIndex(plain);
    const b = await openIndex(packed);
    const c = await openSearcher(packedSegments);
    const encoder = new TextEncoder();
    // Every text, in a shuffled order (random access, not a scan), byte for byte.
    const r = rng(2);
    const order = chunks.map((_, i) => i).sort(() => r() - 0.5);
    for (const i of order) {
      const want = encoder.encode(chunks[i]!.text);
      expect(Buffer.from(b.store.textBytes(i)).equals(Buffer.from(want)), `text ${i}`).toBe(true);
      expect(Buffer.from(c.store.textBytes(i)).equals(Buffer.from(want)), `text ${i} (segments)`).toBe(true);
      expect(Buffer.from(a.store.textBytes(i)).equals(Buffer.from(want))).toBe(true);
    }
    for (const i of [0, 6, 7, 2500, 2999]) expect(b.read(chunks[i]!.id)).toEqual(a.read(chunks[i]!.id));
    for (const query of ['film actress comedy', 'ship river', 'café tokyo']) {
      if (a.analyzer.terms(query).length === 0) continue;
      expect(b.search(query, 10)).toEqual(a.search(query, 10));
      expect(c.search(query, 10)).toEqual(a.search(query, 10));
    }
    for (const pattern of ['kiss tell', 'café', 'ship ship ship', '(?i)temple\\s+x\\d']) {
      expect(b.grep(pattern, { k: 50 }).hits).toEqual(a.grep(pattern, { k: 50 }).hits);
      expect(c.grep(pattern, { k: 50 }).hits).toEqual(a.grep(pattern, { k: 50 }).hits);
    }
    a.close();
    b.close();
    c.close();
  });

  it('refuses damaged compressed texts, naming the file', async () => {
    const chunks = randomChunks(500, 12);
    const dir = freshDir();
    await buildIndex(iterate(chunks), dir, { compressTexts: true });
    const file = join(dir, 'text.0.lz4');
    const bytes = readFileSync(file);
    // Same size, garbage inside: the manifest's size check passes, decoding must not.
    bytes.fill(0xff, 0, bytes.length);
    writeFileSync(file, bytes);
    const ix = await openIndex(dir);
    // Its checksums find it before the decoder sees it.
    expect(() => ix.store.text(3)).toThrow(/text\.0\.lz4 is damaged \(bytes 0\.\.4096 have checksum [0-9a-f]{8}, the index recorded [0-9a-f]{8}\)/);
    ix.close();
    // An index without checksums (built before them): the LZ4 decoder still refuses the block.
    unseal(dir);
    const old = await openIndex(dir);
    expect(() => old.store.text(3)).toThrow(/text\.0\.lz4, block 0: damaged LZ4 block/);
    old.close();
  });
});

describe('block-max MaxScore pruning', () => {
  it('gives the exhaustive top k to the bit, beside the exhaustive loop in WebAssembly and TypeScript over small and default segments', async () => {
    const chunks = randomChunks(4000, 21);
    const dir = freshDir();
    await buildIndex(iterate(chunks), dir);
    const index = await openIndex(dir);
    const p = index.scorer.p;
    const exhaustive = new Bm25Scorer(p, MAX_SEGMENT_DOCS, true, 'exhaustive');
    const variants = [new Bm25Scorer(p, MAX_SEGMENT_DOCS, true, 'pruned'), new Bm25Scorer(p, 64, true, 'exhaustive'), new Bm25Scorer(p, 64, false, 'pruned'), new Bm25Scorer(p, 256, false, 'auto'), index.scorer];
    expect(variants[0]!.usesKernel).toBe(index.scorer.usesKernel);
    const r = rng(77);
    let compared = 0;
    for (let q = 0; q < 300; q++) {
      const query = randomQuery(r);
      if (index.analyzer.terms(query).length === 0) continue;
      const ids = index.analyze(query).termIds;
      for (const k of [1, 5, 10, 100]) {
        const want = exhaustive.topK(ids, k);
        for (const v of variants) expect(v.topK(ids, k), `query "${query}" k=${k}`).toEqual(want);
      }
      compared++;
    }
    expect(compared).toBeGreaterThan(200);
    index.close();
  });
});
