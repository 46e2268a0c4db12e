import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedChunks } from '../../src/corpus/embedded.js';
import { buildIndex } from '../../src/search/index.js';

// These tests run the built CLI (`npm test` builds first).
const bin = resolve('bin/sleuth.js');
const root = mkdtempSync(join(tmpdir(), 'sleuth-cli-'));
const idx = join(root, 'idx');
afterAll(() => rmSync(root, { recursive: true, force: true }));

function sleuth(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('sleuth index / search / read', () => {
  beforeAll(() => {
    if (!existsSync(resolve('dist/src/cli/main.js'))) throw new Error('build first: npx tsc -p tsconfig.json');
    const r = sleuth('index', '--out', idx);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^indexed [\d,]+ chunks .* into .*idx/);
  });

  it('finds the Kiss and Tell paragraph (--json)', () => {
    const r = sleuth('search', '--index', idx, '--json', '-k', '5', 'Corliss Archer Kiss and Tell');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { hits: { id: string; title: string; score: number; snippet: string }[] };
    expect(out.hits).toHaveLength(5);
    const hit = out.hits.find((h) => h.title === 'Kiss and Tell (1945 film)');
    expect(hit).toBeDefined();
    expect(hit!.snippet).toContain('Corliss Archer');

    const read = sleuth('read', '--index', idx, '--json', hit!.id);
    expect(read.status).toBe(0);
    expect(JSON.parse(read.stdout)).toMatchObject({ id: hit!.id, title: 'Kiss and Tell (1945 film)' });
  });

  it('prints readable hits and chunks', () => {
    const r = sleuth('search', '--index', idx, '-k', '2', 'Shirley Temple Chief of Protocol');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ 1\. .+ {2}\[\w+\] {2}score \d+\.\d{3}\n {4}\S/);
    const id = /\[(\w+)\]/.exec(r.stdout)![1]!;
    const read = sleuth('read', '--index', idx, id);
    expect(read.stdout.split('\n')[0]).toContain(`[${id}]`);
  });

  it('exits 2 with a clear message on bad input', () => {
    const cases: [string[], RegExp][] = [
      [['search', '--index', idx, 'the of and'], /no searchable words \(only stopwords/],
      [['search', '--index', idx], /missing QUERY/],
      [['search', '--index', idx, '-k', '0', 'film'], /--k must be a whole number from 1/],
      [['search', '--index', join(root, 'none'), 'film'], /no search index at .*none.*run `sleuth index`/],
      [['read', '--index', idx, 'no-such-id'], /no chunk with id "no-such-id"/],
      [['index', '--format', 'csv'], /--format must be one of/],
      [['index', '--corpus', join(root, 'missing.jsonl'), '--out', join(root, 'x')], /cannot read corpus .*missing\.jsonl: ENOENT/],
    ];
    for (const [args, message] of cases) {
      const r = sleuth(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });

  it('builds the same files with the grep worker (the CLI) as in one thread', async () => {
    const single = join(root, 'single');
    await buildIndex(embeddedChunks(), single, { parallel: false });
    const files = readdirSync(idx).sort();
    expect(readdirSync(single).sort()).toEqual(files);
    expect(files).toContain('grep.bin');
    for (const f of files) if (f !== 'manifest.json') expect(readFileSync(join(single, f)).equals(readFileSync(join(idx, f))), f).toBe(true);
    const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { files: object; counts: object };
    expect(manifest(single).files).toEqual(manifest(idx).files);
    expect(manifest(single).counts).toEqual(manifest(idx).counts);
  });

  it('sends the grep worker every text, batches and ring slots filled, a text longer than a slot on its own', async () => {
    // 3,000 chunks of about 1.5 KB fill several 4 MiB slots of the ring more than once; one of
    // 5 MB takes the separate path.
    const words = ['river', 'Café', 'O\'Neill', 'x_1', '東京', 'ſtraße', 'film', 'the', '42nd'];
    const text = (i: number, n: number) => Array.from({ length: n }, (_, j) => words[(i * 7 + j * 13) % words.length]).join(' ');
    const rows = Array.from({ length: 3000 }, (_, i) => ({ id: `c${i}`, title: `T${i}`, text: i === 1234 ? text(i, 800_000) : text(i, 220) }));
    const corpus = join(root, 'ring.jsonl');
    writeFileSync(corpus, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const viaWorker = join(root, 'ring-worker');
    expect(sleuth('index', '--corpus', corpus, '--out', viaWorker).status).toBe(0);
    const single = join(root, 'ring-single');
    await buildIndex((async function* () { yield* rows; })(), single, { parallel: false, wasm: false });
    const files = readdirSync(viaWorker).sort();
    expect(readdirSync(single).sort()).toEqual(files);
    for (const f of files) if (f !== 'manifest.json') expect(readFileSync(join(single, f)).equals(readFileSync(join(viaWorker, f))), f).toBe(true);
    const found = JSON.parse(sleuth('grep', '--json', '--index', viaWorker, 'O.Neill film').stdout) as { hits: unknown[] };
    expect(found.hits.length).toBeGreaterThan(0);
  });

  it('indexes a JSONL corpus, and a malformed one fails naming the line without leaving an index', () => {
    const good = join(root, 'c.jsonl');
    writeFileSync(good, '{"id":"a","title":"Alpha","text":"first chunk about rivers"}\n{"id":"b","title":"Beta","text":"second chunk about mountains"}\n');
    const out = join(root, 'small');
    const r = sleuth('index', '--corpus', good, '--out', out, '--json', '--k1', '1.2', '--b', '0.5');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ docs: 2 });
    expect(JSON.parse(sleuth('search', '--index', out, '--json', 'mountain').stdout).hits[0].id).toBe('b');

    const bad = join(root, 'bad.jsonl');
    writeFileSync(bad, '{"id":"a","title":"Alpha","text":"x"}\n{"id":"b",\n');
    const fail = sleuth('index', '--corpus', bad, '--out', join(root, 'never'));
    expect(fail.status).toBe(2);
    expect(fail.stderr).toMatch(/bad\.jsonl:2: not valid JSON/);
    expect(existsSync(join(root, 'never'))).toBe(false);
    // The worker writing the texts was stopped and its temporary directory removed.
    expect(readdirSync(root).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('refuses a truncated index', () => {
    const out = join(root, 'small');
    truncateSync(join(out, 'terms.bin'), 3);
    const r = sleuth('search', '--index', out, 'mountain');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/terms\.bin is 3 bytes, the manifest says \d+: the index is truncated/);
  });
});
