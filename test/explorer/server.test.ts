import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExplorer, type Explorer } from '../../src/explorer/server.js';
import { rescoreGroup } from '../../src/explorer/lab.js';
import { checkpointTokenizer, tokenDecoderFor } from '../../src/explorer/tokens.js';
import { writeCheckpoint } from '../../src/backend/local/checkpoint.js';
import { trainBpe } from '../../src/protocol/compact/bpe.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';
import { appendJsonl } from '../../src/runs/jsonl.js';
import { GuardedReader } from '../../src/explorer/guarded-read.js';
import { queryRollouts, RolloutIndex } from '../../src/explorer/rollout-index.js';
import { appendRollouts, openRunDir } from '../../src/runs/store.js';
import { findRuns, groupOf, parentOf } from '../../src/explorer/runs.js';
import { chunkInfo, episodeNumbers, shownResult } from '../../src/explorer/tool-results.js';
import { CHUNKS, TASKS, writeTrainRun, type TrainFixture } from './fixture.js';

/** The explorer's API and index against real run directories on disk, over real HTTP. */
let tmp: string;
let runs: string;
let fx: TrainFixture;
let ex: Explorer;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sleuth-explore-'));
  runs = join(tmp, 'runs');
  mkdirSync(runs);
  fx = await writeTrainRun(runs, 'grpo', { steps: 3, groups: 2, groupSize: 4 });
  // A run directory outside RUNS_DIR, and a link to it from inside: the link must not be followed.
  await writeTrainRun(tmp, 'outside', { steps: 1, groups: 1, groupSize: 2 });
  symlinkSync(join(tmp, 'outside'), join(runs, 'sneaky'));
  ex = await startExplorer({ runsDir: runs, port: 0 });
});

afterAll(async () => {
  await ex?.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; body: any; text: string }> {
  let res: Response;
  try {
    res = await fetch(new URL(path, ex.url));
  } catch (err) {
    // A kept-alive socket the server closed while it sat idle (the test before runs another server
    // for up to a minute): fetch reuses it and sees "other side closed". A GET may be sent again on
    // a fresh socket, as HTTP clients do; any other failure stands.
    if ((err as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw err;
    res = await fetch(new URL(path, ex.url));
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

/** A raw request line, so that `..` and odd encodings reach the server unnormalised. */
async function rawGet(target: string): Promise<{ status: number; text: string }> {
  const { request } = await import('node:http');
  const url = new URL(ex.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: target, method: 'GET' }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('rollout index', () => {
  it('indexes by byte offsets, picks up appended lines, leaves a half-written line for later and reports a malformed one', () => {
    const dir = join(tmp, 'idx');
    openRunDir(dir, { kind: 'train' }, []);
    const path = join(dir, 'rollouts.jsonl');
    appendRollouts(dir, fx.rollouts.slice(0, 3));
    const index = new RolloutIndex(path);
    expect(index.refresh()).toBe(true);
    expect(index.rollouts.map((r) => r.id)).toEqual(fx.rollouts.slice(0, 3).map((r) => r.id));
    expect(index.read(2)).toEqual(fx.rollouts[2]);
    expect(index.refresh()).toBe(false);

    const next = JSON.stringify(fx.rollouts[3]);
    appendFileSync(path, 'not json at all\n' + next.slice(0, 100));
    index.refresh();
    expect(index.rollouts).toHaveLength(3);
    expect(index.skipped).toEqual([{ line: 4, reason: expect.stringContaining('not JSON') }]);
    expect(index.warnings().at(-1)).toMatchObject({ line: 5, reason: expect.stringContaining('incomplete') });

    appendFileSync(path, next.slice(100) + '\n');
    index.refresh();
    expect(index.rollouts.map((r) => r.id).at(-1)).toBe(fx.rollouts[3]!.id);
    expect(index.read(3)).toEqual(fx.rollouts[3]);
    expect(index.warnings()).toHaveLength(1);

    // A resumed trainer rewrites the file shorter: the index starts over.
    writeFileSync(path, JSON.stringify(fx.rollouts[5]) + '\n');
    index.refresh();
    expect(index.rollouts.map((r) => r.id)).toEqual([fx.rollouts[5]!.id]);
    expect(index.skipped).toEqual([]);
  });

  it('indexes a large file in time-boxed slices that add up to the whole, token-like text in strings included', () => {
    const dir = join(tmp, 'big');
    openRunDir(dir, { kind: 'train' }, []);
    const odd = { ...fx.rollouts[0]!, id: 'odd', turns: [{ ...fx.rollouts[0]!.turns[0]!, text: 'I write "sampledTokens":[1,2] and "insertedTokens":[ here' }] };
    const many = Array.from({ length: 1200 }, (_, i) => ({ ...fx.rollouts[i % fx.rollouts.length]!, id: `r${i}` }));
    appendRollouts(dir, [odd, ...many]);
    const index = new RolloutIndex(join(dir, 'rollouts.jsonl'));
    index.refresh(0);
    expect(index.behind).toBeGreaterThan(0);
    expect(index.warnings()).toEqual([]);
    let slices = 1;
    while (index.behind > 0) {
      index.refresh(0);
      slices++;
    }
    expect(slices).toBeGreaterThan(1);
    expect(index.rollouts.map((r) => r.id)).toEqual(['odd', ...many.map((r) => r.id)]);
    expect(index.rollouts[0]).toMatchObject({ turns: 1, offform: odd.turns[0]!.calls.filter((c) => c.status === 'off_form').length });
    expect(index.read(0)).toEqual(odd);
    expect(index.read(1200)).toEqual(many[1199]);
  });

  it('filters, sorts (missing values last) and pages', () => {
    const index = new RolloutIndex(join(runs, 'grpo', 'rollouts.jsonl'));
    index.refresh();
    const all = index.rollouts;
    expect(all).toHaveLength(24);
    const step2 = queryRollouts(all, { step: 2, pageSize: 5 });
    expect(step2.total).toBe(8);
    expect(step2.rows).toHaveLength(5);
    expect(queryRollouts(all, { step: 2, pageSize: 5, page: 1 }).rows.map((r) => r.n)).toEqual(all.filter((r) => r.step === 2).slice(5).map((r) => r.n));
    const byReward = queryRollouts(all, { sort: 'reward', desc: true, pageSize: 500 }).rows.map((r) => r.reward!);
    expect(byReward).toEqual([...byReward].sort((a, b) => b - a));
    const off = queryRollouts(all, { offform: true, pageSize: 500 });
    expect(off.rows.every((r) => r.offform > 0)).toBe(true);
    expect(off.total + queryRollouts(all, { offform: false }).total).toBe(24);
    const band = queryRollouts(all, { minReward: 0.5, maxReward: 0.99, minCurated: 1, pageSize: 500 }).rows;
    expect(band.every((r) => r.reward! >= 0.5 && r.reward! <= 0.99 && r.curated >= 1)).toBe(true);
    expect(queryRollouts(all, { task: 'q-ford', pageSize: 500 }).rows.every((r) => r.taskId === 'q-ford')).toBe(true);
    expect(queryRollouts(all, { page: 99, pageSize: 10 }).page).toBe(2);
  });
});

describe('runs as a tree', () => {
  it('lists sibling runs in natural order, each under its nearest run, a folder that is not a run as their group', () => {
    const root = join(tmp, 'tree');
    const run = (...path: string[]) => openRunDir(join(root, ...path), { kind: path.at(-2) === 'evals' || path.at(-1) === 'test' ? 'eval' : 'train' }, []);
    // The trainer's order: the run first, then its eval points as it reaches them.
    run('demo-2026-12-03T07-04-31-361Z', 'grpo');
    for (const s of [16, 0, 8, 24, 32, 40]) run('demo-2026-12-03T07-04-31-361Z', 'grpo', 'evals', `step-${s}`);
    run('demo-2026-12-03T07-04-31-361Z', 'grpo', 'test');
    run('demo-2026-12-03T07-04-31-361Z', 'baseline');
    run('run-10');
    run('run-2');
    const ids = findRuns(root);
    expect(ids).toEqual([
      'demo-2026-12-03T07-04-31-361Z/baseline',
      'demo-2026-12-03T07-04-31-361Z/grpo',
      ...[0, 8, 16, 24, 32, 40].map((s) => `demo-2026-12-03T07-04-31-361Z/grpo/evals/step-${s}`),
      'demo-2026-12-03T07-04-31-361Z/grpo/test',
      'run-2',
      'run-10',
    ]);
    const known = new Set(ids);
    expect(parentOf('demo-2026-12-03T07-04-31-361Z/grpo/evals/step-16', known)).toBe('demo-2026-12-03T07-04-31-361Z/grpo');
    expect(parentOf('demo-2026-12-03T07-04-31-361Z/grpo/test', known)).toBe('demo-2026-12-03T07-04-31-361Z/grpo');
    expect(parentOf('demo-2026-12-03T07-04-31-361Z/grpo', known)).toBeNull();
    expect(groupOf('demo-2026-12-03T07-04-31-361Z/grpo/test', known)).toBe('demo-2026-12-03T07-04-31-361Z');
    expect(groupOf('run-2', known)).toBeNull();
    // RUNS_DIR a run itself: everything below is its.
    expect(parentOf('evals/step-8', new Set(['.', 'evals/step-8']))).toBe('.');
    expect(groupOf('evals/step-8', new Set(['.', 'evals/step-8']))).toBeNull();
  });

  it('serves parent and group with each run, and a run\'s sub-runs in step order named under it', async () => {
    const root = join(tmp, 'tree');
    const tree = await startExplorer({ runsDir: root, port: 0 });
    try {
      const listed = (await (await fetch(new URL('/api/runs', tree.url))).json()) as { runs: { id: string; parent: string | null; group: string | null }[] };
      const step16 = listed.runs.find((r) => r.id.endsWith('step-16'))!;
      expect(step16).toMatchObject({ parent: 'demo-2026-12-03T07-04-31-361Z/grpo', group: 'demo-2026-12-03T07-04-31-361Z' });
      expect(listed.runs.find((r) => r.id === 'run-10')).toMatchObject({ parent: null, group: null });
      const one = (await (await fetch(new URL('/api/run?run=demo-2026-12-03T07-04-31-361Z%2Fgrpo', tree.url))).json()) as { evalRuns: { id: string; name: string }[]; info: { group: string } };
      expect(one.evalRuns.map((e) => e.name)).toEqual([...[0, 8, 16, 24, 32, 40].map((s) => `evals/step-${s}`), 'test']);
      expect(one.info.group).toBe('demo-2026-12-03T07-04-31-361Z');
    } finally {
      await tree.close();
    }
  });
});

describe('tool results as hits', () => {
  const numberOf = (id: string) => ({ a: 1, b: 2 })[id] ?? null;
  const ok = (content: string) => ({ result: { outcome: 'ok' as const, content, chunkIds: [] } });

  it('reads a search result\'s hits and other fields, a read document, and leaves anything else alone', () => {
    expect(shownResult(ok(JSON.stringify({ hits: [{ id: 'a', title: 'A', score: 1.5, snippet: 'sa' }, { id: 'b', title: 'B', snippet: 'sb' }], seen: 2, curated: 0 })), numberOf)).toEqual({
      kind: 'hits',
      hits: [{ n: 1, id: 'a', title: 'A', snippet: 'sa', score: 1.5 }, { n: 2, id: 'b', title: 'B', snippet: 'sb', score: null }],
      fields: { seen: 2, curated: 0 },
    });
    expect(shownResult(ok(JSON.stringify({ id: 'b', title: 'B', text: 'the whole text' })), numberOf)).toEqual({ kind: 'document', n: 2, id: 'b', title: 'B', text: 'the whole text' });
    // Data of any other shape: the page shows the raw text.
    for (const content of ['not json', '[1,2]', '{"hits": "many"}', '{"hits": [{"title": "no id"}]}', '{"hits": [{"id": 7}]}', '{"added": ["a"], "curated": 1, "cap": 30}', '{"id": "a", "text": 5}']) {
      expect(shownResult(ok(content), numberOf), content).toBeNull();
    }
    expect(shownResult({ result: { outcome: 'error', content: JSON.stringify({ hits: [{ id: 'a' }] }), chunkIds: [] } }, numberOf)).toBeNull();
  });

  it('numbers a fixture rollout\'s chunks in the order first shown, with titles from its results and the facts each supports', () => {
    const r = fx.rollouts.find((x) => x.taskId === 'q-nixon' && x.curated.length > 0)!;
    const task = TASKS.find((t) => t.id === 'q-nixon')!;
    const info = chunkInfo(r, task);
    expect(info.map((c) => c.id)).toEqual([...new Set([...r.trajectory, ...r.curated])]);
    for (const c of info) {
      expect(c.n).toBe(r.trajectory.indexOf(c.id) + 1);
      expect(c.title).toBe(CHUNKS[c.id]!.title);
      expect(c.facts).toEqual(task.facts.flatMap((f, i) => (f.chunkIds.includes(c.id) ? [i] : [])));
    }
    const first = shownResult(r.turns[0]!.calls[0]!, episodeNumbers(r));
    expect(first?.kind).toBe('hits');
    expect(first?.kind === 'hits' && first.hits.map((h) => h.n)).toEqual(r.trajectory.slice(0, r.turns[0]!.calls[0]!.result.chunkIds.length).map((_, i) => i + 1));
    // A '__proto__' chunk id is one more id, not a key of some object.
    expect(chunkInfo({ trajectory: ['__proto__'], curated: ['__proto__'], turns: [] }, undefined)).toEqual([{ id: '__proto__', n: 1, title: null, facts: [] }]);
  });
});

describe('token decoding', () => {
  it('decodes a local (compact) run with the tokenizer in its checkpoint header, and nothing from a file that is not one', async () => {
    const tok = trainBpe(['the curated set holds every chunk', 'search the corpus, read, curate, finish'], 320, [...SPECIALS]);
    const ckpt = join(tmp, 'ckpt', 'step-1.ckpt');
    writeCheckpoint(ckpt, { format: 'sleuth-local-lm', version: 1, kind: 'sampler', name: 'step-1', config: { vocabSize: 320, context: 8, dModel: 8, nLayers: 1, nHeads: 1 }, tokenizer: tok.data, step: 1, tensors: [{ name: 'params', length: 4 }] }, { params: new Float32Array(4) });
    const dir = join(tmp, 'local-run');
    openRunDir(dir, { kind: 'train', renderer: 'compact', model: 'base' }, []);
    const config = { kind: 'train', renderer: 'compact', model: 'base' };
    expect(await tokenDecoderFor(dir, config)).toEqual({ missing: 'the run names no checkpoint of its model yet' });
    appendJsonl(join(dir, 'checkpoints.jsonl'), [{ step: 1, path: ckpt, samplerPath: null, time: 'now' }]);
    const d = (await tokenDecoderFor(dir, config)).decoder!;
    expect(d.source).toContain(ckpt);
    const ids = tok.encode('<|assistant|>curate the chunk');
    expect(ids.map((id) => d.decode(id)).join('')).toBe('<|assistant|>curate the chunk');
    expect(d.decode(99_999)).toBe('#99999');
    // An eval made during that training run decodes with its tokenizer.
    const during = join(dir, 'evals', 'step-1');
    openRunDir(during, { kind: 'eval', agent: `train:${dir}@step-1` }, []);
    const evalLookup = await tokenDecoderFor(during, { kind: 'eval', agent: `train:${dir}@step-1` }, new GuardedReader([realpathSync(tmp)]));
    expect(evalLookup.decoder?.source).toContain(ckpt);
    writeFileSync(join(tmp, 'not-a-checkpoint'), 'SLEUTHLM\xff\xff\xff\x7f garbage');
    expect(checkpointTokenizer(join(tmp, 'not-a-checkpoint'))).toBeUndefined();
    expect(checkpointTokenizer(join(runs, 'grpo', 'config.json'))).toBeUndefined();
    expect((await tokenDecoderFor(dir, { kind: 'train', renderer: 'no-such-renderer' })).decoder).toBeUndefined();
  });

  it('decodes an eval of a local: agent, which records no renderer, from the checkpoint or shipped model it names', async () => {
    const tok = trainBpe(['search the corpus, then curate'], 300, [...SPECIALS]);
    // The checkpoint named relative to where the run was made (tmp), not to where the explorer runs.
    const ckpt = join(tmp, 'models', 'sft.sampler.ckpt');
    writeCheckpoint(ckpt, { format: 'sleuth-local-lm', version: 1, kind: 'sampler', name: 'sft', config: { vocabSize: 300, context: 8, dModel: 8, nLayers: 1, nHeads: 1 }, tokenizer: tok.data, step: 1, tensors: [{ name: 'params', length: 4 }] }, { params: new Float32Array(4) });
    const dir = join(tmp, 'evals', 'sft');
    openRunDir(dir, { kind: 'eval', agent: 'local:models/sft.sampler.ckpt' }, []);
    const relative = (await tokenDecoderFor(dir, { kind: 'eval', agent: 'local:models/sft.sampler.ckpt' })).decoder!;
    expect(tok.encode('curate').map((id) => relative.decode(id)).join('')).toBe('curate');
    const shipped = await tokenDecoderFor(dir, { kind: 'eval', agent: 'local:shipped' });
    expect(shipped.decoder?.source).toMatch(/compact \(tokenizer of .*local-base\.sampler\.ckpt\)/);
    // The long model is shipped gzipped: its header is read unpacked in memory.
    const long = await tokenDecoderFor(dir, { kind: 'eval', agent: 'local:shipped-long' });
    expect(long.decoder?.source).toMatch(/compact \(tokenizer of .*local-long\.sampler\.ckpt\.gz\)/);
    // A GRPO run from the shipped model finds it before its first checkpoint.
    expect((await tokenDecoderFor(dir, { kind: 'train', renderer: 'compact', model: 'shipped' })).decoder).toBeDefined();
    const gone = await tokenDecoderFor(dir, { kind: 'eval', agent: 'local:models/gone.sampler.ckpt' });
    expect(gone).toEqual({ missing: 'no tokenizer: models/gone.sampler.ckpt is missing' });
    expect((await tokenDecoderFor(dir, { kind: 'eval', agent: 'baseline' })).decoder).toBeUndefined();
  });
});

describe('reward-shape lab', () => {
  it('with the run\'s own rubric reproduces the recorded rewards and advantages; another rubric moves them', () => {
    const group = fx.rollouts.filter((r) => r.step === 1 && r.group === 0);
    const tasks = new Map(TASKS.map((t) => [t.id, t]));
    const same = rescoreGroup(group, { weights: group[0]!.reward!.weights, beta: 4, advantage: 'dr-grpo' }, 'search', tasks);
    expect(same.source).toBe('scoreRollout');
    for (const row of same.rows) {
      expect(row.reward).toBeCloseTo(row.recordedReward!, 12);
      expect(row.advantage).toBeCloseTo(row.recordedAdvantage!, 12);
    }
    // Without tasks the stored parts are reweighed, F-beta recomputed from precision and recall.
    const f1 = rescoreGroup(group, { weights: { fbeta: 1 }, beta: 1, advantage: 'grpo' }, 'search', undefined);
    expect(f1.source).toBe('stored parts');
    group.forEach((r, i) => expect(f1.rows[i]!.reward).toBeCloseTo(r.reward!.parts['f1']!, 12));
    const withTasks = rescoreGroup(group, { weights: { fbeta: 1 }, beta: 1, advantage: 'grpo' }, 'search', tasks);
    expect(withTasks.rows.map((r) => r.reward)).toEqual(f1.rows.map((r) => r.reward));
  });
});

describe('HTTP API', () => {
  it('lists runs with kind, task set, model, steps, headline and state', async () => {
    const { body } = await get('/api/runs');
    const ids = body.runs.map((r: { id: string }) => r.id);
    expect(ids).toEqual(['grpo']);
    expect(body.runs[0]).toMatchObject({ kind: 'train', model: 'base', steps: 3, rollouts: 24, state: 'done' });
    expect(body.runs[0].headline.reward).toBeTypeOf('number');
  });

  it('reads the facts of a run on a shipped task set other than default, named by hop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-explore-musique-'));
    const root = join(import.meta.dirname, '..', '..');
    const r = spawnSync(process.execPath, [join(root, 'bin', 'sleuth.js'), 'eval', '--agent', 'hop-oracle', '--tasks', 'musique', '--split', 'dev', '--limit', '1', '--out', join(dir, 'oracle')], { cwd: root, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const mex = await startExplorer({ runsDir: dir, port: 0 });
    try {
      const one = await (await fetch(new URL('/api/rollout?run=oracle&n=0', mex.url))).json();
      expect(one.error).toBeUndefined();
      const hops = one.facts.map((f: { hop: number }) => f.hop);
      expect(hops.length).toBeGreaterThanOrEqual(2);
      expect(hops).toEqual(hops.map((_: number, i: number) => i + 1));
    } finally {
      await mex.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('names the missing checkpoint of a local: eval, and decodes once it is there', async () => {
    const dir = join(runs, 'local-eval');
    openRunDir(dir, { kind: 'eval', agent: 'local:../later.sampler.ckpt', env: 'search' }, []);
    appendRollouts(dir, [fx.rollouts[0]!]);
    const before = await get('/api/rollout?run=local-eval&n=0');
    expect(before.status).toBe(200);
    expect(before.body.decodedWith).toBeNull();
    expect(before.body.undecoded).toBe('no tokenizer: ../later.sampler.ckpt is missing');
    expect(before.body.tokens[0].sampled).toBeNull();
    const tok = trainBpe(['search the corpus'], 300, [...SPECIALS]);
    writeCheckpoint(join(tmp, 'later.sampler.ckpt'), { format: 'sleuth-local-lm', version: 1, kind: 'sampler', name: 'later', config: { vocabSize: 300, context: 8, dModel: 8, nLayers: 1, nHeads: 1 }, tokenizer: tok.data, step: 1, tensors: [{ name: 'params', length: 4 }] }, { params: new Float32Array(4) });
    const after = await get('/api/rollout?run=local-eval&n=0');
    expect(after.body.decodedWith).toContain('later.sampler.ckpt');
    expect(after.body.undecoded).toBeNull();
    expect(after.body.tokens[0].sampled.every((t: unknown) => typeof t === 'string')).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });

  it('pages rollouts, reads one with its facts and decoded tokens, and recomputes a group', async () => {
    const page = await get('/api/rollouts?run=grpo&step=3&sort=reward&desc=1&pageSize=3');
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(8);
    expect(page.body.rows).toHaveLength(3);
    const one = await get(`/api/rollout?run=grpo&n=${page.body.rows[0].n}`);
    const r = fx.rollouts[page.body.rows[0].n]!;
    expect(one.body.rollout).toEqual(r);
    // The fixture's tasks carry no meta.hops: their facts are not a chain of hops.
    expect(one.body.facts.map((f: { hop: unknown }) => f.hop)).toEqual(TASKS.find((t) => t.id === r.taskId)!.facts.map(() => null));
    expect(one.body.chunks).toEqual(chunkInfo(r, TASKS.find((t) => t.id === r.taskId)));
    expect(one.body.results.map((calls: unknown[]) => calls.length)).toEqual(r.turns.map((t) => t.calls.length));
    expect(one.body.results[0][0]).toMatchObject({ kind: 'hits', hits: r.turns[0]!.calls[0]!.result.chunkIds.map((id, i) => ({ n: i + 1, id, title: CHUNKS[id]!.title })) });
    expect(one.body.facts.map((f: { covered: boolean }) => f.covered)).toEqual(TASKS.find((t) => t.id === r.taskId)!.facts.map((f) => f.chunkIds.some((id) => r.curated.includes(id))));
    expect(one.body.decodedWith).toBe('qwen3');
    // Decoded one token at a time, the model's tokens spell the turn again.
    expect(one.body.tokens[0].sampled.join('')).toContain(r.turns[0]!.text);
    const lab = await get(`/api/group?run=grpo&step=3&group=${r.group}&w.offform=-0.5&beta=2`);
    expect(lab.body.members).toHaveLength(4);
    expect(lab.body.lab.settings).toMatchObject({ beta: 2, weights: { offform: -0.5, fbeta: 1 } });
    const bad = await get(`/api/group?run=grpo&step=3&group=${r.group}&w.nonsense=1`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("'nonsense' is not a reward part");
    expect((await get('/api/rollouts?run=grpo&sort=evil')).status).toBe(400);
    expect((await get('/api/rollout?run=grpo&n=999')).status).toBe(404);
  });

  it('reads nothing outside RUNS_DIR: ../, encoded variants, absolute paths, links', async () => {
    const attempts = [
      '/api/run?run=..', '/api/run?run=../outside', '/api/run?run=..%2Foutside', '/api/run?run=%2e%2e%2foutside', '/api/run?run=%252e%252e%252foutside',
      '/api/run?run=grpo%2F..%2F..%2Foutside', `/api/run?run=${encodeURIComponent(join(tmp, 'outside'))}`, '/api/run?run=..%5Coutside', '/api/run?run=grpo%00',
      '/api/run?run=sneaky', '/api/rollouts?run=sneaky', '/api/rollout?run=..%2Foutside&n=0',
    ];
    for (const a of attempts) {
      const res = await get(a);
      expect([400, 404], a).toContain(res.status);
      expect(res.text, a).not.toContain('outside-tasks');
      expect(res.text, a).not.toContain('"rollout"');
    }
    for (const target of ['/../outside/config.json', '/%2e%2e/outside/config.json', '/..%2foutside%2fconfig.json', '/assets/../../runs/grpo/config.json', '/../../../../etc/passwd', '//etc/passwd']) {
      const res = await rawGet(target);
      expect(res.status, target).toBe(404);
      expect(res.text, target).not.toMatch(/"kind"|root:/u);
    }
    expect((await get('/api/runs')).body.runs.map((r: { id: string }) => r.id)).not.toContain('sneaky');
  });

  it('serves a single run when RUNS_DIR is a run directory, with its evals, and still nothing above it', async () => {
    const one = await startExplorer({ runsDir: join(runs, 'grpo'), port: 0 });
    try {
      mkdirSync(join(runs, 'grpo', 'evals'), { recursive: true });
      const listed = (await (await fetch(new URL('/api/runs', one.url))).json()) as { runs: { id: string; name: string; kind: string; rollouts: number }[] };
      expect(listed.runs.map((r) => [r.id, r.name, r.kind, r.rollouts])).toEqual([['.', 'grpo', 'train', 24]]);
      const page = (await (await fetch(new URL('/api/rollouts?run=.&pageSize=2', one.url))).json()) as { total: number };
      expect(page.total).toBe(24);
      for (const id of ['..', '../grpo', './..', '.%2F..']) expect((await fetch(new URL(`/api/run?run=${id}`, one.url))).status, id).toBe(404);
    } finally {
      await one.close();
    }
  });

  it('never writes to RUNS_DIR and refuses anything but GET', async () => {
    const snapshot = () => readdirSync(runs, { recursive: true }).map(String).sort().map((f) => {
      const st = statSync(join(runs, f));
      return `${f}:${st.size}:${st.mtimeMs}`;
    });
    const before = snapshot();
    await get('/api/runs');
    await get('/api/run?run=grpo');
    await get('/api/rollouts?run=grpo');
    await get('/api/group?run=grpo&step=1&group=0&w.fbeta=2');
    const post = await fetch(new URL('/api/runs', ex.url), { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(snapshot()).toEqual(before);
    expect(readFileSync(join(runs, 'grpo', 'config.json'), 'utf8')).toContain('"kind": "train"');
  });
});

describe('sleuth explore (CLI)', () => {
  const BIN = join(import.meta.dirname, '..', '..', 'bin', 'sleuth.js');
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'explore', ...args], { encoding: 'utf8', timeout: 30_000 });

  it('refuses a missing RUNS_DIR, a file, a bad port and extra arguments with exit 2 and a message naming them', () => {
    const missing = run(join(tmp, 'nope'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`RUNS_DIR ${join(tmp, 'nope')} does not exist`);
    const file = run(join(runs, 'grpo', 'config.json'));
    expect(file.status).toBe(2);
    expect(file.stderr).toContain('is not a directory');
    const port = run(runs, '--port', '70000');
    expect(port.status).toBe(2);
    expect(port.stderr).toContain('--port must be a whole number from 0 to 65535');
    const extra = run(runs, runs);
    expect(extra.status).toBe(2);
    expect(extra.stderr).toContain('takes one RUNS_DIR');
    expect(run(runs, '--frobnicate').status).toBe(2);
  });
});
