import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Chunk } from '../../src/corpus/chunk.js';
import { command } from '../../src/cli/commands/tasks.js';
import { command as headroomCommand } from '../../src/cli/commands/headroom.js';
import { InputError } from '../../src/errors.js';
import { buildIndex, openIndex, type SearchIndex } from '../../src/search/index.js';
import { readTaskSet, writeTaskSetDir } from '../../src/tasks/registry.js';
import { goldChunkIds, hopsOf } from '../../src/tasks/split.js';
import { entityOf, findChains, namesEntity } from '../../src/tasks/synthesize/chains.js';
import { chainTask, recordedRecalls, synthesizeTasks, synthSplits, taskBridges, verifyTask } from '../../src/tasks/synthesize/synthesize.js';
import { excerpt, parseWriterReply } from '../../src/tasks/synthesize/writer.js';
import type { Task } from '../../src/tasks/task.js';

/**
 * A small corpus of made-up places, each chunk naming one other by its title, over a shared pool of
 * common words (each in a few chunks) and two words of its own: chains to find, bridges to hide.
 */
function fixtureCorpus(n = 160): Chunk[] {
  let s = 7;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const syllables = ['var', 'quen', 'tol', 'bri', 'mos', 'kel', 'dra', 'fen', 'lum', 'sor', 'pith', 'gal', 'wen', 'rho', 'zed'];
  const pool = 'river castle harbour market bridge forest valley mill tower chapel meadow quarry orchard garden abbey fortress canal ferry beacon granary lighthouse monastery village station vineyard colliery causeway reservoir aqueduct windmill'.split(' ');
  const title = (i: number) => `${syllables[i % 15]![0]!.toUpperCase()}${syllables[i % 15]!.slice(1)}${syllables[Math.floor(i / 15) % 15]}ton ${['Abbey', 'Marsh', 'Keep', 'Fell'][i % 4]}`;
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 5 }, () => pool[Math.floor(rand() * pool.length)]!);
    const other = title((i * 7 + 3) % n);
    return { id: `c${i}`, title: title(i), text: `${title(i)} has a ${words.join(' and a ')}. Its ${syllables[i % 15]}ium and ${syllables[(i + 4) % 15]}ite${i} are old. It was given to ${other} long ago.` };
  });
}

let dir: string;
let indexDir: string;
let index: SearchIndex;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sleuth-synth-'));
  indexDir = join(dir, 'index');
  const chunks = fixtureCorpus();
  await buildIndex((async function* () {
    yield* chunks;
  })(), indexDir);
  index = await openIndex(indexDir);
});

describe('chains', () => {
  it('an entity is a title without its parenthetical, or a man page name(section)', () => {
    expect(entityOf('James Scott (actor)')).toBe('James Scott');
    expect(entityOf('ls(1) DESCRIPTION')).toBe('ls(1)');
    expect(entityOf('Frozen')).toBe('Frozen');
    expect(namesEntity('see ls(1), cp(1)', 'ls(1)')).toBe(true);
    expect(namesEntity('Bayville and Bay', 'Bay')).toBe(true);
    expect(namesEntity('Bayville', 'Bay')).toBe(false);
  });

  it('follows a chunk to the chunk its text names, each chunk and bridge once', () => {
    const chains = [...findChains(index, { hops: [2, 3], seed: 's', maxDf: 5 })];
    expect(chains.length).toBeGreaterThan(10);
    const docs = chains.flatMap((c) => c.nodes.map((n) => n.id));
    expect(new Set(docs).size).toBe(docs.length);
    const bridges = chains.flatMap((c) => c.nodes.slice(1).map((n) => n.entity));
    expect(new Set(bridges).size).toBe(bridges.length);
    expect(chains.some((c) => c.nodes.length === 3)).toBe(true);
    for (const c of chains) {
      for (let i = 1; i < c.nodes.length; i++) expect(namesEntity(index.read(c.nodes[i - 1]!.id)!.text, c.nodes[i]!.entity)).toBe(true);
    }
  });

  it('keyword questions leave every bridge out, and the hop queries name them', async () => {
    const { tasks } = await synthesizeTasks(index, { count: 1000, hops: [2, 3], seed: 's' });
    expect(tasks.length).toBeGreaterThan(3);
    for (const t of tasks) {
      for (const b of taskBridges(t)) expect(namesEntity(t.query, b, true), `${t.query} names ${b}`).toBe(false);
      const hops = t.meta!['decomposition'] as { question: string }[];
      taskBridges(t).forEach((b, i) => expect(hops[i + 1]!.question.startsWith(b)).toBe(true));
    }
  });
});

describe('verification', () => {
  it('keeps a task only when the question alone misses a gold chunk and the hop oracle finds all', async () => {
    const { tasks, counts } = await synthesizeTasks(index, { count: 1000, seed: 's' });
    expect(counts.kept + counts.oneSearch + counts.oracleMisses + counts.namesBridge).toBe(counts.chains);
    for (const t of tasks) {
      const v = verifyTask(index, t);
      expect(v.questionRecall).toBeLessThan(1);
      expect(v.oracleRecall).toBe(1);
      expect(t.meta!['synth']).toEqual(v);
    }
    expect(recordedRecalls(tasks).question).toHaveLength(tasks.length);
  });

  it('a question whose own top 10 holds every hop is one search: it would be dropped', () => {
    const [chain] = [...findChains(index, { hops: [2], seed: 's', maxDf: 5 })];
    const words = chain!.nodes.map(() => [] as string[]);
    // The question names both chunks' titles: one search finds both.
    const task = chainTask(chain!, `${chain!.nodes[0]!.title} ${chain!.nodes[1]!.title}`, words);
    expect(verifyTask(index, task).questionRecall).toBe(1);
  });
});

describe('splits', () => {
  const t = (id: string, chunks: string[], bridges: string[]): Task => ({ id, query: id, facts: chunks.map((c) => ({ text: c, chunkIds: [c] })), meta: { hops: chunks.length, bridges } });

  it('no gold chunk and no bridge in two splits, stratified by hop count', async () => {
    const linked = [t('a', ['p1', 'p2'], ['X']), t('b', ['p3', 'p4'], ['X']), t('c', ['p2', 'p5'], ['Y'])];
    const others = Array.from({ length: 20 }, (_, i) => t(`o${i}`, [`q${i}`, `r${i}`], [`B${i}`]));
    const split = synthSplits([...linked, ...others], { seed: 's', testFraction: 0.25, devFraction: 0.25 });
    const of = new Map(split.map((x) => [x.id, x.split]));
    expect(of.get('a')).toBe(of.get('b'));
    expect(of.get('a')).toBe(of.get('c'));
    expect(new Set(split.map((x) => x.split))).toEqual(new Set(['train', 'dev', 'test']));

    const { tasks } = await synthesizeTasks(index, { count: 1000, hops: [2, 3], seed: 's' });
    const dealt = synthSplits(tasks, { seed: 's', testFraction: 0.3, devFraction: 0.2 });
    const owner = new Map<string, string>();
    for (const task of dealt) {
      for (const key of [...goldChunkIds(task), ...taskBridges(task)]) {
        expect(owner.get(key) ?? task.split, `${key} in two splits`).toBe(task.split);
        owner.set(key, task.split);
      }
    }
    for (const hops of new Set(tasks.map(hopsOf))) {
      const inHops = dealt.filter((x) => hopsOf(x) === hops);
      if (inHops.length >= 5) expect(inHops.some((x) => x.split === 'test')).toBe(true);
    }
  });
});

/** Run `sleuth tasks ...` in process: its exit status, stdout, and an InputError's message (exit 2). */
function tasksCli(home: string, ...args: string[]): Promise<{ status: number; out: string; error?: string }> {
  return runCli(command, home, args);
}

async function runCli(cmd: { run(argv: string[]): Promise<number> }, home: string, args: string[]): Promise<{ status: number; out: string; error?: string }> {
  const out: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  // printJson writes to stdout directly.
  const json = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
  const previous = process.env['SLEUTH_HOME'];
  process.env['SLEUTH_HOME'] = home;
  try {
    return { status: await cmd.run(args), out: out.join('\n') };
  } catch (e) {
    if (e instanceof InputError) return { status: 2, out: out.join('\n'), error: e.message };
    throw e;
  } finally {
    log.mockRestore();
    err.mockRestore();
    json.mockRestore();
    if (previous === undefined) delete process.env['SLEUTH_HOME'];
    else process.env['SLEUTH_HOME'] = previous;
  }
}

/** The kinds of reply the test writer gives (above). */
const KINDS = 7;

describe('the writer, over a local OpenAI-compatible server', () => {
  let server: Server;
  let url: string;
  const tries = new Map<string, number>();

  beforeAll(async () => {
    // Replies by the first passage's title: a good question, one naming the bridge, junk, slow
    // once, always slow, one that copies the last passage (one search finds everything), or one
    // whose answer is in no passage (it may not be answerable from them).
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const user = (JSON.parse(body) as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === 'user')!.content;
        const first = /^Passage 1 \((.*)\):/m.exec(user)![1]!;
        const bridge = /Bridges \(never in the question\): "(.*?)"/.exec(user)![1]!;
        const last = user.split('\n\n').filter((p) => p.startsWith('Passage ')).at(-1)!;
        const n = (tries.get(first) ?? 0) + 1;
        tries.set(first, n);
        const kind = [...first].reduce((h, ch) => h + ch.charCodeAt(0), 0) % KINDS;
        // An answer copied from the last passage: its words after the title line.
        const answer = last.split('\n')[1]!.split(/\s+/).slice(0, 2).join(' ');
        const reply = (content: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }] }));
        const good = () => reply(JSON.stringify({ question: `What became of the place that ${first} was given to?`, answer }));
        if (kind === 0) good();
        else if (kind === 1) reply(JSON.stringify({ question: `What is ${bridge} known for?` }));
        else if (kind === 2) reply('Sure! Here is a question: what is it?');
        else if (kind === 3 && n === 1) setTimeout(good, 2500);
        else if (kind === 3) good();
        else if (kind === 4) setTimeout(good, 2500);
        else if (kind === 5) reply(JSON.stringify({ question: `${first} ${last.split(bridge).join('it').replace(/\s+/g, ' ')}`, answer }));
        else reply(JSON.stringify({ question: `What became of the place that ${first} was given to?`, answer: 'the Zanzibar accord of 1873' }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('keeps good questions, drops and counts bad ones, retries slow calls a bounded number of times', async () => {
    const home = join(dir, 'home-writer');
    const r = await tasksCli(home, 'synthesize', '--index', indexDir, '--name', 'w', '--count', '40', '--writer', `openai:m@${url}`, '--writer-timeout', '0.5', '--writer-retries', '1', '--writer-concurrency', '8');
    expect(r.status, r.error).toBe(0);
    const set = readTaskSet('w', { home });
    const s = set.manifest!.options['synthesis'] as { chains: number; kept: number; oneSearch: number; writer: Record<string, number> };
    const kinds = new Map<number, number>();
    for (const first of tries.keys()) {
      const kind = [...first].reduce((h, ch) => h + ch.charCodeAt(0), 0) % KINDS;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    expect(kinds.size, 'every kind of reply was exercised').toBe(KINDS);
    expect(s.kept).toBeGreaterThan(0);
    expect(s.writer['namesBridge']).toBe(kinds.get(1) ?? 0);
    expect(s.writer['junk']).toBe(kinds.get(2) ?? 0);
    expect(s.writer['unanswerable']).toBe(kinds.get(6) ?? 0);
    // Slow once: one retry each, then kept or verified; always slow: two timeouts, then given up.
    expect(s.writer['failed']).toBe(kinds.get(4) ?? 0);
    expect(s.writer['retries']).toBe((kinds.get(3) ?? 0) + (kinds.get(4) ?? 0));
    expect(s.writer['timeouts']).toBe((kinds.get(3) ?? 0) + 2 * (kinds.get(4) ?? 0));
    expect(s.oneSearch).toBeGreaterThanOrEqual(1);
    expect(set.tasks.length).toBe(s.kept);
    expect(set.tasks.every((t) => (t.meta!['synth'] as { writer: string }).writer === `openai:m@${url}`)).toBe(true);
    expect(set.tasks.every((t) => t.query.startsWith('What became of'))).toBe(true);
    const list = await tasksCli(home, 'list');
    expect(list.out).toMatch(new RegExp(`^w {2}${s.kept} tasks: train \\d+ \\([0-9a-f]{12}\\)`, 'm'));
    expect(list.out).toContain(`writer openai:m@${url}`);
    expect(list.out).toMatch(/junk replies \d+, answer not in the passages \d+, writer gave up \d+ \(timeouts \d+, errors 0, retries \d+\)/);
  }, 60_000);

  it('shows the writer the part of a long passage that names the bridge', () => {
    const long = `${'x '.repeat(1000)}see Quenton Marsh here ${'y '.repeat(1000)}`;
    expect(excerpt(long, 'Quenton Marsh')).toContain('Quenton Marsh');
    expect(excerpt(long, 'Quenton Marsh').length).toBe(700);
    expect(excerpt('short text', 'absent')).toBe('short text');
  });

  it('reads a reply with text around its JSON, and refuses one without a question', () => {
    expect(parseWriterReply('Here: {"question": "Where is it?"} done')).toEqual({ question: 'Where is it?' });
    expect(parseWriterReply('{"q": "x"}')).toBeUndefined();
    expect(parseWriterReply('{"question": ""}')).toBeUndefined();
    expect(parseWriterReply('no json')).toBeUndefined();
  });
});

describe('sleuth tasks synthesize', () => {
  it('writes a set that tasks list shows with its provenance and split hashes', async () => {
    const home = join(dir, 'home-cli');
    const r = await tasksCli(home, 'synthesize', '--index', indexDir, '--name', 'kw', '--count', '5', '--hops', '2..3');
    expect(r.status, r.error).toBe(0);
    expect(r.out).toMatch(/task set kw: train \d+ \([0-9a-f]{12}\)/);
    const set = readTaskSet('kw', { home });
    expect(set.tasks).toHaveLength(5);
    expect(set.manifest!.origin).toContain('keyword questions, no model');
    // A second set that leaves the first one's test gold alone.
    const again = await tasksCli(home, 'synthesize', '--index', indexDir, '--name', 'kw2', '--count', '5', '--hops', '2,3', '--exclude-gold', 'kw:test');
    expect(again.status, again.error).toBe(0);
    const held = new Set(set.tasks.filter((t) => t.split === 'test').flatMap(goldChunkIds));
    expect(held.size).toBeGreaterThan(0);
    expect(readTaskSet('kw2', { home }).tasks.flatMap(goldChunkIds).filter((id) => held.has(id))).toEqual([]);
    const json = await tasksCli(home, 'synthesize', '--index', indexDir, '--name', 'kw3', '--count', '3', '--json');
    const summary = JSON.parse(json.out) as { name: string; counts: Record<string, number>; sha256: Record<string, string>; synthesis: { kept: number } };
    expect(summary.name).toBe('kw3');
    expect(summary.synthesis.kept).toBe(3);
    expect(Object.keys(summary.sha256).sort()).toEqual(Object.keys(summary.counts).sort());
    const room = await runCli(headroomCommand, home, ['--agent', 'baseline', '--tasks', 'kw', '--split', 'train', '--samples', '2', '--out', join(dir, 'runs-hr')]);
    expect(room.status, room.error).toBe(0);
    expect(room.out).toMatch(/Recorded at synthesis \(\d tasks\): the question's own top 10 finds 0\.\d+ of the gold chunks, the hop oracle 1\.000: room 0\.\d+ \[/);
    const list = await tasksCli(home, 'list');
    expect(list.out).toMatch(/^ {2}5 kept of \d+ chains; dropped: one search finds all \d+, hop oracle misses \d+, names a bridge \d+$/m);
  });

  it('a set that fails while it is written leaves nothing under its name, nor a temporary folder', async () => {
    const home = join(dir, 'home-crash');
    const target = join(home, 'tasks', 'half');
    const tasks = [{ split: 'train', id: 't', query: 'q', facts: [{ text: 'f', chunkIds: ['c0'] }] }];
    await expect(writeTaskSetDir(target, { name: 'half', origin: 'test', options: {}, tasks }, async () => {
      throw new Error('disk full');
    })).rejects.toThrow('disk full');
    expect(readdirSync(join(home, 'tasks'))).toEqual([]);
  });

  it('adds known-item tasks on request: one chunk each, found by its own words, none of a multi-hop task', async () => {
    const home = join(dir, 'home-known');
    const r = await tasksCli(home, 'synthesize', '--index', indexDir, '--name', 'ki', '--count', '5', '--known-items', '6');
    expect(r.status, r.error).toBe(0);
    expect(r.out).toContain('known-item tasks: 6 of --known-items 6');
    const tasks = readTaskSet('ki', { home }).tasks;
    const known = tasks.filter((t) => t.meta?.['kind'] === 'known-item');
    const multi = new Set(tasks.filter((t) => t.meta?.['kind'] !== 'known-item').flatMap(goldChunkIds));
    expect(known).toHaveLength(6);
    for (const t of known) {
      const [id] = goldChunkIds(t);
      expect(multi.has(id!)).toBe(false);
      expect(index.search(t.query, 10).map((h) => h.id)).toContain(id);
      // The title's words are not the question's: the chunk is found by what it says.
      const title = index.read(id!)!.title;
      for (const w of index.analyzer.terms(title)) expect(index.analyzer.terms(t.query)).not.toContain(w);
    }
  });

  it('makes what the index allows when --count asks for more, and says so', async () => {
    const home = join(dir, 'home-count');
    const r = await tasksCli(home, 'synthesize', '--index', indexDir, '--name', 'all', '--count', '5000');
    expect(r.status, r.error).toBe(0);
    const kept = readTaskSet('all', { home }).tasks.length;
    expect(kept).toBeGreaterThanOrEqual(10);
    expect(r.out).toContain(`  ${kept} of --count 5000: the index's`);
  });

  it('refuses bad input with exit 2 naming it, and writes nothing', async () => {
    const home = join(dir, 'home-bad');
    // A corpus whose texts name no title: no chains at all.
    const lonely = join(dir, 'lonely-index');
    await buildIndex((async function* () {
      for (let i = 0; i < 40; i++) yield { id: `l${i}`, title: `Place ${i}`, text: `a quiet field with grass number ${i * 7919}` };
    })(), lonely);
    const cases: [string[], RegExp][] = [
      [['--index', indexDir], /--name NEW is required/],
      [['--index', join(dir, 'absent'), '--name', 'x'], /absent/],
      [['--index', indexDir, '--name', 'x', '--hops', '5'], /--hops must be hop counts from 2 to 4/],
      [['--index', indexDir, '--name', 'x', '--hops', '3..2'], /--hops must be hop counts from 2 to 4, comma-separated or a range/],
      [['--index', indexDir, '--name', 'x', '--hops', '2..5'], /--hops must be hop counts from 2 to 4/],
      [['--index', indexDir, '--name', 'x', '--writer', 'local:shipped'], /--writer 'local:shipped': a writer is openai:MODEL/],
      [['--index', indexDir, '--name', 'x', '--count', '0'], /--count must be a whole number/],
      [['--index', indexDir, '--name', 'x', '--exclude-gold', 'nosuchset'], /unknown task set 'nosuchset'/],
      [['--index', indexDir, '--name', 'x', '--test-fraction', '0.7', '--dev-fraction', '0.5'], /add up to more than 1/],
      [['--index', indexDir, '--name', 'x', '--writer', 'openai:m@http://127.0.0.1:9/v1', '--writer-retries', '0'], /--writer openai:m@http:\/\/127\.0\.0\.1:9\/v1: no usable question in its first 16 replies .*errors 16, retries 0.*nothing was written/],
      [['--index', lonely, '--name', 'x'], /found 0 chains of 2 chunks and 0 passed verification \(.*\), fewer than the 10 a task set needs; a chain is a chunk whose text names another chunk's title.*nothing was written/s],
    ];
    for (const [args, message] of cases) {
      const r = await tasksCli(home, 'synthesize', ...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.error).toMatch(message);
    }
    expect(existsSync(join(home, 'tasks')) ? readdirSync(join(home, 'tasks')) : []).toEqual([]);
    await tasksCli(home, 'synthesize', '--index', indexDir, '--name', 'x', '--count', '2');
    const again = await tasksCli(home, 'synthesize', '--index', indexDir, '--name', 'x', '--count', '2');
    expect(again.status).toBe(2);
    expect(again.error).toMatch(/already exists.*--force/);
    expect(JSON.parse(readFileSync(join(home, 'tasks', 'x', 'taskset.json'), 'utf8')).counts).toBeDefined();
  });
});
