import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Chunk } from '../../src/corpus/chunk.js';
import { InputError } from '../../src/errors.js';
import { Analyzer, Bm25Scorer, buildIndex, openIndex, type SearchIndex } from '../../src/search/index.js';
import { readSharedBytes } from '../../src/search/open.js';
import { expectSameRanking, iterate, randomChunks, reference, rng, VOCAB } from './bm25-reference.js';

const root = mkdtempSync(join(tmpdir(), 'sleuth-index-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = () => join(root, `ix${dirCount++}`);

describe('BM25 top-k equals an exhaustive float64 reference', () => {
  for (const [k1, b, seed] of [[1.5, 0.75, 1], [0.9, 0.4, 2], [1.2, 1, 3]] as const) {
    it(`on random queries (k1=${k1}, b=${b})`, async () => {
      const chunks = randomChunks(1500, seed);
      const dir = freshDir();
      await buildIndex(iterate(chunks), dir, { k1, b });
      const index = await openIndex(dir);
      const referenceTopK = reference(chunks, index.analyzer, k1, b);
      const segmented = new Bm25Scorer(index.scorer.p, 64);
      const r = rng(seed * 101);
      let compared = 0;
      for (let q = 0; q < 150; q++) {
        const words = Array.from({ length: 1 + Math.floor(r() * 6) }, () => VOCAB[Math.floor(r() * VOCAB.length)]!);
        const query = words.join(' ');
        if (index.analyzer.terms(query).length === 0) continue;
        const k = [1, 3, 10, 50][q % 4]!;
        const want = referenceTopK(query, k);
        expectSameRanking(index.searchDocs(query, k), want, `query "${query}" k=${k}`);
        // The same over many small scoring segments (each a few dozen documents).
        expectSameRanking(segmented.topK(index.analyze(query).termIds, k), want, `query "${query}" k=${k}, segments of 64`);
        compared++;
      }
      expect(compared).toBeGreaterThan(100);
    });
  }
});

describe('BM25 scoring in WebAssembly', () => {
  it('runs where it is built, and gives the TypeScript loops\' results to the bit', async () => {
    const chunks = randomChunks(3000, 11);
    const dir = freshDir();
    await buildIndex(iterate(chunks), dir);
    const wasm = await openIndex(dir);
    const ts = await openIndex(dir, { scoringKernel: false });
    // `npm test` builds first, so the module is there: a silent fall back would hide a broken build.
    expect(wasm.scorer.usesKernel).toBe(true);
    expect(ts.scorer.usesKernel).toBe(false);
    const small = [new Bm25Scorer(wasm.scorer.p, 64), new Bm25Scorer(wasm.scorer.p, 64, false)];
    expect(small.map((s) => s.usesKernel)).toEqual([true, false]);
    const r = rng(5);
    for (let q = 0; q < 200; q++) {
      const query = Array.from({ length: 1 + Math.floor(r() * 8) }, () => VOCAB[Math.floor(r() * VOCAB.length)]!).join(' ');
      if (wasm.analyzer.terms(query).length === 0) continue;
      const k = [1, 5, 10, 100][q % 4]!;
      const want = ts.searchDocs(query, k);
      expect(wasm.searchDocs(query, k), query).toEqual(want);
      const ids = wasm.analyze(query).termIds;
      expect(small[0]!.topK(ids, k), query).toEqual(small[1]!.topK(ids, k));
    }
  });
});

describe('an index over shared texts and grep prefilter (readSharedBytes)', () => {
  it('answers searches, greps and reads exactly as the files do, across text shards', async () => {
    const chunks = randomChunks(600, 13);
    const dir = freshDir();
    await buildIndex(iterate(chunks), dir, { textShardBytes: 16_384 });
    const shared = readSharedBytes(dir);
    expect(shared.texts.length).toBeGreaterThan(3);
    // Memory other threads can view: what the search pool hands its workers.
    for (const bytes of [...shared.texts, shared.grep!]) expect(bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    const fromFiles = await openIndex(dir);
    const fromShared = await openIndex(dir, { shared });
    const r = rng(9);
    for (let q = 0; q < 40; q++) {
      const query = Array.from({ length: 1 + Math.floor(r() * 4) }, () => VOCAB[Math.floor(r() * VOCAB.length)]!).join(' ');
      if (fromFiles.analyzer.terms(query).length === 0) continue;
      expect(fromShared.search(query, 5), query).toEqual(fromFiles.search(query, 5));
    }
    for (const pattern of ['(?i)river\\s+\\w+', 'comedy', '\\w{8}']) {
      const want = fromFiles.grep(pattern, { k: 20 });
      expect(want.hits.length, pattern).toBeGreaterThan(0);
      expect(fromShared.grep(pattern, { k: 20 }), pattern).toEqual(want);
    }
    for (const doc of [0, 299, 599]) expect(fromShared.read(chunks[doc]!.id)).toEqual(fromFiles.read(chunks[doc]!.id));
    // Bytes that do not fit the manifest are refused, naming the file.
    const short = { ...shared, texts: [shared.texts[0]!.subarray(1), ...shared.texts.slice(1)] };
    await expect(openIndex(dir, { shared: short })).rejects.toThrow(/shared bytes of text\.0\.bin are \d+, the manifest says \d+ bytes/);
  });
});

describe('index directory', () => {
  const chunks = randomChunks(400, 7);
  let index: SearchIndex;
  let dir: string;

  it('is deterministic: same chunks, same bytes', async () => {
    dir = freshDir();
    const again = freshDir();
    await buildIndex(iterate(chunks), dir, { textShardBytes: 4096 });
    // The same chunks in batches of 37 (as readCorporaBatches gives them) make the same bytes.
    const batches = Array.from({ length: Math.ceil(chunks.length / 37) }, (_, i) => chunks.slice(37 * i, 37 * i + 37));
    await buildIndex(iterate(batches), again, { textShardBytes: 4096 });
    const files = readdirSync(dir).sort();
    expect(readdirSync(again).sort()).toEqual(files);
    expect(files.filter((f) => /^text\.\d+\.bin$/.test(f)).length).toBeGreaterThan(1);
    for (const f of files) expect(readFileSync(join(again, f)).equals(readFileSync(join(dir, f))), f).toBe(true);
    index = await openIndex(dir);
  });

  it('reads every chunk back by id across text shards, with metadata', () => {
    expect(index.size).toBe(chunks.length);
    for (const c of chunks) expect(index.read(c.id)).toEqual(c);
    expect(index.read('doc-999999')).toBeUndefined();
    expect(index.has('doc-3')).toBe(true);
    expect(index.has('doc-')).toBe(false);
    const doc = index.store.docOf('doc-42');
    expect(new TextDecoder().decode(index.store.textBytes(doc))).toBe(chunks[42]!.text);
  });

  it('records the analyzer and BM25 parameters in the manifest', () => {
    expect(index.manifest.analyzer).toMatchObject({ stemmer: 'porter2', stopwords: 'english', lowercase: true });
    expect(index.manifest.bm25).toEqual({ k1: 1.5, b: 0.75 });
    expect(index.manifest.counts.docs).toBe(400);
  });

  it('returns hits with title and a snippet around the query terms', async () => {
    const longText = 'filler words here. '.repeat(40) + 'The Golden Gate bridge is a suspension bridge. ' + 'more filler text. '.repeat(40);
    const d = freshDir();
    await buildIndex(iterate([{ id: 'gg', title: 'Golden Gate Bridge', text: longText }, { id: 'o', title: 'Other', text: 'nothing relevant' }]), d);
    const ix = await openIndex(d, { snippetChars: 80 });
    const [hit] = ix.search('suspension bridge');
    expect(hit!.id).toBe('gg');
    expect(hit!.title).toBe('Golden Gate Bridge');
    expect(hit!.snippet).toContain('suspension bridge');
    expect(hit!.snippet.length).toBeLessThanOrEqual(82);
    expect(hit!.snippet.startsWith('…')).toBe(true);
    expect(ix.search('suspension bridge', 1, { snippetChars: 400 })[0]!.snippet.length).toBeGreaterThan(300);
  });

  it('refuses empty and stopword-only queries; unknown words match nothing', () => {
    expect(() => index.search('   ')).toThrow(InputError);
    expect(() => index.search('the of and')).toThrow(/only stopwords/);
    expect(index.search('zzzunknownword')).toEqual([]);
  });

  it('refuses a truncated index, another version and a missing index, naming the problem', async () => {
    const d = freshDir();
    await buildIndex(iterate(chunks), d);
    truncateSync(join(d, 'post.data'), 8);
    await expect(openIndex(d)).rejects.toThrow(/post\.data is 8 bytes, the manifest says \d+: the index is truncated/);
    const v = freshDir();
    await buildIndex(iterate(chunks), v);
    const m = JSON.parse(readFileSync(join(v, 'manifest.json'), 'utf8'));
    writeFileSync(join(v, 'manifest.json'), JSON.stringify({ ...m, version: 99 }));
    await expect(openIndex(v)).rejects.toThrow(/format version 99, this sleuth reads version 3 \(and 4, with compressed texts\); rebuild with `sleuth index`/);
    await expect(openIndex(join(root, 'never-built'))).rejects.toThrow(/no search index .* run `sleuth index`/);
  });

  it('refuses indexes of versions 1 and 2 (raw postings), as the sleuth before wrote them, saying to rebuild', async () => {
    // Built by the sleuth of index format versions 1 and 2 (plain and compressed texts), kept as it wrote them.
    for (const version of [1, 2]) {
      const dir = fileURLToPath(new URL(`./fixtures/index-v${version}`, import.meta.url));
      expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).files).toHaveProperty('post.docs');
      const opened = openIndex(dir);
      await expect(opened).rejects.toThrow(InputError);
      await expect(opened).rejects.toThrow(new RegExp(`index-v${version} is a sleuth index of format version ${version}, with raw postings, which this sleuth no longer reads: it reads version 3 \\(and 4, with compressed texts\\), whose postings are block-compressed; rebuild with \`sleuth index\``));
    }
  });

  it('leaves the previous index intact and no temporary files when a build fails', async () => {
    const d = freshDir();
    await buildIndex(iterate(chunks), d);
    const before = readFileSync(join(d, 'manifest.json'), 'utf8');
    async function* failing(): AsyncGenerator<Chunk> {
      yield chunks[0]!;
      throw new InputError('corpus.jsonl:2: malformed JSON');
    }
    await expect(buildIndex(failing(), d)).rejects.toThrow(/malformed JSON/);
    expect(readFileSync(join(d, 'manifest.json'), 'utf8')).toBe(before);
    expect((await openIndex(d)).size).toBe(chunks.length);
    expect(readdirSync(root).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('refuses an empty corpus and duplicate ids', async () => {
    await expect(buildIndex(iterate([]), freshDir())).rejects.toThrow(/empty corpus/);
    const dup = [{ id: 'a', title: 't', text: 'x' }, { id: 'a', title: 't', text: 'y' }];
    await expect(buildIndex(iterate(dup), freshDir())).rejects.toThrow(/duplicate chunk id "a"/);
  });

  it('builds with a configured analyzer and uses it for queries', async () => {
    const d = freshDir();
    await buildIndex(iterate([{ id: '1', title: 'The Who', text: 'running' }, { id: '2', title: 'x', text: 'runs' }]), d, { analyzer: { stemmer: 'none', stopwords: 'none' } });
    const ix = await openIndex(d);
    expect(ix.search('the who').map((h) => h.id)).toEqual(['1']);
    expect(ix.search('running').map((h) => h.id)).toEqual(['1']);
  });
});

describe('the WebAssembly word loops', () => {
  // Pieces that exercise every rule of both word definitions (tokenize.ts and grep/fold.ts).
  const PIECES = ['Kiss', "O'Neill", 'kiss’s', 'dogʼs', "'quoted'", 'rock’n’roll', 'Café', 'naïve', 'e\u0301te', 'ſtraße', 'K-Kelvin',
    'ΑΘΗΝΑ', 'Москва', '東京都', '𝐀𝐁𝐂', '𝟘𝟙', '😀smile', 'a😀b', '\ud800lone', 'tail\udc00', 'snake_case', '42nd', '3.14', 'x_1',
    'U.S.A.', '—dash—', 'tab\tsep', 'line\nbreak', '  ', '', '٣٤', 'ǅemal', 'İstanbul', 'ﬁne', 'the', 'and', 'running', 'ran'];

  it('build the same index as the TypeScript loops, byte for byte, on every kind of word', async () => {
    const r = rng(11);
    const pick = () => PIECES[Math.floor(r() * PIECES.length)]!;
    const joiners = [' ', ', ', '-', "'", '’', '_', ''];
    const phrase = (n: number) => Array.from({ length: n }, () => pick() + joiners[Math.floor(r() * joiners.length)]).join('');
    const chunks: Chunk[] = Array.from({ length: 300 }, (_, i) => ({ id: `u${i}`, title: phrase(1 + (i % 4)), text: phrase(5 + (i % 60)) }));
    // A term repeated past the 16-bit frequency cap.
    chunks.push({ id: 'many', title: 'many', text: 'again '.repeat(70_000) });
    const built = [];
    for (const wasm of [true, false]) {
      for (const parallel of [true, false]) {
        const dir = freshDir();
        await buildIndex(iterate(chunks), dir, { wasm, parallel, textShardBytes: 8192 });
        built.push(dir);
      }
    }
    const files = readdirSync(built[0]!).sort();
    expect(files).toContain('grep.bin');
    for (const dir of built.slice(1)) {
      expect(readdirSync(dir).sort()).toEqual(files);
      for (const f of files) expect(readFileSync(join(dir, f)).equals(readFileSync(join(built[0]!, f))), `${dir}/${f}`).toBe(true);
    }
    const index = await openIndex(built[0]!);
    expect(index.search('Москва', 3).map((h) => h.id).length).toBeGreaterThan(0);
  });
});
