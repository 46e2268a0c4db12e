import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotpotData } from '../env/fixture.js';

/**
 * serve-search over a real index of HotpotQA paragraphs, its searches answered by a real
 * SearchWorkers (worker threads run from the build, so the compiled modules of dist/ are used).
 */
const dist = (p: string) => import(join(process.cwd(), 'dist', p));
type Pool = Awaited<ReturnType<typeof import('../../src/suites/search/search-workers.js').SearchWorkers.open>>;

const dir = mkdtempSync(join(tmpdir(), 'sleuth-serve-search-'));
let pool: Pool;
let index: import('../../src/search/open.js').SearchIndex;
let server: Server;
let base: string;
let closeServer: (s: Server) => Promise<void>;

beforeAll(async () => {
  const { buildIndex, openIndex } = await dist('src/search/index.js');
  const { SearchWorkers } = await dist('src/suites/search/search-workers.js');
  const { createRetrievalServer } = await dist('src/retrieval/server.js');
  const http = await dist('src/http/lifecycle.js');
  closeServer = http.closeServer;
  const { chunks } = hotpotData(1);
  const unique = [...new Map(chunks.slice(0, 1200).map((c) => [c.id, c])).values()];
  await buildIndex((async function* () { yield* unique; })(), join(dir, 'index'));
  index = await openIndex(join(dir, 'index'));
  pool = await SearchWorkers.open(join(dir, 'index'), index, { workers: 2, recordServiceTimes: true });
  server = createRetrievalServer({ backend: pool, chunks: index.size });
  base = `http://127.0.0.1:${await http.listen(server, 0)}`;
}, 120_000);

afterAll(async () => {
  if (server) await closeServer(server);
  await pool?.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = async (path: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};

/** What the trainers do with an answer: Search-R1's and verl's _passages2string split `contents` at its first line break. */
const splitContents = (contents: string) => ({ title: contents.split('\n')[0]!, text: contents.split('\n').slice(1).join('\n') });

describe('serve-search POST /retrieve', () => {
  const queries = ['Who directed the film Kiss and Tell?', 'Shirley Temple ambassador'];

  it("answers Search-R1's own request (llm_agent/generation.py _batch_search) field by field", async () => {
    const before = pool.serviceMs!.search.length;
    // generation.py: payload = {"queries": queries, "topk": self.config.topk, "return_scores": True}; requests.post(url, json=payload)
    const { status, body } = await post('/retrieve', { queries, topk: 3, return_scores: true });
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(['result']);
    expect(body.result).toHaveLength(2);
    for (const [i, list] of (body.result as any[]).entries()) {
      const expected = index.search(queries[i]!, 3);
      expect(list).toHaveLength(3);
      list.forEach((entry: any, rank: number) => {
        expect(Object.keys(entry).sort()).toEqual(['document', 'score']);
        expect(Object.keys(entry.document).sort()).toEqual(['contents', 'id']);
        expect(entry.document.id).toBe(expected[rank]!.id);
        expect(entry.score).toBe(expected[rank]!.score);
        const chunk = index.read(entry.document.id)!;
        expect(entry.document.contents).toBe(`"${chunk.title}"\n${chunk.text}`);
        // generation.py keeps the quotes in the title line; Search-R1's BM25 server strips them.
        expect(splitContents(entry.document.contents)).toEqual({ title: `"${chunk.title}"`, text: chunk.text });
      });
    }
    // Both queries went to the worker pool.
    expect(pool.serviceMs!.search.length - before).toBe(2);
  });

  it("answers verl's call_search_api request, headers included", async () => {
    // verl/tools/utils/search_r1_like_utils.py: {"queries": [query], "topk": 3, "return_scores": True}, with these headers.
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    const { status, body } = await post('/retrieve', { queries: [queries[0]], topk: 3, return_scores: true }, headers);
    expect(status).toBe(200);
    expect(body.result[0].map((e: any) => e.document.id)).toEqual(index.search(queries[0]!, 3).map((h) => h.id));
  });

  /**
   * SkyRL's SearchToolGroup.search as skyrl_gym/tools/search.py does it (since commit afbf88bcd):
   * call_search_api posts {"query": query.strip(), "topk": 3, "return_scores": True} with these
   * headers and raises on a 4xx; the tool then reads api_response.get("result", []) and, if it is
   * not empty, formats each retrieval with _passages2string ("Doc {i}: " + document.contents.strip())
   * and joins them with "\n---\n"; an empty result is "No search results found.".
   */
  async function skyrlSearch(query: string): Promise<{ status: string; result: string }> {
    const res = await fetch(`${base}/retrieve`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ query: query.trim(), topk: 3, return_scores: true }),
    });
    if (!res.ok) return { status: 'api_error', result: `Search error: ${res.status} ${await res.text()}` };
    const apiResponse = (await res.json()) as { result?: { document: { contents: string } }[][] };
    const rawResults = apiResponse.result ?? [];
    if (rawResults.length === 0) return { status: 'no_results', result: 'No search results found.' };
    const passages2string = (retrieval: { document: { contents: string } }[]) => retrieval.map((doc, i) => `Doc ${i + 1}: ${doc.document.contents.trim()}\n`).join('');
    return { status: 'success', result: rawResults.map(passages2string).join('\n---\n') };
  }

  it("answers SkyRL's SearchToolGroup request, one query as a string, in the shape SkyRL's own server answers", async () => {
    const { status, result } = await skyrlSearch(`  ${queries[0]} `);
    expect(status).toBe('success');
    const expected = index.search(queries[0]!, 3).map((h, i) => {
      const chunk = index.read(h.id)!;
      return `Doc ${i + 1}: "${chunk.title}"\n${chunk.text.trim()}\n`;
    });
    expect(result).toBe(expected.join(''));
    // The raw answer: {"result": [one list]}, as SkyRL's retrieval_server.py builds it (resp.append(combined)).
    const raw = await post('/retrieve', { query: queries[0], topk: 3, return_scores: true });
    expect(raw.body.result).toHaveLength(1);
    expect(raw.body.result[0].map((e: any) => e.document.id)).toEqual(index.search(queries[0]!, 3).map((h) => h.id));
    // Both or neither of query and queries is a 422 naming them.
    expect((await post('/retrieve', { query: 'x', queries: ['x'] })).status).toBe(422);
    expect((await post('/retrieve', { topk: 3 })).body.detail).toMatch(/"queries".*"query"/);
  });

  it('answers a query of only stopwords with an empty list, as Search-R1\'s BM25 server does', async () => {
    // Search-R1's BM25Retriever._search: no hits from pyserini -> [] for that query, so {"result": [[]]}.
    expect((await post('/retrieve', { query: 'the of and', topk: 3, return_scores: true })).body).toEqual({ result: [[]] });
    expect((await post('/retrieve', { queries: ['the of and'], topk: 3, return_scores: true })).body).toEqual({ result: [[]] });
  });

  it('returns bare documents without return_scores, and the default topk when it is missing or 0', async () => {
    const bare = await post('/retrieve', { queries });
    expect(bare.status).toBe(200);
    expect(bare.body.result.map((l: any[]) => l.length)).toEqual([3, 3]);
    expect(Object.keys(bare.body.result[0][0]).sort()).toEqual(['contents', 'id']);
    const zero = await post('/retrieve', { queries: [queries[0]], topk: 0, return_scores: false });
    expect(zero.body.result[0]).toHaveLength(3);
    const five = await post('/retrieve', { queries: [queries[0]], topk: 5, return_scores: true });
    expect(five.body.result[0]).toHaveLength(5);
  });

  it('answers a batch of 64 as 64 lists, a query without searchable words with none', async () => {
    const batch = Array.from({ length: 64 }, (_, i) => (i === 7 ? 'the of and' : `${index.store.title(i * 11)} ${index.store.text(i * 11).split(' ').slice(0, 4).join(' ')}`));
    const { status, body } = await post('/retrieve', { queries: batch, topk: 3, return_scores: true });
    expect(status).toBe(200);
    expect(body.result).toHaveLength(64);
    expect(body.result[7]).toEqual([]);
    expect(body.result[0].map((e: any) => e.document.id)).toEqual(index.search(batch[0]!, 3).map((h) => h.id));
  });

  it('rejects malformed requests with 422 and a reason, and keeps serving', async () => {
    const notList = await post('/retrieve', { queries: 'one string', topk: 3 });
    expect(notList.status).toBe(422);
    expect(notList.body.detail).toContain('queries');
    expect((await post('/retrieve', '{"queries": [')).status).toBe(400);
    expect((await post('/retrieve', { queries: ['x'], topk: 5000 })).body.detail).toContain('limit of 1000');
    expect((await post('/nowhere', {})).status).toBe(404);
    expect((await post('/retrieve', { queries: [queries[0]], topk: 1 })).status).toBe(200);
  });
});

describe('serve-search POST /search and /grep', () => {
  it("answer in sleuth search --json's and sleuth grep --json's shapes", async () => {
    const q = 'Kiss and Tell film';
    const one = await post('/search', { query: q, k: 4 });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ query: q, k: 4, hits: index.search(q, 4) });
    const many = await post('/search', { queries: [q, 'Shirley Temple'] });
    expect(many.body.results).toEqual([q, 'Shirley Temple'].map((query) => ({ query, k: 10, hits: index.search(query, 10) })));
    const g = await post('/grep', { pattern: '(?i)shirley\\s+temple', k: 3 });
    expect(g.status).toBe(200);
    expect(g.body).toEqual({ pattern: '(?i)shirley\\s+temple', k: 3, ...index.grep('(?i)shirley\\s+temple', { k: 3 }) });
    const bad = await post('/grep', { pattern: '(a' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('(a');
    const stop = await post('/search', { query: 'the of' });
    expect(stop.status).toBe(400);
    expect(stop.body.error).toContain('no searchable words');
    expect((await post('/search', { k: 3 })).body.error).toContain('give "query"');
  });
});

describe('sleuth serve-search, the command', () => {
  it('serves the index it is given until SIGTERM, then exits 0', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['bin/sleuth.js', 'serve-search', '--index', join(dir, 'index'), '--port', '0', '--workers', '1', '--topk', '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((ok, fail) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (t: string) => {
        out += t;
        const m = /listening on (http:\/\/\S+)/u.exec(out);
        if (m) ok(m[1]!);
      });
      child.once('exit', (code) => fail(new Error(`exited ${code} before listening: ${out}`)));
    });
    const res = await fetch(`${url}/retrieve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ queries: ['Shirley Temple'] }) });
    const body = (await res.json()) as { result: { id: string; contents: string }[][] };
    // --topk 2 is the default a request without topk gets.
    expect(body.result[0]!.map((d) => d.id)).toEqual(index.search('Shirley Temple', 2).map((h) => h.id));
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ ok: true, chunks: index.size });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
