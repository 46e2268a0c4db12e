import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchToolSpecs } from '../../src/suites/search/tools.js';
import { fBeta } from '../../src/reward/sets.js';

/**
 * `sleuth mcp` driven by the official MCP SDK's own client, over stdio and over streamable HTTP,
 * on a task set imported from the BEIR-layout fixture (test/fixtures/beir-mini; task q1 'alpha',
 * relevant documents d02, d01 and d04).
 */
const BIN = resolve('bin/sleuth.js');
const home = mkdtempSync(join(tmpdir(), 'sleuth-mcp-'));
const env = { ...process.env, SLEUTH_HOME: join(home, '.sleuth') } as Record<string, string>;
const servers: ChildProcess[] = [];
/** Every session of this server gets task q1. */
let q1Url: URL;
/** Its sessions get the test split's tasks in order: q1, q2, q3, q4, q1, ... */
let cyclingUrl: URL;

/** Start `sleuth mcp --http` and resolve with its endpoint once it prints it. */
function startHttp(...args: string[]): Promise<URL> {
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', '--port', '0', ...args], { cwd: home, env, stdio: ['ignore', 'pipe', 'inherit'] });
  servers.push(child);
  return new Promise<URL>((ok, fail) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (t: string) => {
      out += t;
      const m = /on (http:\/\/\S+\/mcp)/u.exec(out);
      if (m) ok(new URL(m[1]!));
    });
    child.once('exit', (code) => fail(new Error(`sleuth mcp --http exited ${code}: ${out}`)));
  });
}

beforeAll(async () => {
  const r = spawnSync(process.execPath, [BIN, 'tasks', 'import', '--format', 'beir', resolve('test/fixtures/beir-mini'), '--name', 'mini'], { cwd: home, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  [q1Url, cyclingUrl] = await Promise.all([startHttp('--tasks', 'mini', '--split', 'test', '--task', 'q1'), startHttp('--tasks', 'mini', '--split', 'test')]);
}, 60_000);

afterAll(() => {
  for (const s of servers) s.kill('SIGTERM');
});

const text = (r: Awaited<ReturnType<Client['callTool']>>, i = 0) => (r.content as { type: string; text: string }[])[i]!.text;
const json = (r: Awaited<ReturnType<Client['callTool']>>, i = 0) => JSON.parse(text(r, i));

async function connect(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Client> {
  const client = new Client({ name: 'sleuth-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** A whole episode on task q1, checked call by call: what both transports must do alike. */
async function wholeEpisode(client: Client) {
  const { tools } = await client.listTools();
  const specs = searchToolSpecs(30, 10);
  expect(tools.map((t) => t.name)).toEqual(['bm25_search', 'grep_corpus', 'read_document', 'curate', 'drop_curated', 'finish']);
  for (const [i, t] of tools.entries()) {
    expect(t.inputSchema).toEqual(specs[i]!.parameters);
    expect(t.description).toBe(specs[i]!.description);
  }
  expect(client.getInstructions()).toContain('Your task (q1)');
  const prompt = await client.getPrompt({ name: 'search_task' });
  expect((prompt.messages[0]!.content as { text: string }).text).toMatch(/You are a search agent[\s\S]*alpha/u);

  // Bad calls are tool errors, and the episode goes on.
  const early = await client.callTool({ name: 'read_document', arguments: { id: 'd02' } });
  expect(early.isError).toBe(true);
  expect(text(early)).toBe("Error (unseen_id): 'd02' has not appeared in a result list of this episode; search for it first");
  const badArgs = await client.callTool({ name: 'bm25_search', arguments: { query: 'alpha', k: 'ten' } });
  expect(badArgs.isError).toBe(true);
  expect(text(badArgs)).toMatch(/^Error \(bad_arguments\): bm25_search: bad arguments \(k: /u);
  const unknown = await client.callTool({ name: 'web_search', arguments: { q: 'alpha' } });
  expect(unknown.isError).toBe(true);
  expect(text(unknown)).toContain('Error (unknown_tool)');
  const badRegex = await client.callTool({ name: 'grep_corpus', arguments: { pattern: '(a' } });
  expect(badRegex.isError).toBe(true);
  expect(text(badRegex)).toContain('Error (bad_pattern)');
  // Every tool advertises additionalProperties: false, and a key it does not take is refused by name
  // (zod's default would drop it and run the call): the episode goes on after each.
  for (const t of tools) expect((t.inputSchema as { additionalProperties?: unknown }).additionalProperties).toBe(false);
  const bogus = await client.callTool({ name: 'bm25_search', arguments: { query: 'alpha', bogus: 1 } });
  expect(bogus.isError).toBe(true);
  expect(text(bogus)).toBe("Error (bad_arguments): bm25_search: bad arguments (unknown argument(s) 'bogus' (bm25_search takes query, k))");
  const finishNow = await client.callTool({ name: 'finish', arguments: { now: true } });
  expect(finishNow.isError).toBe(true);
  expect(text(finishNow)).toContain("unknown argument(s) 'now'");

  const search = await client.callTool({ name: 'bm25_search', arguments: { query: 'alpha' } });
  expect(search.isError).toBeFalsy();
  expect(json(search)).toMatchObject({ hits: [{ id: 'd01' }, { id: 'd02' }, { id: 'd03' }], seen: 3, curated: 0 });
  const grep = await client.callTool({ name: 'grep_corpus', arguments: { pattern: 'delta\\s+ember', k: 5 } });
  expect(json(grep)).toMatchObject({ hits: [{ id: 'd04', snippet: 'delta ember fjord' }], seen: 4 });
  const read = await client.callTool({ name: 'read_document', arguments: { id: 'd02' } });
  expect(json(read)).toEqual({ id: 'd02', title: 'Note', text: 'alpha beacon copper' });
  const curate = await client.callTool({ name: 'curate', arguments: { ids: ['d02', 'd01', 'd03'] } });
  expect(json(curate)).toEqual({ added: ['d02', 'd01', 'd03'], curated: 3, cap: 30 });
  const drop = await client.callTool({ name: 'drop_curated', arguments: { ids: ['d03'] } });
  expect(json(drop)).toEqual({ dropped: ['d03'], curated: 2 });

  const finish = await client.callTool({ name: 'finish', arguments: {} });
  expect(finish.isError).toBeFalsy();
  expect(json(finish)).toEqual({ finished: true, curated: 2 });
  // The reward as training computes it (f4): recall 2/3 of q1's relevant documents, precision 1.
  const outcome = json(finish, 1);
  expect(outcome.task).toBe('q1');
  expect(outcome.episode).toMatchObject({ endReason: 'finish', turns: 12, curated: ['d02', 'd01'], read: 1, seen: 4 });
  expect(outcome.reward.parts).toMatchObject({ recall: 2 / 3, precision: 1, empty: 0, trajectory_recall: 1 });
  expect(outcome.reward.total).toBeCloseTo(fBeta(1, 2 / 3, 4), 12);
  expect(outcome.reward.weights).toMatchObject({ fbeta: 1, empty: -0.2 });

  const after = await client.callTool({ name: 'bm25_search', arguments: { query: 'copper' } });
  expect(after.isError).toBe(true);
  expect(text(after)).toBe("Error (episode_over): the episode already ended (finish); 'bm25_search' was not run");
  // The server is still up.
  expect((await client.listTools()).tools).toHaveLength(6);
}

describe('sleuth mcp with the official SDK client', () => {
  it('over stdio: lists the six tools, runs a whole episode and returns the reward breakdown', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--tasks', 'mini', '--split', 'test', '--task', 'q1'], cwd: home, env, stderr: 'pipe' });
    const client = await connect(transport);
    try {
      await wholeEpisode(client);
    } finally {
      await client.close();
    }
  });

  it('ends the episode at the turn budget, as training does, and scores what was curated', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--tasks', 'mini', '--split', 'test', '--task', 'q1', '--max-turns', '2'], cwd: home, env, stderr: 'pipe' });
    const client = await connect(transport);
    try {
      await client.callTool({ name: 'bm25_search', arguments: { query: 'alpha' } });
      const last = await client.callTool({ name: 'curate', arguments: { ids: ['d02'] } });
      expect(json(last)).toEqual({ added: ['d02'], curated: 1, cap: 30 });
      const outcome = json(last, 1);
      expect(outcome.episode).toMatchObject({ endReason: 'turns', turns: 2, curated: ['d02'] });
      expect(outcome.reward.parts).toMatchObject({ recall: 1 / 3, precision: 1 });
      const over = await client.callTool({ name: 'finish', arguments: {} });
      expect(text(over)).toBe("Error (episode_over): the episode already ended (turns); 'finish' was not run");
    } finally {
      await client.close();
    }
  });

  it('over streamable HTTP: each session is its own episode', async () => {
    // The server gives the test split's tasks in order: the first session gets q1, the next q2.
    const first = await connect(new StreamableHTTPClientTransport(cyclingUrl));
    const second = await connect(new StreamableHTTPClientTransport(cyclingUrl));
    expect(first.getInstructions()).toContain('Your task (q1)');
    try {
      expect(second.getInstructions()).toContain('Your task (q2)');
      // The second session saw nothing yet: what the first finds is unseen there.
      await first.callTool({ name: 'bm25_search', arguments: { query: 'fjord' } });
      const unseen = await second.callTool({ name: 'curate', arguments: { ids: ['d04'] } });
      expect(unseen.isError).toBe(true);
      expect(text(unseen)).toContain('Error (unseen_id)');
      const empty = await second.callTool({ name: 'finish', arguments: {} });
      expect(json(empty, 1).reward).toMatchObject({ total: -0.2, parts: { recall: 0, empty: 1 } });
    } finally {
      await second.close();
    }
    await first.close();
    const third = await connect(new StreamableHTTPClientTransport(cyclingUrl));
    try {
      // Sessions take tasks in order, cycling over q1-q4: the third is q3, a fresh episode.
      expect(third.getInstructions()).toContain('Your task (q3)');
    } finally {
      await third.close();
    }
  });

  it('over streamable HTTP: lists the six tools, runs a whole episode and returns the reward breakdown', async () => {
    const client = await connect(new StreamableHTTPClientTransport(q1Url));
    try {
      await wholeEpisode(client);
    } finally {
      await client.close();
    }
  });

  it('refuses a request without a session, or naming an unknown one', async () => {
    const plain = await fetch(q1Url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { error: { message: string } }).error.message).toContain('the first request of a session is initialize');
    const gone = await fetch(q1Url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'no-such-session' }, body: '{}' });
    expect(gone.status).toBe(404);
  });
});
