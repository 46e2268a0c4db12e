import { mkdtempSync, mkdirSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { rmSync } from 'node:fs';
import { chunkText, contentChunkId, isUtf8Chunk, type Chunk, type SourceChunk } from '../../src/corpus/chunk.js';
import { readChunkBatches, readChunks, readCorpora, readCorporaBatches, readSourceBatches } from '../../src/corpus/read.js';
import { IdTable } from '../../src/corpus/id-table.js';
import { deriveTitle } from '../../src/corpus/title.js';
import { embeddedChunks } from '../../src/corpus/embedded.js';
import { decodeHtmlEntities } from '../../src/corpus/entities.js';
import { InputError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'sleuth-corpus-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string | Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

async function all(it: AsyncIterable<Chunk>): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}

async function rejection(it: AsyncIterable<Chunk>): Promise<InputError> {
  try {
    await all(it);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error('expected an InputError');
}

describe('JSONL chunks', () => {
  it('reads id, title, text and keeps other fields as meta', async () => {
    const p = file('a.jsonl', '{"id":"c1","title":"T1","text":"one","company":"ACME","year":2020}\n\n{"id":2,"title":"T2","text":"two"}\r\n');
    expect(await all(readChunks(p))).toEqual([
      { id: 'c1', title: 'T1', text: 'one', meta: { company: 'ACME', year: 2020 } },
      { id: '2', title: 'T2', text: 'two' },
    ]);
  });
  it('names file and line of a malformed line or a missing field', async () => {
    const bad = file('bad.jsonl', '{"id":"a","title":"t","text":"x"}\n{"id":"b", "text": \n');
    expect((await rejection(readChunks(bad))).message).toMatch(/bad\.jsonl:2: not valid JSON/);
    const missing = file('missing.jsonl', '{"id":"a","title":"t","text":"x"}\n{"id":"b","title":"t"}\n');
    expect((await rejection(readChunks(missing))).message).toMatch(/missing\.jsonl:2: missing field "text"/);
    const noId = file('noid.jsonl', '{"title":"t","text":"x"}\n');
    expect((await rejection(readChunks(noId, 'jsonl'))).message).toMatch(/noid\.jsonl:1: missing field "id"/);
  });
  it('drops a repeated id with the same content, refuses one with different content', async () => {
    const same = file('same.jsonl', '{"id":"a","title":"t","text":"x"}\n{"id":"a","title":"t","text":"x"}\n');
    expect(await all(readChunks(same))).toHaveLength(1);
    const diff = file('diff.jsonl', '{"id":"a","title":"t","text":"x"}\n{"id":"a","title":"t","text":"y"}\n');
    expect((await rejection(readChunks(diff))).message).toMatch(/diff\.jsonl:2: duplicate chunk id "a" with different content/);
  });
  it('tells different content under one id apart at either end of a long text', async () => {
    const long = 'word '.repeat(400);
    const lines = (a: string, b: string) => [a, b].map((text) => JSON.stringify({ id: 'a', title: 't', text })).join('\n') + '\n';
    expect((await rejection(readChunks(file('head.jsonl', lines(long, 'W' + long.slice(1)))))).message).toMatch(/head\.jsonl:2: duplicate chunk id "a"/);
    expect((await rejection(readChunks(file('tail.jsonl', lines(long, long.slice(0, -1) + '!'))))).message).toMatch(/tail\.jsonl:2: duplicate chunk id "a"/);
    expect((await rejection(readChunks(file('len.jsonl', lines(long, long + ' '))))).message).toMatch(/len\.jsonl:2: duplicate chunk id "a"/);
  });
  it('reads in batches the same chunks as one at a time, each line once', async () => {
    // Lines long enough that the 1 MiB read buffer ends inside several of them.
    const rows = Array.from({ length: 3000 }, (_, i) => ({ id: `c${i % 2500}`, title: `T${i % 2500}`, text: `text ${i % 2500} `.repeat(60) }));
    const p = file('many.jsonl', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const batches: Chunk[][] = [];
    for await (const b of readChunkBatches(p)) batches.push(b);
    expect(batches.length).toBeGreaterThan(1);
    const flat = batches.flat();
    expect(flat).toEqual(await all(readChunks(p)));
    expect(flat.map((c) => c.id)).toEqual(rows.slice(0, 2500).map((r) => r.id));
  });
  it('refuses an empty corpus and an unreadable path, naming them', async () => {
    const empty = file('empty.jsonl', '\n\n');
    expect((await rejection(readChunks(empty))).message).toMatch(/empty\.jsonl: no chunks found/);
    expect((await rejection(readChunks(join(dir, 'nope.jsonl')))).message).toMatch(/cannot read corpus .*nope\.jsonl: ENOENT/);
  });
  it('reads gzip files and directories of corpus files in name order', async () => {
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    writeFileSync(join(sub, 'b.jsonl.gz'), gzipSync('{"id":"b","title":"B","text":"bee"}\n'));
    writeFileSync(join(sub, 'a.jsonl'), '{"id":"a","title":"A","text":"ay"}\n');
    writeFileSync(join(sub, 'notes.txt'), 'ignored');
    expect((await all(readChunks(sub))).map((c) => c.id)).toEqual(['a', 'b']);
  });
  it('reports progress in bytes', async () => {
    const p = file('prog.jsonl', '{"id":"a","title":"t","text":"x"}\n');
    const seen: [number, number][] = [];
    await all(readCorpora([{ path: p }], { onProgress: (b, t) => seen.push([b, t]) }));
    expect(seen.at(-1)).toEqual([34, 34]);
  });
});

describe('JSONL texts left as UTF-8 (readSourceBatches)', () => {
  /** Every chunk of a file as readSourceBatches gives it, texts as strings, or the error's message. */
  async function viaUtf8(path: string): Promise<{ chunks: (Chunk & { utf8: boolean })[] } | { error: string }> {
    try {
      const chunks = [];
      for await (const batch of readSourceBatches([{ path }])) {
        for (const c of batch as SourceChunk[]) chunks.push({ id: c.id, title: c.title, text: chunkText(c), ...(c.meta ? { meta: c.meta } : {}), utf8: isUtf8Chunk(c) });
      }
      return { chunks };
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      return { error: err.message };
    }
  }
  async function viaStrings(path: string): Promise<{ chunks: Chunk[] } | { error: string }> {
    try {
      const chunks = [];
      for await (const batch of readCorporaBatches([{ path }])) chunks.push(...batch);
      return { chunks };
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      return { error: err.message };
    }
  }
  const withoutFlag = (r: Awaited<ReturnType<typeof viaUtf8>>) => ('error' in r ? r : { chunks: r.chunks.map(({ utf8: _, ...c }) => c) });

  it('gives the chunks and errors of the JSON.parse path on every kind of line', async () => {
    const enc = (s: string) => Buffer.from(s, 'utf8');
    // Lines for the fast path (escapes of every kind, raw multi-byte UTF-8, any key order and
    // spacing) and lines it must leave to JSON.parse (meta, non-string values, lone surrogates,
    // invalid UTF-8, a byte-order mark, bad JSON).
    const good: (string | Buffer)[] = [
      '{"id":"a1","title":"Plain","text":"plain text"}',
      '{ "text" : "reordered \\"quoted\\" \\\\ back\\/slash" ,\t"id": "a2" , "title":"T" }',
      '{"id":"a3","title":"Esc","text":"tab\\tnl\\ncr\\rbs\\bff\\f \\u00e9\\u4e2d \\ud83d\\ude00 \\u0000 end"}',
      '{"id":"a4","title":"Raw","text":"café 中文 😀 ſtraße K ﬁ \u007f"}',
      '{"id":"a5","text":"no title here: the first line\\nsecond"}',
      '{"id":"a6","title":"","text":""}',
      '{"id":"a7","title":"Long","text":"' + 'word '.repeat(3000) + '"}',
      '{"id":"\\u0061\\u0038","title":"Escaped id and key","\\u0074ext":"x"}',
      '{"id":"a9","title":"CRLF","text":"line ends with CR LF"}\r',
      '   ',
      '',
      '{"id":"m1","title":"Meta","text":"t","source":"x","n":[1,{"a":null}]}',
      '{"id":"m2","title":null,"text":"null title"}',
      '{"id":3,"title":"Number id","text":"t"}',
      '{"id":"m4","title":"Lone","text":"lone \\ud800 surrogate"}',
      '{"id":"m5","title":"Lone low","text":"\\udc00"}',
      '{"id":"m6","title":"Dup","text":"first","text":"second"}',
      // Invalid UTF-8, one kind a line: a stray byte, overlong forms, an encoded surrogate, past U+10FFFF, cut short.
      ...[[0xff], [0xc0, 0x80], [0xe0, 0x80, 0x80], [0xf0, 0x80, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]].map((bytes, i) =>
        Buffer.concat([enc(`{"id":"m7-${i}","title":"Bad UTF-8","text":"a`), Buffer.from(bytes), enc('z"}')]),
      ),
      '{"id":"m8","title":"Space\u00a0","text":"nbsp\u2028ls"}',
    ];
    const body = (lines: (string | Buffer)[]) => Buffer.concat(lines.flatMap((l) => [typeof l === 'string' ? enc(l) : l, enc('\n')]));
    const path = file('utf8-fast.jsonl', body(good));
    const fast = await viaUtf8(path);
    expect(withoutFlag(fast)).toEqual(await viaStrings(path));
    // The plain records did take the fast path; the others did not.
    if (!('chunks' in fast)) throw new Error(fast.error);
    const taken = fast.chunks.filter((c) => c.utf8).map((c) => c.id);
    expect(taken).toEqual(['a1', 'a2', 'a3', 'a4', 'a6', 'a7', 'a8', 'a9', 'm8']);

    // A byte-order mark on the first line, and lines that are errors: the same message either way.
    const bad = [
      ['\ufeff{"id":"b1","title":"BOM","text":"x"}'],
      ['{"id":"e1","title":"x","text":"unterminated}'],
      ['{"id":"e2","title":"x","text":"bad \\x escape"}'],
      ['{"id":"e3","title":"x","text":"raw \u0001 control"}'],
      ['{"id":"","title":"x","text":"empty id"}'],
      ['{"id":"e5","title":"x"}'],
      ['{"id":"e6","title":"x","text":"t"} trailing'],
      ['{"id":"e7","title":"x","text":"t",}'],
      ['{"id":"e8","title":"x","text":"same"}', '{"id":"e8","title":"x","text":"different"}'],
      ['{"id":"e9","title":"x","text":"same"}', '{"id":"e9","title":"x","text":"same"}'],
      ['[1,2]'],
    ];
    for (const [i, lines] of bad.entries()) {
      const p = file(`utf8-bad-${i}.jsonl`, body(lines));
      expect(withoutFlag(await viaUtf8(p)), lines.join(' / ')).toEqual(await viaStrings(p));
    }
  });

  it('tells a repeat from a different chunk under one id across a UTF-8 line and a string chunk', async () => {
    // The fast path's fingerprint (computed in WebAssembly) must be the string chunk's.
    // Differences within the first or last 64 bytes, one of them in an emoji cut by the 64th byte.
    const texts = ['short', 'é'.repeat(40), 'x'.repeat(60) + '😀' + 'y'.repeat(70), 'mid 東京 ' + 'z'.repeat(100) + ' 𝐀end'];
    const chunks = texts.map((text, i) => ({ id: `f${i}`, title: i % 2 ? `Title 𝐀 ${i}` : `T${i}`, text }));
    const lines = file('fp.jsonl', chunks.map((c) => JSON.stringify(c)).join('\n'));
    const same = file('fp-same.json', JSON.stringify(chunks));
    const read = [];
    for await (const batch of readSourceBatches([{ path: lines }, { path: same }])) read.push(...batch);
    expect(read.map((c) => c.id)).toEqual(chunks.map((c) => c.id));
    expect(read.every((c) => isUtf8Chunk(c))).toBe(true);
    for (const [i, changed] of [[0, 'shorT'], [2, 'x'.repeat(60) + '😁' + 'y'.repeat(70)], [3, texts[3]!.replace('𝐀end', '𝐁end')]] as const) {
      const other = file(`fp-other-${i}.json`, JSON.stringify([{ ...chunks[i]!, text: changed }]));
      await expect(all(readSourceBatches([{ path: lines }, { path: other }]) as AsyncIterable<never>)).rejects.toThrow(/duplicate chunk id "f\d" with different content/);
    }
  });

  it('keeps line numbers and chunks right across read buffers', async () => {
    // Over 64 KiB in lines of every length, so that lines straddle the reads.
    const lines: string[] = [];
    for (let i = 0; i < 400; i++) lines.push(JSON.stringify({ id: `L${i}`, title: `t${i}`, text: 'é'.repeat(i * 7) + ` ${i}` }));
    lines[399] = '{"id":"L399","text":}';
    const path = file('utf8-long.jsonl', lines.join('\n'));
    const fast = await viaUtf8(path);
    expect(fast).toEqual({ error: `${path}:400: not valid JSON (${(await viaStrings(path) as { error: string }).error.split('not valid JSON (')[1]!.slice(0, -1)})` });
    lines[399] = JSON.stringify({ id: 'L399', title: 't399', text: 'last line, no newline' });
    writeFileSync(path, lines.join('\n'));
    const read = await viaUtf8(path);
    if (!('chunks' in read)) throw new Error(read.error);
    expect(read.chunks.map((c) => c.id)).toEqual(lines.map((_, i) => `L${i}`));
    expect(read.chunks.every((c) => c.utf8)).toBe(true);
    expect(withoutFlag(read)).toEqual(await viaStrings(path));
  });
});

describe('HotpotQA and MuSiQue layouts', () => {
  const para = (title: string, text: string) => ({ id: contentChunkId(title, text), title, text });
  it('reads IRCoT contexts, normalising whitespace and hashing ids', async () => {
    const p = file('ircot.jsonl', JSON.stringify({ question_id: 'q', contexts: [{ id: '0', title: 'Kiss and Tell', paragraph_text: 'A film.  It stars  Shirley.', is_supporting: true }] }) + '\n');
    expect(await all(readChunks(p))).toEqual([para('Kiss and Tell', 'A film. It stars Shirley.')]);
  });
  it('gives the same id to one paragraph from the corpus JSON and the question file', async () => {
    const corpus = file('hp_corpus.json', JSON.stringify({ 'Kiss and Tell': ['A film.', ' It stars  Shirley.'] }));
    const questions = file('hp_questions.json', JSON.stringify([{ _id: 'x', question: 'q', context: [['Kiss and Tell', ['A film.', ' It stars Shirley.']]] }]));
    const want = [para('Kiss and Tell', 'A film. It stars Shirley.')];
    expect(await all(readChunks(corpus, 'hotpotqa'))).toEqual(want);
    expect(await all(readChunks(questions))).toEqual(want);
    // Read together, the second copy is deduplicated.
    expect(await all(readCorpora([{ path: corpus }, { path: questions }]))).toEqual(want);
  });
  it('reads the MuSiQue corpus and question paragraphs', async () => {
    const corpus = file('mq_corpus.json', JSON.stringify([{ title: 'Journal', text: 'A journal.' }]));
    const questions = file('mq_q.jsonl', JSON.stringify({ id: 'q', paragraphs: [{ idx: 0, title: 'Journal', paragraph_text: 'A journal.', is_supporting: false }] }) + '\n');
    expect(await all(readChunks(corpus))).toEqual([para('Journal', 'A journal.')]);
    expect(await all(readChunks(questions, 'musique'))).toEqual([para('Journal', 'A journal.')]);
  });
  it('names the record that is not in the layout', async () => {
    const p = file('mq_bad.json', JSON.stringify([{ title: 'x', text: 'y' }, { title: 'z' }]));
    expect((await rejection(readChunks(p, 'musique'))).message).toMatch(/mq_bad\.json \(record 1\): not the MuSiQue corpus/);
  });
});

describe('Parquet (Harness-1 corpora layout)', () => {
  it('reads chunk id, text and metadata over several row groups, deriving titles', async () => {
    const n = 25;
    const buf = parquetWriteBuffer({
      columnData: [
        { name: 'chunk_id', data: Array.from({ length: n }, (_, i) => `0000320193-20-000096_${i}`) },
        { name: 'text', data: Array.from({ length: n }, (_, i) => `Company: Apple Inc.\nFiling Date: 2020-10-30\nForm: 10-K\nItem: 7\n\nRevenue part ${i}.`) },
        { name: 'company', data: Array.from({ length: n }, () => 'Apple Inc.') },
        { name: 'form', data: Array.from({ length: n }, () => '10-K') },
      ],
      rowGroupSize: 10,
    });
    const p = file('sec.parquet', new Uint8Array(buf));
    const chunks = await all(readChunks(p));
    expect(chunks).toHaveLength(n);
    expect(chunks[13]).toEqual({
      id: '0000320193-20-000096_13',
      title: 'Apple Inc. · 10-K · 2020-10-30 · Item 7',
      text: 'Company: Apple Inc.\nFiling Date: 2020-10-30\nForm: 10-K\nItem: 7\n\nRevenue part 13.',
      meta: { company: 'Apple Inc.', form: '10-K' },
    });
  });
  it('names a file that is not Parquet and a layout without an id column', async () => {
    const junk = file('junk.parquet', 'not parquet at all');
    expect((await rejection(readChunks(junk))).message).toMatch(/junk\.parquet: not a readable Parquet file/);
    const buf = parquetWriteBuffer({ columnData: [{ name: 'body', data: ['x'] }] });
    const noId = file('noid.parquet', new Uint8Array(buf));
    expect((await rejection(readChunks(noId))).message).toMatch(/noid\.parquet: Parquet corpus needs a chunk id column/);
  });
});

describe('deriveTitle', () => {
  it('follows the documented order: metadata, text header, title-like column, first line', () => {
    expect(deriveTitle('x', { company_name: 'ACME', 'Filing Date': '2021-01-02', form_type: '10-Q', item: '2' })).toBe('ACME · 10-Q · 2021-01-02 · Item 2');
    expect(deriveTitle('Company: ACME Corp\nForm: 8-K\n\nbody', {})).toBe('ACME Corp · 8-K');
    expect(deriveTitle('body', { doc_title: 'Patent 123' })).toBe('Patent 123');
    expect(deriveTitle('\n  First line here\nsecond', undefined)).toBe('First line here');
    expect(deriveTitle('word '.repeat(40), undefined)).toMatch(/^word( word)+…$/);
  });
});

describe('embedded corpus', () => {
  it('ships sorted, unique, content-hashed paragraphs', async () => {
    const chunks = await all(embeddedChunks());
    expect(chunks.length).toBeGreaterThan(7000);
    const ids = chunks.map((c) => c.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // Ids are the content ids of the paragraphs as published (a decoded '&amp;' is no longer that text).
    for (const c of chunks.slice(0, 200).filter((c) => !/[&<>"']/u.test(c.title + c.text))) expect(c.id).toBe(contentChunkId(c.title, c.text));
    expect(chunks.some((c) => c.title === 'Kiss and Tell (1945 film)')).toBe(true);
  });

  it('holds characters, not HTML character references', async () => {
    const chunks = await all(embeddedChunks());
    expect(chunks.filter((c) => /&(?:amp|quot|lt|gt|#\d+);/u.test(c.title + c.text)).map((c) => c.title)).toEqual([]);
    const anchor = chunks.find((c) => c.title === 'Anchor & Braille')!;
    expect(anchor.id).toBe(contentChunkId('Anchor &amp; Braille', anchor.text));
  });
});

describe('HTML character references', () => {
  it('are decoded once, named and numeric; unknown names and non-characters stay as written', () => {
    expect(decodeHtmlEntities('Anchor &amp; Braille')).toBe('Anchor & Braille');
    expect(decodeHtmlEntities('ESP &quot;Custom Shop&quot; &#233;t&#xE9; &lt;b&gt;')).toBe('ESP "Custom Shop" été <b>');
    expect(decodeHtmlEntities('&amp;quot; is how you write &quot;')).toBe('&quot; is how you write "');
    expect(decodeHtmlEntities('AT&T &bogus; &#0; &#xD800; & more')).toBe('AT&T &bogus; &#0; &#xD800; & more');
  });
});

describe('IdTable', () => {
  it('keeps the first value of each id across growth, telling apart ids that differ anywhere', () => {
    const table = new IdTable();
    const ids = Array.from({ length: 50_000 }, (_, i) => `doc-${String(i).padStart(7, '0')}`);
    ids.forEach((id, i) => expect(table.setIfAbsent(id, i)).toBeUndefined());
    expect(table.size).toBe(ids.length);
    ids.forEach((id, i) => expect(table.setIfAbsent(id, 7)).toBe(i));
    expect(table.setIfAbsent('doc-', 1)).toBeUndefined();
    expect(table.setIfAbsent('', 2)).toBeUndefined();
    expect(table.setIfAbsent('', 3)).toBe(2);
    expect(table.size).toBe(ids.length + 2);
  });
});
