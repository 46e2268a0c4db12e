/**
 * The attack suite: bad inputs and faults tried as a user or an attacker would, each against the
 * real built CLI (bin/sleuth.js, from dist/) or a real explorer server it starts. Every case says
 * whether it crashed (an exit status other than the expected ones, or a stack trace), hung (ran
 * past a generous guard: a bound on waiting, not a benchmark), lost files (a file sleuth did not
 * write changed or vanished, compared byte for byte) or leaked (bytes from outside what it may
 * read appeared in its output), and whether it behaved as it should (`wrong`: what was not).
 *
 * test/attack/attack.test.ts runs it under `npm test`; `npm run attack` prints the table.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { packageRoot } from '../../src/tasks/store.js';

const ROOT = packageRoot();
const BIN = join(ROOT, 'bin', 'sleuth.js');
/** Generous: a case that takes this long is a hang, whatever the machine's load. */
const HANG_MS = 90_000;
const STACK = /\n\s+at .+[:(]\d+:\d+\)?/u;
/** Planted in every file outside what sleuth may read or show: it must never appear in any output. */
const SECRET = 'SECRET-7f3a9c-outside-bytes';

export interface CaseResult {
  probe: string;
  name: string;
  crashed: boolean;
  hung: boolean;
  filesLost: number;
  leaked: boolean;
  /** What did not behave as it should (empty when all did). */
  wrong: string[];
  /** The last line the command wrote on stderr, or the response status (for the table's readers). */
  said?: string;
}

export interface ProbeRow {
  probe: string;
  cases: number;
  crashes: number;
  hangs: number;
  filesLost: number;
  leaks: number;
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  hung: boolean;
}

function sleuth(args: string[], o: { cwd: string; env?: NodeJS.ProcessEnv; asNobody?: boolean }): Run {
  const argv = o.asNobody ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, ...args] : [process.execPath, BIN, ...args];
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd: o.cwd, encoding: 'utf8', timeout: HANG_MS, env: { ...process.env, ...o.env } });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', hung: r.error !== undefined && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT' };
}

/** Every file under `dir` with the hash of its bytes (a snapshot to compare after). */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.set(p, createHash('sha256').update(readFileSync(p)).digest('hex'));
    }
  };
  if (existsSync(dir) && statSync(dir).isDirectory()) walk(dir);
  else if (existsSync(dir)) out.set(dir, createHash('sha256').update(readFileSync(dir)).digest('hex'));
  return out;
}

function lost(before: Map<string, string>): number {
  let n = 0;
  for (const [path, hash] of before) {
    if (!existsSync(path) || !statSync(path).isFile() || createHash('sha256').update(readFileSync(path)).digest('hex') !== hash) n++;
  }
  return n;
}

class Probe {
  readonly results: CaseResult[] = [];
  constructor(readonly name: string) {}

  /** Record one CLI case: exit status in `ok` (default 0 or 2), no stack trace, and the checks' complaints. */
  cli(name: string, r: Run, o: { ok?: number[]; lost?: number; leaked?: boolean; wrong?: (string | boolean)[] } = {}): void {
    const ok = o.ok ?? [0, 2];
    const wrong = (o.wrong ?? []).filter((w): w is string => typeof w === 'string');
    if (!r.hung && !ok.includes(r.status ?? -1)) wrong.push(`exit ${r.status}, expected ${ok.join(' or ')}: ${r.stderr.trim().split('\n')[0]}`);
    // A crash is a stack trace, or an exit no command chooses (a signal, or a status besides 0, 1, 2).
    const crashed = !r.hung && (STACK.test(r.stderr) || STACK.test(r.stdout) || r.status === null || ![0, 1, 2].includes(r.status));
    this.results.push({ probe: this.name, name, crashed, hung: r.hung, filesLost: o.lost ?? 0, leaked: o.leaked ?? false, wrong, said: `exit ${r.status}: ${r.stderr.trim().split('\n').at(-1) ?? ''}` });
  }

  record(result: Omit<CaseResult, 'probe'>): void {
    this.results.push({ probe: this.name, ...result });
  }
}

const oneLine = (r: Run) => r.stderr.trim().split('\n').length === 1 || `stderr is not one line: ${r.stderr.trim().slice(0, 200)}`;
const exit = (r: Run, code: number) => r.status === code || `exit ${r.status}, expected ${code}: ${r.stderr.trim().slice(0, 200)}`;

function corpus(dir: string, name: string, lines: object[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return path;
}

function dataLoss(work: string): Probe {
  const p = new Probe('writes that destroy');
  const cwd = mkdtempSync(join(work, 'loss-'));
  const c = corpus(cwd, 'c.jsonl', [{ id: 'a', text: 'hello world' }, { id: 'b', text: 'second chunk' }]);
  const project = join(cwd, 'work', 'project');
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'README'), 'my project\n');
  writeFileSync(join(project, 'src', 'main.c'), 'int main(void) { return 0; }\n');
  let before = snapshot(project);
  let r = sleuth(['index', '--corpus', c, '--out', 'work/project'], { cwd });
  p.cli('index --out a directory of other files', r, { lost: lost(before), wrong: [exit(r, 2), oneLine(r), r.stderr.includes('work/project') || 'the message does not name work/project'] });

  writeFileSync(join(cwd, 'notes.txt'), 'plain file\n');
  before = snapshot(join(cwd, 'notes.txt'));
  r = sleuth(['index', '--corpus', c, '--out', 'notes.txt'], { cwd });
  p.cli('index --out a plain file', r, { lost: lost(before), wrong: [exit(r, 2), oneLine(r)] });

  r = sleuth(['index', '--corpus', c, '--out', 'ix'], { cwd });
  const again = sleuth(['index', '--corpus', c, '--out', 'ix'], { cwd });
  p.cli('index rebuilt over its own index', again, { wrong: [exit(r, 0), exit(again, 0)] });

  const forced = mkdtempSync(join(cwd, 'forced-'));
  writeFileSync(join(forced, 'x'), 'x');
  r = sleuth(['index', '--corpus', c, '--out', forced, '--force'], { cwd });
  p.cli('index --force over other files (the explicit override)', r, { wrong: [exit(r, 0), existsSync(join(forced, 'manifest.json')) || 'no index after --force'] });

  const home = join(cwd, 'home');
  const foreign = join(home, 'tasks', 'mine');
  mkdirSync(foreign, { recursive: true });
  writeFileSync(join(foreign, 'thesis.tex'), '\\documentclass{article}\n');
  const tasks = join(cwd, 'tasks.jsonl');
  writeFileSync(tasks, JSON.stringify({ id: 't1', query: 'what is said first?', facts: [{ text: 'hello', chunkIds: ['a'] }] }) + '\n');
  before = snapshot(foreign);
  r = sleuth(['tasks', 'import', '--format', 'jsonl', '--tasks', tasks, '--corpus', c, '--name', 'mine'], { cwd, env: { SLEUTH_HOME: home } });
  p.cli('tasks import over a directory of other files', r, { lost: lost(before), wrong: [exit(r, 2)] });

  const runDir = join(cwd, 'results');
  mkdirSync(runDir);
  writeFileSync(join(runDir, 'summary.json'), '{"mine": true}\n');
  before = snapshot(runDir);
  r = sleuth(['eval', '--agent', 'baseline', '--limit', '1', '--out', runDir], { cwd, env: { SLEUTH_HOME: home } });
  p.cli('eval --out a directory of other files', r, { lost: lost(before), wrong: [exit(r, 2), oneLine(r)] });

  // A build killed mid-way left its temporary directory; the next build of the same target removes it.
  const stale = join(cwd, '.ix.tmp-2147480000-1');
  mkdirSync(stale);
  writeFileSync(join(stale, 'postings.bin'), Buffer.alloc(1 << 20));
  r = sleuth(['index', '--corpus', c, '--out', 'ix'], { cwd });
  p.cli('stale .idx.tmp of a killed build', r, { wrong: [exit(r, 0), !existsSync(stale) || 'the stale temporary directory is still there'] });
  return p;
}

function fsErrors(work: string): Probe {
  const p = new Probe('file-system errors');
  const cwd = mkdtempSync(join(work, 'fs-'));
  const c = corpus(cwd, 'c.jsonl', [{ id: 'a', text: 'hello world' }]);
  mkdirSync(join(cwd, 'a'));
  writeFileSync(join(cwd, 'a', 'file'), 'x');
  let r = sleuth(['index', '--corpus', c, '--out', 'a/file/sub'], { cwd });
  p.cli('--out a/file/sub where a/file is a file', r, { wrong: [exit(r, 2), oneLine(r), r.stderr.includes('a/file') || 'path not named'] });
  r = sleuth(['index', '--corpus', c, '--out', '/proc/sleuth-index'], { cwd });
  p.cli('--out under /proc', r, { wrong: [exit(r, 2), oneLine(r)] });
  r = sleuth(['index', '--corpus', join(cwd, 'missing.jsonl'), '--out', 'ix'], { cwd });
  p.cli('a corpus that does not exist', r, { wrong: [exit(r, 2), oneLine(r)] });
  // Permissions mean nothing to root: these run as nobody where the machine allows it.
  const canDrop = process.getuid?.() !== 0 || spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'true']).status === 0;
  if (canDrop) {
    const asNobody = process.getuid?.() === 0;
    const shared = mkdtempSync(join(tmpdir(), 'sleuth-attack-perm-'));
    chmodSync(shared, 0o755);
    const locked = join(shared, 'locked');
    mkdirSync(locked);
    writeFileSync(join(locked, 'c.jsonl'), JSON.stringify({ id: 'a', text: 'hello' }) + '\n');
    chmodSync(locked, 0o000);
    const pub = join(shared, 'pub');
    mkdirSync(pub);
    writeFileSync(join(pub, 'c.jsonl'), JSON.stringify({ id: 'a', text: 'hello' }) + '\n');
    chmodSync(join(pub, 'c.jsonl'), 0o644);
    chmodSync(pub, 0o555);
    r = sleuth(['index', '--corpus', locked, '--out', join(tmpdir(), `sleuth-attack-out-${process.pid}`)], { cwd: shared, asNobody });
    p.cli('an unreadable corpus directory', r, { wrong: [exit(r, 2), oneLine(r), r.stderr.includes('locked') || 'path not named'] });
    r = sleuth(['index', '--corpus', join(pub, 'c.jsonl'), '--out', join(pub, 'ix')], { cwd: shared, asNobody });
    p.cli('an unwritable output parent', r, { wrong: [exit(r, 2), oneLine(r), r.stderr.includes('pub') || 'path not named'] });
    chmodSync(locked, 0o755);
    rmSync(shared, { recursive: true, force: true });
  }
  return p;
}

function grepBlowUp(work: string): Probe {
  const p = new Probe('grep blow-up');
  const cwd = mkdtempSync(join(work, 'grep-'));
  const c = corpus(cwd, 'c.jsonl', Array.from({ length: 200 }, (_, i) => ({ id: `d${i}`, text: `chunk ${i} says w${i * 7} and more words here` })));
  sleuth(['index', '--corpus', c, '--out', 'ix'], { cwd });
  for (const n of [1000, 3000, 10_000]) {
    const pattern = `(${Array.from({ length: n }, (_, i) => `w${i}`).join('|')})`;
    const r = sleuth(['grep', '--index', 'ix', '--json', pattern], { cwd });
    let hits = -1;
    try {
      hits = (JSON.parse(r.stdout) as { hits: unknown[] }).hits.length;
    } catch {
      /* reported below */
    }
    p.cli(`${n.toLocaleString('en-US')} alternatives`, r, { wrong: [exit(r, 0), hits === 10 || `expected 10 hits, got ${hits}`] });
  }
  let r = sleuth(['grep', '--index', 'ix', `${'('.repeat(5000)}a${')'.repeat(5000)}`], { cwd });
  p.cli('groups nested 5,000 deep', r, { wrong: [exit(r, 2), oneLine(r)] });
  r = sleuth(['grep', '--index', 'ix', '--json', 'x'.repeat(50_000)], { cwd });
  p.cli('a 50,000-character literal', r, { wrong: [exit(r, 0)] });
  r = sleuth(['grep', '--index', 'ix', '(a+)+$'], { cwd });
  p.cli('catastrophic backtracking (a+)+$', r);
  return p;
}

function terminal(work: string): Probe {
  const p = new Probe('terminal escapes');
  const cwd = mkdtempSync(join(work, 'esc-'));
  const evil = 'pwn \u001b]0;owned title\u0007 \u001b[2J \u001b]52;c;c2VjcmV0\u0007 over\rwrite \u009b31m \u202eevil';
  const c = corpus(cwd, 'c.jsonl', [{ id: 'e1', title: `Title \u001b[1mbold`, text: `Corliss ${evil}` }]);
  sleuth(['index', '--corpus', c, '--out', 'ix'], { cwd });
  const control = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;
  for (const args of [['read', '--index', 'ix', 'e1'], ['grep', '--index', 'ix', 'Corliss'], ['search', '--index', 'ix', 'Corliss']]) {
    const r = sleuth(args, { cwd });
    p.cli(`sleuth ${args[0]} prints stored escape sequences`, r, { wrong: [exit(r, 0), !control.test(r.stdout) || 'a control character reached the terminal', r.stdout.includes('␛]0;owned title') || 'the escape is not shown visibly'] });
  }
  const r = sleuth(['read', '--index', 'ix', '--json', 'e1'], { cwd });
  let exact = false;
  try {
    exact = (JSON.parse(r.stdout) as { text: string }).text === `Corliss ${evil}`;
  } catch {
    /* reported below */
  }
  p.cli('sleuth read --json stays exact', r, { wrong: [exit(r, 0), exact || '--json text differs from the corpus'] });
  everyField(p, cwd, control);
  return p;
}

/**
 * Escapes in every field a command prints, not only titles and texts: chunk ids, query and run ids,
 * task ids, queries and facts, through every command that prints data read from a file.
 */
function everyField(p: Probe, cwd: string, control: RegExp): void {
  const clear = '\u001b[2J';
  const title = '\u001b]0;pwned\u0007';
  const home = join(cwd, 'home');
  const env = { SLEUTH_HOME: home };
  corpus(cwd, 'ids.jsonl', [{ id: `${clear}id`, title: 'Corliss', text: 'Corliss and more' }, { id: 'plain', text: 'other words' }]);
  writeFileSync(join(cwd, 'qrels.txt'), `q${title} 0 ${clear}id 1\n`);
  writeFileSync(join(cwd, 'run.txt'), `q${title} Q0 ${clear}id 1 3.2 r${title}\n`);
  writeFileSync(join(cwd, 'tasks.jsonl'), JSON.stringify({ id: `t${title}`, query: `Corliss? ${title}`, facts: [{ text: `fact ${clear}`, chunkIds: [`${clear}id`] }] }) + '\n');
  sleuth(['index', '--corpus', 'ids.jsonl', '--out', 'ix-ids'], { cwd });
  const cases: [string, string[]][] = [
    ['search: a chunk id', ['search', '--index', 'ix-ids', 'Corliss']],
    ['grep: a chunk id', ['grep', '--index', 'ix-ids', 'Corliss']],
    ['read: an unknown id in the error', ['read', '--index', 'ix-ids', `${clear}nope`]],
    ['ir-eval --per-query: query ids', ['ir-eval', '--per-query', '--qrels', 'qrels.txt', '--run', 'run.txt']],
    ['tasks import: ids, queries and facts', ['tasks', 'import', '--format', 'jsonl', '--tasks', 'tasks.jsonl', '--corpus', 'ids.jsonl', '--name', 'evil']],
    ['tasks show', ['tasks', 'show', 'evil']],
    ['eval: task ids and queries', ['eval', '--agent', 'baseline', '--tasks', 'evil', '--split', 'train', '--out', 'ev']],
    ['compare', ['compare', 'ev', 'ev']],
    ['headroom', ['headroom', '--agent', 'baseline', '--tasks', 'evil', '--split', 'train', '--samples', '2', '--out', 'hr']],
  ];
  for (const [name, args] of cases) {
    const r = sleuth(args, { cwd, env });
    p.cli(name, r, { wrong: [!control.test(r.stdout + r.stderr) || `a control character reached the terminal: ${JSON.stringify((r.stdout + r.stderr).match(/.*[\u0000-\u0008\u000b-\u001f\u007f-\u009f].*/u)?.[0]?.slice(0, 160))}`] });
  }
}

function honestLoaders(work: string): Probe {
  const p = new Probe('silent nonsense');
  const cwd = mkdtempSync(join(work, 'loaders-'));
  const home = join(cwd, 'home');
  const c = corpus(cwd, 'c.jsonl', [{ id: 'a', text: 'hello world' }]);
  writeFileSync(join(cwd, 'empty.jsonl'), '');
  let r = sleuth(['tasks', 'import', '--format', 'jsonl', '--tasks', 'empty.jsonl', '--corpus', c, '--name', 'empty'], { cwd, env: { SLEUTH_HOME: home } });
  p.cli('an empty tasks file', r, { wrong: [exit(r, 2), r.stderr.includes('empty.jsonl') || 'the file is not named', !existsSync(join(home, 'tasks', 'empty')) || 'a task set was written'] });
  writeFileSync(join(cwd, 'latin1.jsonl'), Buffer.concat([Buffer.from('{"id":"a","text":"ok"}\n{"id":"b","text":"caf'), Buffer.from([0xe9]), Buffer.from(' au lait"}\n')]));
  r = sleuth(['index', '--corpus', 'latin1.jsonl', '--out', 'ix'], { cwd });
  p.cli('corpus bytes that are not UTF-8', r, { wrong: [exit(r, 0), /latin1\.jsonl: 1 line .*not UTF-8.*line 2/u.test(r.stderr) || `no warning naming the file and line: ${r.stderr.trim()}`] });
  // A sampling agent's eval repeats whatever the concurrency.
  const agent = `local:${join(ROOT, 'src', 'backend', 'local', 'assets', 'local-base.sampler.ckpt')}`;
  const tokens = (dir: string) =>
    readFileSync(join(dir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { taskId: string; sample: number; turns: { sampledTokens?: number[] }[] })
      .map((x) => `${x.taskId}#${x.sample}:${JSON.stringify(x.turns.map((t) => t.sampledTokens ?? []))}`).sort();
  const a = sleuth(['eval', '--agent', agent, '--limit', '3', '--samples', '2', '--concurrency', '1', '--out', 'ev1'], { cwd, env: { SLEUTH_HOME: home } });
  const b = sleuth(['eval', '--agent', agent, '--limit', '3', '--samples', '2', '--concurrency', '4', '--out', 'ev4'], { cwd, env: { SLEUTH_HOME: home } });
  let same: string | true = 'no rollouts';
  if (a.status === 0 && b.status === 0) {
    const ta = tokens(join(cwd, 'ev1'));
    const tb = tokens(join(cwd, 'ev4'));
    same = (ta.length === 6 && ta.every((t, i) => t === tb[i])) || 'the rollouts differ between concurrency 1 and 4';
  }
  p.cli('a sampling eval at concurrency 1 and 4', b, { wrong: [exit(a, 0), exit(b, 0), same] });
  return p;
}

function numerical(work: string): Probe {
  const p = new Probe('numerical blow-up');
  const cwd = mkdtempSync(join(work, 'nan-'));
  const r = sleuth(['train', '--config', join(ROOT, 'configs', 'local-demo.json'), '--lr', '1e30', '--steps', '2', '--eval-at-start', 'false', '--eval-limit', '1', '--out', 'run'], { cwd, env: { SLEUTH_HOME: join(cwd, 'home') } });
  // checkpoints.jsonl names files relative to the run directory.
  const checkpoints = existsSync(join(cwd, 'run', 'checkpoints.jsonl')) ? readFileSync(join(cwd, 'run', 'checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { step: number; path: string }) : [];
  p.cli('train --lr 1e30', r, {
    ok: [1],
    wrong: [exit(r, 1), /training stopped at step \d+: .*last good checkpoint: step 0/u.test(r.stderr) || `no clear message: ${r.stderr.trim().split('\n').at(-1)}`, (checkpoints.length === 1 && existsSync(resolve(cwd, 'run', checkpoints[0]!.path))) || 'the last good checkpoint is not kept alone'],
  });
  return p;
}

/** A corpus line whose meta nests `depth` deep, 10 KB at 5,000: JSON.parse takes it, recursive walks after it need not. */
function nestedLine(id: string, depth: number): string {
  return `{"id":"${id}","title":"t","text":"nested words","meta":${'['.repeat(depth)}0${']'.repeat(depth)}}`;
}

function nestedJson(work: string): Probe {
  const p = new Probe('nested JSON');
  const cwd = mkdtempSync(join(work, 'nested-'));
  const home = join(cwd, 'home');
  writeFileSync(join(cwd, 'deep.jsonl'), `{"id":"ok","text":"plain words"}\n${nestedLine('deep', 5000)}\n`);
  writeFileSync(join(cwd, 'fine.jsonl'), `${nestedLine('fine', 100)}\n`);
  writeFileSync(join(cwd, 'tasks.jsonl'), JSON.stringify({ id: 't1', query: 'what words?', facts: [{ text: 'words', chunkIds: ['ok'] }] }) + '\n');
  const deepTask = `{"id":"t2","query":"q","facts":[{"text":"x","chunkIds":["ok"]}],"extra":${'['.repeat(5000)}${']'.repeat(5000)}}`;
  writeFileSync(join(cwd, 'deep-tasks.jsonl'), deepTask + '\n');
  const names = (r: Run, what: string) => r.stderr.includes(what) || `the message does not name ${what}: ${r.stderr.trim().slice(0, 200)}`;
  let r = sleuth(['index', '--corpus', 'deep.jsonl', '--out', 'ix'], { cwd });
  p.cli('index: a line nested 5,000 deep', r, { wrong: [exit(r, 2), oneLine(r), names(r, 'deep.jsonl:2'), !existsSync(join(cwd, 'ix')) || 'an index was written'] });
  r = sleuth(['index', '--corpus', 'fine.jsonl', '--out', 'ix-fine'], { cwd });
  p.cli('index: a line nested 100 deep is kept', r, { wrong: [exit(r, 0)] });
  r = sleuth(['tasks', 'import', '--format', 'jsonl', '--tasks', 'tasks.jsonl', '--corpus', 'deep.jsonl', '--name', 'deep'], { cwd, env: { SLEUTH_HOME: home } });
  p.cli('tasks import --corpus: a line nested 5,000 deep', r, { wrong: [exit(r, 2), names(r, 'deep.jsonl:2')] });
  r = sleuth(['tasks', 'import', '--format', 'jsonl', '--tasks', 'deep-tasks.jsonl', '--corpus', 'fine.jsonl', '--name', 'deep2'], { cwd, env: { SLEUTH_HOME: home } });
  p.cli('tasks import: a task nested 5,000 deep', r, { wrong: [exit(r, 2), names(r, 'deep-tasks.jsonl line 1')] });
  return p;
}

/** Inputs that are not files: /dev/zero never ends, a FIFO with no writer blocks its open forever. */
function deviceFiles(work: string): Probe {
  const p = new Probe('device files as inputs');
  const cwd = mkdtempSync(join(work, 'devices-'));
  const home = join(cwd, 'home');
  spawnSync('mkfifo', [join(cwd, 'fifo.jsonl')]);
  mkdirSync(join(cwd, 'dir'));
  spawnSync('mkfifo', [join(cwd, 'dir', 'b.jsonl')]);
  corpus(join(cwd, 'dir'), 'a.jsonl', [{ id: 'a', text: 'hello world' }]);
  const c = corpus(cwd, 'c.jsonl', [{ id: 'a', text: 'hello world' }]);
  writeFileSync(join(cwd, 'tasks.jsonl'), JSON.stringify({ id: 't1', query: 'hello?', facts: [{ text: 'hello', chunkIds: ['a'] }] }) + '\n');
  const refused = (r: Run, what: string) => (r.stderr.includes(what) && /FIFO|device/u.test(r.stderr)) || `not refused by name: ${r.stderr.trim().slice(0, 200)}`;
  const cases: [string, string[], string][] = [
    ['index --corpus /dev/zero', ['index', '--corpus', '/dev/zero', '--out', 'ix'], '/dev/zero'],
    ['index --corpus a FIFO with no writer', ['index', '--corpus', 'fifo.jsonl', '--out', 'ix'], 'fifo.jsonl'],
    ['index --corpus a directory holding a FIFO', ['index', '--corpus', 'dir', '--out', 'ix'], 'b.jsonl'],
    ['tasks import --corpus /dev/zero', ['tasks', 'import', '--format', 'jsonl', '--tasks', 'tasks.jsonl', '--corpus', '/dev/zero', '--name', 'z'], '/dev/zero'],
    ['tasks import --tasks a FIFO', ['tasks', 'import', '--format', 'jsonl', '--tasks', 'fifo.jsonl', '--corpus', c, '--name', 'f'], 'fifo.jsonl'],
    ['tasks import --tasks /dev/zero', ['tasks', 'import', '--format', 'jsonl', '--tasks', '/dev/zero', '--corpus', c, '--name', 'z2'], '/dev/zero'],
  ];
  for (const [name, args, what] of cases) {
    const r = sleuth(args, { cwd, env: { SLEUTH_HOME: home } });
    p.cli(name, r, { wrong: [exit(r, 2), args[0] === 'index' ? oneLine(r) : true, refused(r, what)] });
  }
  return p;
}

/** Flags for a GRPO run of a few seconds on the local model: a step of two short rollouts. */
const TINY_TRAIN = ['--config', join(ROOT, 'configs', 'local-demo.json'), '--groups-per-step', '1', '--group-size', '2', '--max-turns', '2', '--max-tokens-per-turn', '32', '--eval-at-start', 'false', '--eval-limit', '1', '--eval-every', '0'];

/** A copy of a run directory, to damage one way per case. */
function copyRun(from: string, to: string): string {
  spawnSync('cp', ['-r', from, to]);
  return to;
}

function corruptedCheckpoints(work: string): Probe {
  const p = new Probe('corrupted checkpoints');
  const cwd = mkdtempSync(join(work, 'ckpt-'));
  const env = { SLEUTH_HOME: join(cwd, 'home') };
  const made = sleuth(['train', ...TINY_TRAIN, '--steps', '2', '--out', 'run'], { cwd, env });
  const state = (run: string) => join(cwd, run, 'checkpoints', 'step-2.state.ckpt');
  const flipped = copyRun(join(cwd, 'run'), join(cwd, 'flipped'));
  const bytes = readFileSync(state('flipped'));
  for (let i = 0; i < 64; i++) bytes[(bytes.length >> 1) + i] ^= 0xff;
  writeFileSync(state('flipped'), bytes);
  let r = sleuth(['train', '--resume', 'flipped', '--steps', '3'], { cwd, env });
  p.cli('train --resume: 64 bytes flipped mid-checkpoint', r, {
    wrong: [exit(made, 0), exit(r, 2), (r.stderr.includes('step-2.state.ckpt') && /corrupted/u.test(r.stderr)) || `the file is not named as corrupted: ${r.stderr.trim().slice(0, 200)}`, /last good checkpoint|no earlier checkpoint is intact/u.test(r.stderr) || 'the last good checkpoint is not named'],
  });
  const kept = copyRun(join(cwd, 'run'), join(cwd, 'kept'));
  r = sleuth(['train', '--resume', kept, '--steps', '3', '--keep-checkpoints', '5'], { cwd, env });
  const twice = copyRun(kept, join(cwd, 'twice'));
  const late = readFileSync(join(twice, 'checkpoints', 'step-3.state.ckpt'));
  // Zero 64 bytes that are not all zero already (Adam's moments of weights a short run never moved
  // are): the middle's, else the nearest such stretch before it.
  let from = late.length >> 1;
  while (from > 64 && late.subarray(from, from + 64).every((b) => b === 0)) from -= 64;
  late.fill(0, from, from + 64);
  writeFileSync(join(twice, 'checkpoints', 'step-3.state.ckpt'), late);
  r = sleuth(['train', '--resume', 'twice', '--steps', '4'], { cwd, env });
  p.cli('train --resume: a zeroed stretch, an older checkpoint intact', r, { wrong: [exit(r, 2), r.stderr.includes('last good checkpoint is step 2') || `step 2 is not named as the last good one: ${r.stderr.trim().slice(0, 240)}`] });
  const cut = copyRun(join(cwd, 'run'), join(cwd, 'cut'));
  writeFileSync(state('cut'), readFileSync(state('cut')).subarray(0, 100_000));
  r = sleuth(['train', '--resume', cut, '--steps', '3'], { cwd, env });
  p.cli('train --resume: a truncated checkpoint', r, { wrong: [exit(r, 2), r.stderr.includes('step-2.state.ckpt') || 'the file is not named'] });
  const sampler = join(cwd, 'bad.sampler.ckpt');
  const weights = readFileSync(join(cwd, 'run', 'checkpoints', 'sampler-2.sampler.ckpt'));
  weights[weights.length - 10] ^= 0x01;
  writeFileSync(sampler, weights);
  r = sleuth(['eval', '--agent', `local:${sampler}`, '--limit', '1', '--out', 'ev'], { cwd, env });
  p.cli('eval --agent local: a sampler checkpoint with one bit flipped', r, { wrong: [exit(r, 2), (r.stderr.includes('bad.sampler.ckpt') && /corrupted/u.test(r.stderr)) || `not refused by name: ${r.stderr.trim().slice(0, 200)}`] });
  return p;
}

/** Wait (polling, up to HANG_MS) until `path` exists; whether it did. */
async function appears(path: string): Promise<boolean> {
  for (const start = Date.now(); Date.now() - start < HANG_MS; await new Promise((r) => setTimeout(r, 20))) if (existsSync(path)) return true;
  return false;
}

/** Start the CLI without waiting; resolves with its Run when it ends. */
function sleuthAsync(args: string[], o: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: o.cwd, env: { ...process.env, ...o.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_MS);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      done({ status, stdout, stderr, hung: signal === 'SIGKILL' });
    });
  });
}

async function concurrentWriters(work: string): Promise<Probe> {
  const p = new Probe('concurrent writers');
  const cwd = mkdtempSync(join(work, 'writers-'));
  const env = { SLEUTH_HOME: join(cwd, 'home') };
  const made = sleuth(['train', ...TINY_TRAIN, '--steps', '1', '--out', 'run'], { cwd, env });
  // The second trainer starts while the first holds the run (its lock file is there).
  const first = sleuthAsync(['train', '--resume', 'run', '--steps', '4'], { cwd, env });
  const held = await appears(join(cwd, '.run.lock'));
  const second = sleuth(['train', '--resume', 'run', '--steps', '4'], { cwd, env });
  const a = await first;
  const steps = existsSync(join(cwd, 'run', 'metrics.jsonl')) ? readFileSync(join(cwd, 'run', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { step?: number; kind?: string })).filter((m) => m.kind !== 'eval').map((m) => m.step) : [];
  const once = new Set(steps).size === steps.length || `metrics.jsonl repeats steps: ${steps.join(',')}`;
  p.cli('two train --resume on one run at once', second, { wrong: [exit(made, 0), held || 'the first trainer took no lock', exit(a, 0), exit(second, 2), /another sleuth \(process \d+/u.test(second.stderr) || 'the holder is not named', once, !existsSync(join(cwd, '.run.lock')) || 'the lock outlived the trainer'] });

  // A lock left by a writer killed with SIGKILL: its process is gone, so the lock is stale.
  writeFileSync(join(cwd, '.run.lock'), '2147480000\n');
  let r = sleuth(['train', '--resume', 'run', '--steps', '5'], { cwd, env });
  p.cli('train --resume over a stale lock of a killed trainer', r, { wrong: [exit(r, 0), !existsSync(join(cwd, '.run.lock')) || 'the stale lock is still there'] });

  // An index build while another process holds --out's lock (a live process: this one's child).
  const c = corpus(cwd, 'c.jsonl', [{ id: 'a', text: 'hello world' }]);
  const holder = spawn('sleep', ['60']);
  try {
    writeFileSync(join(cwd, '.ix.lock'), `${holder.pid}\n`);
    r = sleuth(['index', '--corpus', c, '--out', 'ix'], { cwd });
    p.cli('index --out held by another writer', r, { wrong: [exit(r, 2), oneLine(r), r.stderr.includes(`process ${holder.pid}`) || 'the holder is not named', !existsSync(join(cwd, 'ix')) || 'an index was written'] });
  } finally {
    holder.kill('SIGKILL');
  }
  rmSync(join(cwd, '.ix.lock'));
  // Two builds started together: whichever finds the other's lock is refused, and one index results.
  const big = corpus(cwd, 'big.jsonl', Array.from({ length: 50_000 }, (_, i) => ({ id: `d${i}`, text: `chunk ${i} of many words w${i % 977} and w${i % 131}` })));
  const both = await Promise.all([sleuthAsync(['index', '--corpus', big, '--out', 'ix2'], { cwd }), sleuthAsync(['index', '--corpus', big, '--out', 'ix2'], { cwd })]);
  const statuses = both.map((x) => x.status).sort().join(',');
  const refused = both.find((x) => x.status === 2);
  p.cli('two index into one --out at once', refused ?? both[0]!, { wrong: [['0,0', '0,2'].includes(statuses) || `exits ${statuses}`, !refused || /another sleuth/u.test(refused.stderr) || `refused without naming the holder: ${refused.stderr.trim()}`, existsSync(join(cwd, 'ix2', 'manifest.json')) || 'no index at --out', !existsSync(join(cwd, '.ix2.lock')) || 'the lock outlived the builds'] });

  // A file of the user's at the lock's name is not a lock: left alone, and the build refused.
  writeFileSync(join(cwd, '.ix3.lock'), 'my notes\n');
  const before = snapshot(join(cwd, '.ix3.lock'));
  r = sleuth(['index', '--corpus', c, '--out', 'ix3'], { cwd });
  p.cli('a file of the user\'s where the lock goes', r, { lost: lost(before), wrong: [exit(r, 2), oneLine(r)] });
  return p;
}

/**
 * A zstd frame without a content size that inflates to `gib` GiB: blocks of one repeated byte
 * (RLE, 4 bytes each for 128 KiB), as \`zstd -19 --no-content-size\` makes of zeros.
 */
function zstdBomb(gib: number): Buffer {
  const blocks = gib * 8192;
  const out = Buffer.alloc(6 + blocks * 4);
  out.writeUInt32LE(0xfd2fb528, 0);
  out[4] = 0x00; // no content size, not single-segment: a window descriptor follows
  out[5] = 0x38; // window 2^(10+7) = 128 KiB
  for (let i = 0; i < blocks; i++) {
    const last = i === blocks - 1 ? 1 : 0;
    const header = last | (1 << 1) | (131072 << 3); // RLE block of 128 KiB
    out.writeUIntLE(header, 6 + i * 4, 3);
    out[9 + i * 4] = 0x20;
  }
  return out;
}

/** Compressed bodies that inflate past any limit, sent to serve-tinker, with a healthz sent meanwhile. */
async function compressionBombs(work: string): Promise<Probe> {
  const p = new Probe('compression bombs');
  const cwd = mkdtempSync(join(work, 'bombs-'));
  const child = spawn(process.execPath, [BIN, 'serve-tinker', '--port', '0', '--dir', join(cwd, 'weights')], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SLEUTH_HOME: join(cwd, 'home') } });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  try {
    const url = await new Promise<string>((ok, fail) => {
      const t = setTimeout(() => fail(new Error(`serve-tinker did not start: ${out}`)), HANG_MS);
      const look = () => {
        const m = /listening on (http:\/\/\S+)/u.exec(out);
        if (m) {
          clearTimeout(t);
          ok(m[1]!);
        }
      };
      child.stdout.on('data', look);
      child.stderr.on('data', look);
    });
    const { gzipSync } = await import('node:zlib');
    const bodies: [string, string, Buffer][] = [
      ['zstd: 98 KB that inflate to 3 GiB', 'zstd', zstdBomb(3)],
      ['gzip: 1 MB that inflates to 1 GiB', 'gzip', gzipSync(Buffer.alloc(1 << 30, 0x20), { level: 9 })],
      ['zstd: a bomb cut short', 'zstd', zstdBomb(1).subarray(0, 5000)],
    ];
    for (const [name, encoding, body] of bodies) {
      const order: string[] = [];
      const bomb = fetch(`${url}/api/v1/forward_backward`, { method: 'POST', headers: { 'x-api-key': 'tml-attack', 'content-type': 'application/json', 'content-encoding': encoding }, body, signal: AbortSignal.timeout(HANG_MS) })
        .then(async (r) => (order.push('bomb'), { status: r.status, body: await r.text() }))
        .catch(() => ({ status: 0, body: '' }));
      // Sent once the bomb's bytes are on their way: it must not wait for the decompression.
      await new Promise((r) => setTimeout(r, 50));
      const health = fetch(`${url}/api/v1/healthz`, { headers: { 'x-api-key': 'tml-attack' }, signal: AbortSignal.timeout(HANG_MS) })
        .then((r) => (order.push('healthz'), r.status))
        .catch(() => 0);
      const [b, h] = await Promise.all([bomb, health]);
      const isBomb = !name.includes('cut short');
      p.record({
        name,
        crashed: b.status >= 500 || child.exitCode !== null,
        hung: b.status === 0,
        filesLost: 0,
        leaked: false,
        wrong: [
          isBomb ? b.status === 413 || `status ${b.status}, expected 413` : b.status === 400 || `status ${b.status}, expected 400`,
          h === 200 || `healthz answered ${h}`,
          !isBomb || order[0] === 'healthz' || 'healthz waited for the decompression',
        ].filter((w): w is string => typeof w === 'string'),
        said: `HTTP ${b.status}: ${b.body.slice(0, 160)}`,
      });
    }
  } finally {
    child.kill('SIGKILL');
  }
  return p;
}

/** Numbers no run could mean, and empty paths: refused at once with the flag named, never started. */
function absurdFlags(work: string): Probe {
  const p = new Probe('absurd numeric flags');
  const cwd = mkdtempSync(join(work, 'absurd-'));
  const env = { SLEUTH_HOME: join(cwd, 'home') };
  const c = corpus(cwd, 'c.jsonl', [{ id: 'a', text: 'hello world' }]);
  sleuth(['index', '--corpus', c, '--out', 'ix'], { cwd });
  const train = ['train', '--config', join(ROOT, 'configs', 'local-demo.json')];
  const cases: [string, string[], RegExp][] = [
    ['train --steps 1e12', [...train, '--steps', '1e12', '--out', 'r'], /steps/u],
    ['train --group-size 1e9', [...train, '--group-size', '1e9', '--out', 'r'], /groupSize/u],
    ['train --groups-per-step 1e15', [...train, '--groups-per-step', '1e15', '--out', 'r'], /groupsPerStep/u],
    ['train --local.d-model 1e8', [...train, '--model', 'base', '--local.d-model', '100000000', '--out', 'r'], /dModel/u],
    ['train --max-tokens-per-turn 1e12', [...train, '--max-tokens-per-turn', '1e12', '--out', 'r'], /maxTokensPerTurn/u],
    ['train --lr 1e400 (infinite)', [...train, '--lr', '1e400', '--out', 'r'], /learning|lr/iu],
    ['train --steps -1', [...train, '--steps', '-1', '--out', 'r'], /steps/u],
    ['train --out ""', [...train, '--out', ''], /--out/u],
    ['index --out ""', ['index', '--corpus', c, '--out', ''], /--out/u],
    ['index --corpus ""', ['index', '--corpus', '', '--out', 'ix2'], /--corpus/u],
    ['eval --samples 1e9', ['eval', '--agent', 'baseline', '--samples', '1e9', '--out', 'e'], /--samples/u],
    ['search -k 1e12', ['search', '--index', 'ix', '-k', '1e12', 'hello'], /--k/u],
  ];
  for (const [name, args, names] of cases) {
    const r = sleuth(args, { cwd, env });
    p.cli(name, r, { wrong: [exit(r, 2), oneLine(r), names.test(r.stderr) || `the flag is not named: ${r.stderr.trim().slice(0, 200)}`, !existsSync(join(cwd, 'r')) || 'a run directory was started'] });
  }
  return p;
}

/** The explorer over a runs directory with a FIFO, /dev/zero and links out of it, beside one good run. */
async function explorer(work: string): Promise<Probe> {
  const p = new Probe('explorer');
  const base = mkdtempSync(join(work, 'explore-'));
  const runs = join(base, 'runs');
  const outside = join(base, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.json'), JSON.stringify({ kind: 'eval', note: SECRET }) + '\n');
  writeFileSync(join(outside, 'secret.jsonl'), `${SECRET} line one\n${SECRET} line two\n`);
  mkdirSync(join(outside, 'tasks'));
  writeFileSync(join(outside, 'tasks', 'tasks.jsonl'), JSON.stringify({ split: 'eval', id: 't', query: 'q', facts: [{ text: SECRET, chunkIds: ['c'] }] }) + '\n');
  const run = (name: string, config: object = { kind: 'eval', agent: 'baseline' }) => {
    const dir = join(runs, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config) + '\n');
    return dir;
  };
  const good = run('good');
  writeFileSync(join(good, 'summary.json'), JSON.stringify({ reward: 0.5 }) + '\n');
  spawnSync('mkfifo', [join(run('fifo'), 'summary.json')]);
  symlinkSync('/dev/zero', join(run('zero'), 'metrics.jsonl'));
  symlinkSync(join(outside, 'secret.json'), join(run('summary-link'), 'summary.json'));
  const configLink = join(runs, 'config-link');
  mkdirSync(configLink);
  symlinkSync(join(outside, 'secret.json'), join(configLink, 'config.json'));
  symlinkSync(join(outside, 'secret.jsonl'), join(run('metrics-link'), 'metrics.jsonl'));
  symlinkSync(join(outside, 'secret.jsonl'), join(run('rollouts-link'), 'rollouts.jsonl'));
  run('tasks-outside', { kind: 'eval', agent: 'baseline', tasks: join(outside, 'tasks') });
  writeFileSync(join(runs, 'tasks-outside', 'rollouts.jsonl'), JSON.stringify({ version: 1, id: 't#0', taskId: 't', sample: 0, turns: [], curated: [], trajectory: [], endReason: 'finished', promptTokens: 0, completionTokens: 0 }) + '\n');

  const child = spawn(process.execPath, [BIN, 'explore', runs, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`explorer did not start: ${out}`)), HANG_MS);
      child.stdout.on('data', () => {
        const m = /listening on (http:\/\/\S+)/u.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(m[1]!);
        }
      });
    });
    const get = async (path: string) => {
      try {
        const res = await fetch(new URL(path, url), { signal: AbortSignal.timeout(30_000) });
        return { status: res.status, body: await res.text(), hung: false };
      } catch {
        return { status: 0, body: '', hung: true };
      }
    };
    const requests: [string, string, (status: number, body: string) => string | true][] = [
      ['/api/runs lists the good run', '/api/runs', (s, b) => (s === 200 && b.includes('"id":"good"')) || `status ${s}`],
      ['the good run is served', '/api/run?run=good', (s, b) => (s === 200 && b.includes('0.5')) || `status ${s}`],
      ['a FIFO summary.json', '/api/run?run=fifo', (s) => s === 200 || `status ${s}`],
      ['metrics.jsonl -> /dev/zero', '/api/run?run=zero', (s) => s === 200 || `status ${s}`],
      ['summary.json linked outside', '/api/run?run=summary-link', (s) => s === 200 || `status ${s}`],
      ['config.json linked outside', '/api/run?run=config-link', (s) => s === 200 || s === 404 || `status ${s}`],
      ['metrics.jsonl linked outside', '/api/run?run=metrics-link', (s) => s === 200 || `status ${s}`],
      ['rollouts.jsonl linked outside', '/api/rollouts?run=rollouts-link', (s) => s === 200 || `status ${s}`],
      ['a task set outside the runs directory', '/api/rollout?run=tasks-outside&n=0', (s, b) => (s === 200 && b.includes('tasksError')) || `status ${s}`],
      ['/api/runs after all of these', '/api/runs', (s, b) => (s === 200 && b.includes('"id":"good"')) || `status ${s}`],
    ];
    for (const [name, path, check] of requests) {
      const r = await get(path);
      const verdict = r.hung ? true : check(r.status, r.body);
      p.record({ name, crashed: r.status >= 500, hung: r.hung, filesLost: 0, leaked: r.body.includes(SECRET), wrong: verdict === true ? [] : [verdict], said: `HTTP ${r.status}: ${r.body.slice(0, 160)}` });
    }
  } finally {
    child.kill('SIGKILL');
  }
  return p;
}

/** The probe classes, by the name the table shows. */
export const PROBES: Record<string, (work: string) => Probe | Promise<Probe>> = {
  'writes that destroy': dataLoss,
  'file-system errors': fsErrors,
  'grep blow-up': grepBlowUp,
  explorer,
  'terminal escapes': terminal,
  'silent nonsense': honestLoaders,
  'numerical blow-up': numerical,
  'nested JSON': nestedJson,
  'device files as inputs': deviceFiles,
  'corrupted checkpoints': corruptedCheckpoints,
  'concurrent writers': concurrentWriters,
  'compression bombs': compressionBombs,
  'absurd numeric flags': absurdFlags,
};

/** Run the probe classes named (default all), in a temporary directory removed afterwards. */
export async function runAttacks(only: string[] = Object.keys(PROBES)): Promise<CaseResult[]> {
  const work = mkdtempSync(join(tmpdir(), 'sleuth-attack-'));
  try {
    const results: CaseResult[] = [];
    for (const name of only) {
      const make = PROBES[name];
      if (!make) throw new Error(`no probe class '${name}' (known: ${Object.keys(PROBES).join(', ')})`);
      const probe = await make(work);
      results.push(...probe.results);
    }
    return results;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function summarize(results: CaseResult[]): ProbeRow[] {
  const rows = new Map<string, ProbeRow>();
  for (const r of results) {
    const row = rows.get(r.probe) ?? { probe: r.probe, cases: 0, crashes: 0, hangs: 0, filesLost: 0, leaks: 0 };
    row.cases++;
    row.crashes += r.crashed ? 1 : 0;
    row.hangs += r.hung ? 1 : 0;
    row.filesLost += r.filesLost;
    row.leaks += r.leaked ? 1 : 0;
    rows.set(r.probe, row);
  }
  return [...rows.values()];
}

/** The table as Markdown: probe class | cases | crashes | hangs | files lost | leaks. */
export function table(rows: ProbeRow[]): string {
  const lines = ['| probe class | cases | crashes | hangs | files lost | leaks |', '|---|---:|---:|---:|---:|---:|'];
  for (const r of rows) lines.push(`| ${r.probe} | ${r.cases} | ${r.crashes} | ${r.hangs} | ${r.filesLost} | ${r.leaks} |`);
  return lines.join('\n');
}
