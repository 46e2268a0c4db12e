import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The built CLI in a fresh working directory: its .sleuth/ is the one these commands read and write.
const bin = resolve('bin/sleuth.js');
const cwd = mkdtempSync(join(tmpdir(), 'sleuth-index-choice-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function sleuth(...args: string[]) {
  const env = { ...process.env };
  delete env['SLEUTH_HOME'];
  return spawnSync(process.execPath, [bin, ...args], { cwd, env, encoding: 'utf8', timeout: 120_000 });
}

const CORPUS = [
  { id: 'man-ls', title: 'ls(1)', text: 'ls lists directory contents, sorted alphabetically by default.' },
  { id: 'man-grep', title: 'grep(1)', text: 'grep prints lines that match patterns in each file.' },
  { id: 'man-tar', title: 'tar(1)', text: 'tar saves many files together into a single tape or disk archive.' },
];
const TASKS = [
  { id: 'q1', query: 'Which command lists directory contents?', facts: [{ text: 'ls lists directories', chunkIds: ['man-ls'] }], split: 'train' },
  { id: 'q2', query: 'Which command makes an archive?', facts: [{ text: 'tar archives files', chunkIds: ['man-tar'] }], split: 'eval' },
];

describe('search, grep and read --tasks NAME', () => {
  beforeAll(() => {
    writeFileSync(join(cwd, 'man.jsonl'), CORPUS.map((c) => JSON.stringify(c)).join('\n') + '\n');
    writeFileSync(join(cwd, 'tasks.jsonl'), TASKS.map((t) => JSON.stringify(t)).join('\n') + '\n');
    const r = sleuth('tasks', 'import', '--format', 'jsonl', '--tasks', 'tasks.jsonl', '--corpus', 'man.jsonl', '--name', 'man');
    expect(r.status, r.stderr).toBe(0);
  });

  it('read the task set\'s own index', () => {
    const search = sleuth('search', '--tasks', 'man', '--json', 'archive');
    expect(search.status, search.stderr).toBe(0);
    expect(JSON.parse(search.stdout).hits.map((h: { id: string }) => h.id)).toEqual(['man-tar']);
    const grep = sleuth('grep', '--tasks', 'man', '--json', 'match(es)? patterns');
    expect(grep.status, grep.stderr).toBe(0);
    expect(JSON.parse(grep.stdout).hits.map((h: { id: string }) => h.id)).toEqual(['man-grep']);
    const read = sleuth('read', '--tasks', 'man', 'man-ls');
    expect(read.status, read.stderr).toBe(0);
    expect(read.stdout).toContain('ls lists directory contents');
    const batch = join(cwd, 'queries.tsv');
    writeFileSync(batch, 'a\tdisk archive\n');
    const run = sleuth('search', '--tasks', 'man', '--queries', batch, '-k', '1');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^a Q0 man-tar 1 /);
  });

  it('name an unknown set and the known ones, and refuse --tasks with --index', () => {
    for (const cmd of [['search', 'q'], ['grep', 'q'], ['read', 'x']]) {
      const r = sleuth(cmd[0]!, '--tasks', 'mann', cmd[1]!);
      expect(r.status, cmd[0]).toBe(2);
      expect(r.stderr).toContain("unknown task set 'mann'");
      expect(r.stderr).toMatch(/known: .*musique.*man\b/);
    }
    const both = sleuth('search', '--tasks', 'man', '--index', 'idx', 'q');
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('--index idx and --tasks man both name an index');
  });

  it('say where a set\'s index should be when it is gone', () => {
    mkdirSync(join(cwd, '.sleuth', 'tasks', 'bare'), { recursive: true });
    writeFileSync(join(cwd, '.sleuth', 'tasks', 'bare', 'tasks.jsonl'), JSON.stringify(TASKS[0]) + '\n');
    const r = sleuth('search', '--tasks', 'bare', 'q');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`its index ${join(cwd, '.sleuth', 'tasks', 'bare', 'index')} is missing`);
  });
});

describe('index --corpus without --out', () => {
  it('is refused, saying where it would write and how to choose another place; --out and --force go ahead', () => {
    const refused = sleuth('index', '--corpus', 'man.jsonl');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(join('.sleuth', 'index', 'default'));
    expect(refused.stderr).toContain('--out DIR');
    expect(existsSync(join(cwd, '.sleuth', 'index', 'default'))).toBe(false);
    expect(sleuth('index', '--corpus', 'man.jsonl', '--out', 'man-index').status).toBe(0);
    expect(JSON.parse(sleuth('search', '--index', 'man-index', '--json', 'tape').stdout).hits[0].id).toBe('man-tar');
    const forced = sleuth('index', '--corpus', 'man.jsonl', '--force');
    expect(forced.status, forced.stderr).toBe(0);
    expect(JSON.parse(sleuth('search', '--json', 'tape').stdout).hits[0].id).toBe('man-tar');
  });
});
