import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetrievalServer } from '../../src/retrieval/server.js';
import { openIndex } from '../../src/search/index.js';
import { damageFile } from './damage.js';

/**
 * A damaged index where users meet it: the CLI (exit 2, the file named, no stack trace), `index
 * verify`, serve-search (refused at start, where it reads everything; a 5xx when a read inside a
 * request finds it) and the MCP server (an error for the call, the server still serving).
 */
const bin = resolve('bin/sleuth.js');
const root = mkdtempSync(join(tmpdir(), 'sleuth-damage-front-'));
const clean = join(root, 'clean');
const damaged = join(root, 'damaged');
const children: ChildProcess[] = [];
/** The title of the corpus's last chunk, whose bytes the damage (the end of titles.bin) reaches. */
let lastTitle = '';

function sleuth(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  if (!existsSync(resolve('dist/src/cli/main.js'))) throw new Error('build first: npx tsc -p tsconfig.json');
  expect(sleuth('index', '--out', clean).status).toBe(0);
  const index = await openIndex(clean);
  lastTitle = index.store.title(index.size - 1);
  index.close();
  cpSync(clean, damaged, { recursive: true });
  expect(damageFile(join(damaged, 'titles.bin'), 'flip-last')).toBe(true);
}, 120_000);

afterAll(() => {
  for (const c of children) c.kill();
  rmSync(root, { recursive: true, force: true });
});

describe('a damaged index on the command line', () => {
  it('a search that reaches the damage exits 2 naming the file; one that does not answers', () => {
    const hit = sleuth('search', '--index', damaged, '-k', '3', lastTitle);
    expect(hit.status).toBe(2);
    expect(hit.stderr).toMatch(/^sleuth search: index .*damaged: titles\.bin is damaged \(bytes \d+\.\.\d+ have checksum [0-9a-f]{8}, the index recorded [0-9a-f]{8}\); rebuild the index with `sleuth index` \(`sleuth index verify --index .*damaged` lists all the damage\)\n$/);
    expect(hit.stderr).not.toMatch(/\n\s+at /);
    const other = sleuth('search', '--index', damaged, '--json', '-k', '3', 'Scott Derrickson director');
    expect(other.status).toBe(0);
    expect(other.stdout).toBe(sleuth('search', '--index', clean, '--json', '-k', '3', 'Scott Derrickson director').stdout);
  });

  it('index verify: exit 0 and "clean" on the clean index, exit 2 and the file and offset on the damaged one', () => {
    const ok = sleuth('index', 'verify', '--index', clean);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/^index .*clean: 20 files, [\d.]+ MB, checked in [\d.]+ s \([\d]+ MB\/s\): clean\n$/);
    const bad = sleuth('index', 'verify', '--index', damaged);
    expect(bad.status).toBe(2);
    expect(bad.stdout).toMatch(/: 1 problem\n {2}titles\.bin at byte \d+: bytes \d+\.\.\d+ do not match their checksums\nrebuild the index/);
    const json = sleuth('index', 'verify', '--index', damaged, '--json');
    expect(json.status).toBe(2);
    const report = JSON.parse(json.stdout) as { checksums: boolean; problems: { file: string; offset: number }[] };
    expect(report.checksums).toBe(true);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]!.file).toBe('titles.bin');
    expect(report.problems[0]!.offset % 4096).toBe(0);
    expect(sleuth('index', 'verify', '--index', join(root, 'nothing')).stderr).toMatch(/no search index at .*nothing/);
  });

  it('serve-search, which reads every file at start, refuses to start', () => {
    const r = sleuth('serve-search', '--index', damaged, '--port', '0', '--workers', '1');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/sleuth serve-search: index .*damaged: titles\.bin is damaged/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('a damaged index under an evaluation', () => {
  it('stops the run with exit 2 naming the file; no episode is recorded with the damage as its result', () => {
    const fixture = resolve('test/fixtures/beir-mini');
    expect(sleuth('tasks', 'import', '--format', 'beir', fixture, '--name', 'mini').status).toBe(0);
    expect(damageFile(join(root, '.sleuth', 'tasks', 'mini', 'index', 'post.data'), 'zeroed')).toBe(true);
    const r = sleuth('eval', '--agent', 'baseline', '--tasks', 'mini', '--split', 'test', '--concurrency', '1', '--out', 'eval-damaged');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/sleuth eval: index .*mini.index: post\.data is damaged/);
    // No episode was recorded with the damage in it (the first task's search reached it).
    const file = join(root, 'eval-damaged', 'rollouts.jsonl');
    const rollouts = (existsSync(file) ? readFileSync(file, 'utf8') : '').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { taskId: string; error?: string });
    expect(rollouts.every((x) => x.error === undefined && !JSON.stringify(x).includes('damaged'))).toBe(true);
    expect(existsSync(join(root, 'eval-damaged', 'summary.json'))).toBe(false);
  });
});

describe('a damaged index behind a server', () => {
  it('the retrieval API answers a request that reaches it with a 500 naming the file, and goes on serving', async () => {
    const index = await openIndex(damaged);
    const server = createRetrievalServer({ backend: index, chunks: index.size });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const post = (path: string, body: unknown) => fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const bad = await post('/search', { query: lastTitle, k: 3 });
      expect(bad.status).toBe(500);
      expect(((await bad.json()) as { error: string }).error).toMatch(/titles\.bin is damaged/);
      const good = await post('/retrieve', { queries: ['Scott Derrickson director'], topk: 2 });
      expect(good.status).toBe(200);
      expect((await fetch(`${url}/health`)).status).toBe(200);
    } finally {
      await new Promise((ok) => server.close(ok));
      index.close();
    }
  });

  it('the MCP server fails the call that reaches it, naming the file, and serves the next session', async () => {
    const child = spawn(process.execPath, [bin, 'mcp', '--http', '--port', '0', '--index', damaged], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    const endpoint = await new Promise<URL>((ok, fail) => {
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (t: string) => {
        out += t;
        const m = /on (http:\/\/\S+\/mcp)/u.exec(out);
        if (m) ok(new URL(m[1]!));
      });
      child.once('exit', (code) => fail(new Error(`sleuth mcp exited ${code}: ${out}`)));
    });
    const session = async () => {
      const client = new Client({ name: 'damage-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(endpoint));
      return client;
    };
    const first = await session();
    await expect(first.callTool({ name: 'bm25_search', arguments: { query: lastTitle } })).rejects.toThrow(/titles\.bin is damaged/);
    await first.close();
    const second = await session();
    const r = await second.callTool({ name: 'bm25_search', arguments: { query: 'Scott Derrickson director' } });
    expect(r.isError).toBeFalsy();
    expect((r.content as { text: string }[])[0]!.text).toContain('Scott Derrickson');
    await second.close();
    expect(child.exitCode).toBeNull();
  }, 60_000);
});
