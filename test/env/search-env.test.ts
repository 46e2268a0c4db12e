import { beforeAll, describe, expect, it } from 'vitest';
import { SearchEnvironment, type SearchEpisode } from '../../src/suites/search/env.js';
import type { ToolResult } from '../../src/env/types.js';
import type { Task } from '../../src/tasks/task.js';
import type { SearchIndex } from '../../src/search/index.js';
import { hotpotFixture } from './fixture.js';

let searcher: SearchIndex;
let task: Task;
let env: SearchEnvironment;

beforeAll(async () => {
  const f = await hotpotFixture(5);
  searcher = f.searcher;
  task = f.tasks[0]!;
  env = new SearchEnvironment(searcher, { snippetChars: 60 });
}, 60_000);

const body = (r: ToolResult) => JSON.parse(r.content) as Record<string, any>;

async function searched(ep: SearchEpisode, query = 'Corliss Archer Kiss and Tell film', k = 5) {
  const r = await ep.call({ name: 'bm25_search', arguments: { query, k } });
  expect(r.outcome).toBe('ok');
  return r;
}

describe('tool declarations', () => {
  it('declares the six tools with one-line descriptions and object schemas', () => {
    expect(env.tools.map((t) => t.name)).toEqual(['bm25_search', 'grep_corpus', 'read_document', 'curate', 'drop_curated', 'finish']);
    for (const t of env.tools) {
      expect(t.description).not.toMatch(/\n/);
      expect(t.description.length).toBeGreaterThan(10);
      expect(t.parameters.type).toBe('object');
    }
    expect(env.tools.find((t) => t.name === 'bm25_search')!.parameters.required).toEqual(['query']);
  });

  it('builds prompts: a system prompt naming every tool and the task query as the user prompt', () => {
    for (const t of env.tools) expect(env.systemPrompt()).toContain(t.name);
    expect(env.userPrompt(task)).toBe(task.query);
  });
});

describe('bm25_search', () => {
  it('returns id, title, score, clipped snippet and running counts, and marks hits seen', async () => {
    const ep = env.start(task);
    const r = await searched(ep);
    const b = body(r);
    expect(b.hits).toHaveLength(5);
    for (const h of b.hits) {
      expect(Object.keys(h)).toEqual(['id', 'title', 'score', 'snippet']);
      expect(h.snippet.length).toBeLessThanOrEqual(60);
    }
    expect(b.hits.map((h: any) => h.title)).toContain('Kiss and Tell (1945 film)');
    expect(b).toMatchObject({ seen: 5, curated: 0 });
    expect(r.chunkIds).toEqual(b.hits.map((h: any) => h.id));
    expect([...ep.seen]).toEqual(r.chunkIds);
    expect(ep.trajectory).toEqual(r.chunkIds);
  });

  it('counts only new chunks as seen and keeps the trajectory in first-appearance order', async () => {
    const ep = env.start(task);
    const a = await searched(ep, 'Shirley Temple', 3);
    const b = await searched(ep, 'Shirley Temple diplomat actress', 6);
    const union = [...new Set([...a.chunkIds, ...b.chunkIds])];
    expect(body(b).seen).toBe(union.length);
    expect(ep.trajectory).toEqual(union);
  });

  it('uses the default k, and accepts arguments as a JSON string (as chat APIs send them)', async () => {
    const ep = env.start(task);
    const r = await ep.call({ name: 'bm25_search', arguments: JSON.stringify({ query: 'Shirley Temple' }) });
    expect(body(r).hits).toHaveLength(10);
  });

  it.each([
    [{ query: '' }, 'bad_arguments'],
    [{ query: '   ' }, 'bad_arguments'],
    [{ query: 42 }, 'bad_arguments'],
    [{ query: 'x', k: 0 }, 'bad_arguments'],
    [{ query: 'x', k: 2.5 }, 'bad_arguments'],
    [{ query: 'x', k: 51 }, 'bad_arguments'],
    [{}, 'bad_arguments'],
    ['{not json', 'bad_arguments'],
    [{ query: 'the of and' }, 'bad_query'],
  ])('rejects %j with %s and nothing is seen', async (args, kind) => {
    const ep = env.start(task);
    const r = await ep.call({ name: 'bm25_search', arguments: args });
    expect(r).toMatchObject({ outcome: 'error', errorKind: kind, chunkIds: [] });
    expect(r.content).toMatch(/^Error \(/);
    expect(ep.seen.size).toBe(0);
    expect(ep.log.at(-1)).toMatchObject({ name: 'bm25_search', outcome: 'error', errorKind: kind, status: 'ok' });
  });
});

describe('grep_corpus', () => {
  it('returns id, title, snippet and counts; hits join the trajectory', async () => {
    const ep = env.start(task);
    const r = await ep.call({ name: 'grep_corpus', arguments: { pattern: '(?i)corliss\\s+archer', k: 3 } });
    const b = body(r);
    expect(r.outcome).toBe('ok');
    expect(b.hits.length).toBeGreaterThan(0);
    expect(b.hits.length).toBeLessThanOrEqual(3);
    for (const h of b.hits) expect(Object.keys(h)).toEqual(['id', 'title', 'snippet']);
    expect(b.seen).toBe(b.hits.length);
    expect(ep.trajectory).toEqual(r.chunkIds);
  });

  it('turns an invalid regex into a bad_pattern error naming it', async () => {
    const ep = env.start(task);
    const r = await ep.call({ name: 'grep_corpus', arguments: { pattern: '(unclosed' } });
    expect(r).toMatchObject({ outcome: 'error', errorKind: 'bad_pattern' });
    expect(r.content).toContain('(unclosed');
  });

  it('rejects a missing pattern', async () => {
    const r = await env.start(task).call({ name: 'grep_corpus', arguments: { k: 3 } });
    expect(r.errorKind).toBe('bad_arguments');
  });
});

describe('read_document', () => {
  it('reads only ids seen in a result list of this episode', async () => {
    const ep = env.start(task);
    const gold = task.facts[0]!.chunkIds[0]!;
    const before = await ep.call({ name: 'read_document', arguments: { id: gold } });
    expect(before).toMatchObject({ outcome: 'error', errorKind: 'unseen_id' });
    const unknown = await ep.call({ name: 'read_document', arguments: { id: 'no-such-id' } });
    expect(unknown).toMatchObject({ outcome: 'error', errorKind: 'unknown_id' });
    const r = await searched(ep, 'Shirley Temple Chief of Protocol', 5);
    const id = r.chunkIds[0]!;
    const read = await ep.call({ name: 'read_document', arguments: { id } });
    expect(read.outcome).toBe('ok');
    expect(body(read)).toEqual({ id, title: searcher.read(id)!.title, text: searcher.read(id)!.text });
    await ep.call({ name: 'read_document', arguments: { id } });
    expect(ep.read).toEqual([id]);
  });

  it('clips long texts to readChars', async () => {
    const small = new SearchEnvironment(searcher, { readChars: 50 });
    const ep = small.start(task);
    const r = await searched(ep);
    const read = body(await ep.call({ name: 'read_document', arguments: { id: r.chunkIds[0] } }));
    expect(read.text.length).toBeLessThanOrEqual(50);
  });
});

describe('curate and drop_curated', () => {
  it('curates seen ids in order, ignores repeats, and rejects unseen and unknown ids while keeping the valid ones', async () => {
    const ep = env.start(task);
    const r = await searched(ep);
    const [a, b, c] = r.chunkIds as [string, string, string];
    expect((await ep.call({ name: 'curate', arguments: { ids: [b, a] } })).outcome).toBe('ok');
    const again = await ep.call({ name: 'curate', arguments: { ids: [a] } });
    expect(body(again)).toMatchObject({ added: [], curated: 2 });
    const unseen = searcher.search('Janet Waldo voice actress', 20).map((h) => h.id).find((id) => !ep.seen.has(id))!;
    const mixed = await ep.call({ name: 'curate', arguments: { ids: [c, unseen, 'nope'] } });
    expect(mixed).toMatchObject({ outcome: 'error', errorKind: 'unseen_id' });
    expect(mixed.content).toContain('"added":["' + c + '"]');
    expect(mixed.content).toContain('unknown_id');
    expect(ep.curated).toEqual([b, a, c]);
  });

  it('caps the curated set at 30 (configurable) and says so', async () => {
    const capped = new SearchEnvironment(searcher, { curateCap: 4 });
    const ep = capped.start(task);
    const r = await searched(ep, 'American actress', 6);
    const res = await ep.call({ name: 'curate', arguments: { ids: r.chunkIds } });
    expect(res).toMatchObject({ outcome: 'error', errorKind: 'curate_cap' });
    expect(ep.curated).toEqual(r.chunkIds.slice(0, 4));
    expect(capped.tools.find((t) => t.name === 'curate')!.description).toContain('4');
    expect(new SearchEnvironment(searcher).options.curateCap).toBe(30);
  });

  it('drops curated ids and reports ids that were not curated', async () => {
    const ep = env.start(task);
    const r = await searched(ep);
    await ep.call({ name: 'curate', arguments: { ids: r.chunkIds.slice(0, 3) } });
    const ok = await ep.call({ name: 'drop_curated', arguments: { ids: [r.chunkIds[1]] } });
    expect(body(ok)).toEqual({ dropped: [r.chunkIds[1]], curated: 2 });
    const bad = await ep.call({ name: 'drop_curated', arguments: { ids: [r.chunkIds[1], r.chunkIds[0]] } });
    expect(bad).toMatchObject({ outcome: 'error', errorKind: 'not_curated' });
    expect(ep.curated).toEqual([r.chunkIds[2]]);
  });

  it.each([[{ ids: 'abc' }], [{ ids: [] }], [{ ids: [1, 2] }], [{}]])('rejects curate arguments %j', async (args) => {
    const r = await env.start(task).call({ name: 'curate', arguments: args });
    expect(r.errorKind).toBe('bad_arguments');
  });

  it('keeps the curated set of every turn', async () => {
    const ep = env.start(task);
    const r = await searched(ep);
    ep.endTurn();
    await ep.call({ name: 'curate', arguments: { ids: [r.chunkIds[0]] } });
    ep.endTurn();
    await ep.call({ name: 'curate', arguments: { ids: [r.chunkIds[1]] } });
    await ep.call({ name: 'drop_curated', arguments: { ids: [r.chunkIds[0]] } });
    ep.endTurn();
    expect(ep.curatedHistory).toEqual([[], [r.chunkIds[0]], [r.chunkIds[1]]]);
  });
});

describe('finish, unknown tools and unparseable calls', () => {
  it('finish ends the episode; later calls are refused with episode_over and logged', async () => {
    const ep = env.start(task);
    const r = await ep.call({ name: 'finish', arguments: {} });
    expect(r.outcome).toBe('ok');
    expect(ep.ended).toBe('finish');
    const late = await ep.call({ name: 'bm25_search', arguments: { query: 'Shirley Temple' } });
    expect(late).toMatchObject({ outcome: 'error', errorKind: 'episode_over' });
    expect(ep.seen.size).toBe(0);
  });

  it('finish accepts missing arguments but not a non-object', async () => {
    expect((await env.start(task).call({ name: 'finish', arguments: undefined })).outcome).toBe('ok');
    expect((await env.start(task).call({ name: 'finish', arguments: [1] })).errorKind).toBe('bad_arguments');
  });

  it('answers an unknown tool with the list of tools', async () => {
    const r = await env.start(task).call({ name: 'web_search', arguments: { query: 'x' } });
    expect(r).toMatchObject({ outcome: 'error', errorKind: 'unknown_tool' });
    expect(r.content).toContain('bm25_search');
  });

  it('does not run an unparseable call and logs every call with its parse status and turn', async () => {
    const ep = env.start(task);
    const r = await ep.call({ name: 'bm25_search', arguments: { query: 'Shirley Temple' } }, 'unparseable', 3);
    expect(r).toMatchObject({ outcome: 'error', errorKind: 'unparseable' });
    expect(ep.seen.size).toBe(0);
    await ep.call({ name: 'bm25_search', arguments: { query: 'Shirley Temple' } }, 'off_form', 4);
    expect(ep.log.map((e) => [e.turn, e.status, e.outcome])).toEqual([
      [3, 'unparseable', 'error'],
      [4, 'off_form', 'ok'],
    ]);
    expect(ep.seen.size).toBeGreaterThan(0);
  });

  it('a final message with no calls ends the episode as finish', () => {
    const ep = env.start(task);
    expect(ep.finalMessage('I am done.')).toBe('finish');
    expect(ep.ended).toBe('finish');
  });
});
