import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

/** The servers as a user starts and stops them: through npx and by PID, from the built CLI (dist/). */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
const CHECKPOINT = join(ROOT, 'src', 'backend', 'local', 'assets', 'local-base.sampler.ckpt');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-servers-'));
const runs = join(tmp, 'runs');
mkdirSync(runs);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function start(command: string, args: string[]) {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    exited,
    get out() {
      return out;
    },
    /** The URL and PID the server prints once it listens. */
    async ready(): Promise<{ url: string; pid: number }> {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const url = /listening on (http:\/\/\S+?)\/?(?:v1)?(?:\s|$)/u.exec(out)?.[1];
        const pid = /: pid (\d+) /u.exec(out)?.[1];
        if (url && pid) return { url, pid: Number(pid) };
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

const listening = (url: string) => fetch(url).then(() => true, () => false);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Wait (a generous hang guard, not a timing assertion) until `f` holds. */
async function eventually(f: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`still not true after 30 s: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('stopping servers', () => {
  it('explore started through npx stops when the PID the shell knows ($!, npm\'s) gets SIGTERM', async () => {
    const s = start('npx', ['sleuth', 'explore', runs, '--port', '0']);
    const { url, pid } = await s.ready();
    expect(pid).not.toBe(s.child.pid);
    expect(await listening(url)).toBe(true);
    s.child.kill('SIGTERM');
    await s.exited;
    await eventually(async () => !(await listening(url)) && !alive(pid), `the explorer (pid ${pid}) stops listening on ${url}`);
  }, 180_000);

  it('explore --pid-file: the file names the listening process, SIGTERM to it stops it cleanly and removes the file', async () => {
    const pidFile = join(tmp, 'explore.pid');
    const s = start(process.execPath, [BIN, 'explore', runs, '--port', '0', '--pid-file', pidFile]);
    const { url, pid } = await s.ready();
    expect(readFileSync(pidFile, 'utf8')).toBe(`${pid}\n`);
    expect(pid).toBe(s.child.pid);
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.out).toContain('sleuth explore: stopping (SIGTERM)');
    expect(existsSync(pidFile)).toBe(false);
    expect(await listening(url)).toBe(false);
  }, 60_000);

  it('refuses a --pid-file that holds something else, and leaves it as it was', () => {
    const foreign = join(tmp, 'notes.txt');
    writeFileSync(foreign, 'my notes\n');
    const r = spawnSync(process.execPath, [BIN, 'explore', runs, '--port', '0', '--pid-file', foreign], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`--pid-file ${foreign}: the file exists and does not hold a process id`);
    expect(readFileSync(foreign, 'utf8')).toBe('my notes\n');
  });

  it('serve shuts down cleanly on SIGTERM and serve-tinker on SIGINT', async () => {
    const servers = [
      { signal: 'SIGTERM', args: [BIN, 'serve', '--checkpoint', CHECKPOINT, '--port', '0'] },
      { signal: 'SIGINT', args: [BIN, 'serve-tinker', '--checkpoint', CHECKPOINT, '--port', '0', '--dir', join(tmp, 'tinker')] },
    ] as const;
    for (const { signal, args } of servers) {
      const s = start(process.execPath, [...args]);
      const { url } = await s.ready();
      s.child.kill(signal);
      expect(await s.exited, `${args[1]} on ${signal}:\n${s.out}`).toEqual({ code: 0, signal: null });
      expect(s.out).toContain(`sleuth ${args[1]}: stopping (${signal})`);
      expect(await listening(url)).toBe(false);
    }
  }, 120_000);

  it('serve-search takes --pid-file, prints its PID, and says it stops on SIGTERM, removing the file', async () => {
    const corpus = join(tmp, 'corpus.jsonl');
    writeFileSync(corpus, ['{"id":"a","title":"Paris","text":"Paris is the capital of France."}', '{"id":"b","title":"Rome","text":"Rome is the capital of Italy."}'].join('\n') + '\n');
    const built = spawnSync(process.execPath, [BIN, 'index', '--corpus', corpus, '--out', join(tmp, 'index')], { cwd: ROOT, encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    const pidFile = join(tmp, 'serve-search.pid');
    const s = start(process.execPath, [BIN, 'serve-search', '--index', join(tmp, 'index'), '--port', '0', '--workers', '1', '--pid-file', pidFile]);
    const { url, pid } = await s.ready();
    expect(pid).toBe(s.child.pid);
    expect(readFileSync(pidFile, 'utf8')).toBe(`${pid}\n`);
    process.kill(pid, 'SIGTERM');
    expect(await s.exited, s.out).toEqual({ code: 0, signal: null });
    expect(s.out).toContain('sleuth serve-search: stopping (SIGTERM)');
    expect(existsSync(pidFile)).toBe(false);
    expect(await listening(url)).toBe(false);
  }, 120_000);
});
