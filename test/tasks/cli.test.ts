import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { command } from '../../src/cli/commands/tasks.js';
import { InputError } from '../../src/errors.js';
import { ensureDefaultIndex, openIndex } from '../../src/search/index.js';
import { listTaskSetNames, loadTaskSet } from '../../src/tasks/registry.js';
import { TaskSchema, type Task } from '../../src/tasks/task.js';

const BIN = resolve('bin/sleuth.js');
const FIX = resolve('test/fixtures/tasks');
// Each run gets a fresh working directory: the default index and task sets go to its .sleuth/.
const cwd = mkdtempSync(join(tmpdir(), 'sleuth-tasks-cli-'));
const sleuth = (...args: string[]) => {
  const env = { ...process.env };
  delete env['SLEUTH_HOME'];
  return spawnSync(process.execPath, [BIN, 'tasks', ...args], { cwd, encoding: 'utf8', env });
};

describe('sleuth tasks', () => {
  // Built here rather than by the first command, so that no test depends on another's order.
  beforeAll(() => ensureDefaultIndex(join(cwd, '.sleuth', 'index', 'default')));

  it('list shows every shipped set with its splits, sizes, hashes and origin', () => {
    const r = sleuth('list');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^default {2}600 tasks: train 480 \(2f0b787aada0\), eval 120 \(3924cb1f0d30\)$/m);
    expect(r.stdout).toMatch(/^musique {2}\d+ tasks: train \d+ \([0-9a-f]{12}\), dev \d+ \([0-9a-f]{12}\), test \d+ \([0-9a-f]{12}\)$/m);
    expect(r.stdout).toMatch(/^ {2}embedded: MuSiQue-Ans .*CC BY 4\.0/m);
  });

  it('show reports counts, facts per task and no missing chunk ids for default', () => {
    const r = sleuth('show', 'default', '--split', 'eval');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('tasks:      120');
    expect(r.stdout).toMatch(/facts:\s+\d+ \(2\.\d\d per task; min 2, max [34]\)/);
    expect(r.stdout).toContain('missing:    0 chunk ids not in the index; 0 facts with none of their chunks');
  });

  it('show --json prints eval tasks in the task format, their facts in the default index', async () => {
    const r = sleuth('show', 'default', '--split', 'eval', '--json');
    expect(r.status, r.stderr).toBe(0);
    const tasks = JSON.parse(r.stdout) as Task[];
    expect(tasks).toHaveLength(120);
    const index = await openIndex(join(cwd, '.sleuth', 'index', 'default'));
    for (const t of tasks) {
      expect(TaskSchema.strict().safeParse(t).success).toBe(true);
      expect(t.facts.some((f) => f.chunkIds.some((id) => index.has(id)))).toBe(true);
    }
  });

  it('subset builds a reduced task set that loads and validates against its own index', async () => {
    const r = sleuth('subset', '--from', 'default', '--train', '6', '--eval', '3', '--distractors', '4', '--seed', '2', '--name', 'mini');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('task set mini: train 6, eval 3');
    const mini = await loadTaskSet('mini', { home: join(cwd, '.sleuth') });
    expect(mini.tasks('eval')).toHaveLength(3);
    const index = await openIndex(mini.indexDir);
    const gold = new Set(mini.tasks().flatMap((t) => t.facts.flatMap((f) => f.chunkIds)));
    expect(index.size).toBe(gold.size + 9 * 4);
    expect(listTaskSetNames({ home: join(cwd, '.sleuth') })).toContain('mini');
  });

  it('import turns a dataset file into a task set, and stops on chunks missing from the corpus', () => {
    const ok = sleuth('import', '--format', 'hotpotqa', '--tasks', join(FIX, 'hotpotqa-ircot.jsonl'), '--name', 'hp3');
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('task set hp3');
    const corpus = join(cwd, 'corpus.jsonl');
    writeFileSync(corpus, ['c-vienna', 'c-danube'].map((id) => JSON.stringify({ id, title: id, text: `about ${id}` })).join('\n') + '\n');
    const missing = sleuth('import', '--format', 'jsonl', '--tasks', join(FIX, 'tasks.jsonl'), '--corpus', corpus, '--name', 'own');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('1 of 3 facts');
    expect(missing.stderr).toContain('--allow-missing');
    const allowed = sleuth('import', '--format', 'jsonl', '--tasks', join(FIX, 'tasks.jsonl'), '--corpus', corpus, '--name', 'own', '--allow-missing');
    expect(allowed.status, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain('warning: 1 of 3 facts');
  });

  it('list --json prints every set with its split counts (in process)', async () => {
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    try {
      expect(await command.run(['list', '--json'])).toBe(0);
    } finally {
      spy.mockRestore();
    }
    const json = JSON.parse(out.join(''));
    expect(json[0]).toMatchObject({ name: 'default', tasks: 600, splits: { train: 480, eval: 120 } });
  });

  it('rejects bad input with a message naming it (in process: the exit status 2 is checked above)', async () => {
    const cases: [string[], string][] = [
      [['show', 'nope'], "unknown task set 'nope'"],
      [['show', 'default', '--split', 'test'], "--split 'test'"],
      [['subset', '--from', 'default', '--train', '100000', '--eval', '1', '--name', 'big'], '--train 100000'],
      [['subset', '--from', 'default', '--train', '2', '--name', 'default'], "--name 'default'"],
      [['subset', '--from', 'default', '--train', '2', '--name', 'x', '--distractor-mode', 'dense'], '--distractor-mode'],
      [['subset', '--from', 'default', '--train', 'many', '--name', 'x'], '--train must be a whole number'],
      [['subset', '--train', '2', '--name', 'x'], '--from NAME is required'],
      [['import', '--format', 'xml', '--tasks', 'x', '--name', 'y'], '--format must be one of'],
      [['import', '--format', 'musique', '--tasks', join(cwd, 'absent.jsonl'), '--name', 'y'], 'absent.jsonl: no such file'],
      [['import', '--format', 'musique', '--tasks', 'x', '--name', 'y', '--eval-fraction', '2'], '--eval-fraction'],
      [['frobnicate'], "unknown subcommand 'frobnicate'"],
      [['list', '--bogus'], '--bogus'],
    ];
    const home = process.env['SLEUTH_HOME'];
    process.env['SLEUTH_HOME'] = join(cwd, '.sleuth');
    try {
      for (const [args, message] of cases) {
        const err = await command.run(args).then(() => undefined, (e: unknown) => e);
        expect(err, args.join(' ')).toBeInstanceOf(InputError);
        expect((err as Error).message).toContain(message);
      }
    } finally {
      if (home === undefined) delete process.env['SLEUTH_HOME'];
      else process.env['SLEUTH_HOME'] = home;
    }
  });
});
