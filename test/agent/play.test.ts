import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parsePlayInput } from '../../src/cli/commands/play.js';
import { QaEnvironment } from '../../src/suites/qa/env.js';
import { searchToolSpecs } from '../../src/suites/search/tools.js';

/**
 * `sleuth play` end to end: the built CLI over the default task set and index, driven through a
 * pipe the way a person types at the prompt (each line sent only after the prompt appears).
 */
function session(args: string[]) {
  const child = spawn(process.execPath, ['bin/sleuth.js', 'play', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return {
    get out() {
      return out;
    },
    get err() {
      return err;
    },
    /** Wait until the transcript shows `marker` for the n-th time. */
    async until(marker: string, n = 1) {
      while (out.split(marker).length - 1 < n) {
        if (child.exitCode !== null) throw new Error(`play exited early:\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    send: (line: string) => child.stdin.write(line + '\n'),
    end: () => child.stdin.end(),
    kill: (signal: NodeJS.Signals) => child.kill(signal),
    exited,
  };
}

/** The tools of the search and QA environments: the short forms come from their schemas. */
const TOOLS = [...searchToolSpecs(30, 10), ...new QaEnvironment({ search: () => [], grep: () => ({ hits: [], timedOut: false }), read: () => undefined, has: () => false }).tools];

describe('parsePlayInput', () => {
  it('reads JSON calls and the short forms', () => {
    expect(parsePlayInput('{"name":"bm25_search","arguments":{"query":"a b","k":3}}', TOOLS)).toEqual({ name: 'bm25_search', arguments: { query: 'a b', k: 3 }, status: 'ok' });
    expect(parsePlayInput('  bm25_search  Corliss Archer film ', TOOLS)).toMatchObject({ arguments: { query: 'Corliss Archer film' } });
    expect(parsePlayInput('grep_corpus (?i)kiss\\s+and', TOOLS)).toMatchObject({ arguments: { pattern: '(?i)kiss\\s+and' } });
    expect(parsePlayInput('curate a1, b2 c3', TOOLS)).toMatchObject({ name: 'curate', arguments: { ids: ['a1', 'b2', 'c3'] } });
    expect(parsePlayInput('finish', TOOLS)).toMatchObject({ name: 'finish', arguments: {} });
    expect(parsePlayInput('answer Chief of Protocol', TOOLS)).toMatchObject({ arguments: { answer: 'Chief of Protocol' } });
    expect(parsePlayInput('   ', TOOLS)).toBeUndefined();
  });

  it('names what is wrong with a bad JSON line', () => {
    expect(() => parsePlayInput('{"name": ', TOOLS)).toThrow(/not valid JSON/);
    expect(() => parsePlayInput('{"arguments": {}}', TOOLS)).toThrow(/string "name"/);
  });
});

/** A session that picked the first task and searched for its query: two prompts shown. */
async function searchedFirstTask() {
  const s = session([]);
  await s.until('pick a task');
  s.send('1');
  await s.until('tool> ');
  const query = /\nquery: (.*)\n/u.exec(s.out)![1]!;
  s.send(`bm25_search ${query}`);
  await s.until('tool> ', 2);
  return s;
}

describe('sleuth play', () => {
  it('plays a task: pick, search, see results and errors, curate, finish, see the reward breakdown', async () => {
    const s = await searchedFirstTask();
    const ids = [...s.out.matchAll(/^\s+\d+\. .*\[([0-9a-f]{10})\]/gmu)].map((m) => m[1]!);
    expect(ids.length).toBeGreaterThan(1);
    expect(s.out).toMatch(/seen \d+ · curated 0/u);
    s.send('read_document not-an-id');
    await s.until('tool> ', 3);
    expect(s.out).toContain("Error (unknown_id): no chunk with id 'not-an-id'");
    s.send(`curate ${ids[0]} ${ids[1]}`);
    await s.until('tool> ', 4);
    expect(s.out).toContain(`curated (2): 1=${ids[0]} 2=${ids[1]}`);
    s.send('{"name":"finish","arguments":{}}');
    expect(await s.exited).toBe(0);
    expect(s.out).toContain('episode over: finish after 4 turns');
    expect(s.out).toMatch(/reward -?\d\.\d{3}\n/u);
    for (const part of ['recall', 'precision', 'fbeta']) expect(s.out).toMatch(new RegExp(`\\n  ${part}\\s+\\d\\.\\d{3}   weight`, 'u'));
  }, 60_000);

  it('accepts the list numbers it shows, alongside ids, in curate, drop_curated and read_document', async () => {
    const s = await searchedFirstTask();
    // Each hit shows its list number and its id.
    const listed = [...s.out.matchAll(/^ {2} ?(\d+)\. .*\[([0-9a-f]{10})\]/gmu)].map((m) => ({ n: Number(m[1]), id: m[2]! }));
    expect(listed.slice(0, 3).map((h) => h.n)).toEqual([1, 2, 3]);
    const [one, two, three] = listed.map((h) => h.id);
    s.send(`curate 1 3 ${two}`);
    await s.until('tool> ', 3);
    expect(s.out).toContain(`curated (3): 1=${one} 3=${three} 2=${two}`);
    s.send('drop_curated 3');
    await s.until('tool> ', 4);
    expect(s.out).toContain(`curated (2): 1=${one} 2=${two}`);
    s.send('read_document 2');
    await s.until('tool> ', 5);
    expect(s.out).toMatch(new RegExp(`\\n {2}2\\. .*\\[${two}\\]\\n`, 'u'));
    // A number the episode never showed is refused at the prompt, naming the numbers shown, and uses no turn.
    s.send('curate 99');
    await s.until('tool> ', 6);
    expect(s.out).toContain(`99 isn't a number shown (1–${listed.length}); nothing was sent, and no turn was used`);
    expect(s.out).not.toContain('used turn 5');
    // A call the environment refuses still uses a turn, and says so.
    s.send('read_document nosuchchunk');
    await s.until('tool> ', 7);
    expect(s.out).toContain('(that call failed, and still used turn 5 of ');
    s.send('finish');
    expect(await s.exited).toBe(0);
    expect(s.out).toContain(`curated: 1=${one} 2=${two}`);
  }, 60_000);

  it('Ctrl-C abandons the episode: not scored, exit status 130', async () => {
    const s = session([]);
    await s.until('pick a task');
    s.send('1');
    await s.until('tool> ');
    s.send('bm25_search film');
    await s.until('tool> ', 2);
    s.kill('SIGINT');
    expect(await s.exited).toBe(130);
    expect(s.out).toContain('episode abandoned (Ctrl-C): not scored');
    expect(s.out).not.toContain('episode over');
    expect(s.out).not.toMatch(/\nreward /u);
  }, 60_000);

  it('ends the episode at end of input and still grades it', async () => {
    const s = session(['--env', 'qa']);
    await s.until('pick a task');
    s.send('');
    await s.until('tool> ');
    s.end();
    expect(await s.exited).toBe(0);
    expect(s.out).toContain('episode over: finish after 1 turns');
    expect(s.out).toContain('exact_match');
  }, 60_000);

  it('exits 2 naming a bad flag or an unknown task', () => {
    const bad = spawnSync(process.execPath, ['bin/sleuth.js', 'play', '--env', 'web'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--env must be search, qa or invoices, got 'web'");
    const missing = spawnSync(process.execPath, ['bin/sleuth.js', 'play', '--task', 'no-such-task'], { encoding: 'utf8', input: '' });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("--task: no task 'no-such-task'");
  }, 60_000);
});
