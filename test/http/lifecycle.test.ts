import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { closeServer, listen, pidFileFlag } from '../../src/http/lifecycle.js';

/** A server's life: listening on 127.0.0.1, its pid file, and its end (a real process, from dist/). */
const ROOT = join(import.meta.dirname, '..', '..');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-lifecycle-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('listen', () => {
  it('binds a free port for 0, and refuses a port already in use, naming it', async () => {
    const first = createServer();
    const port = await listen(first, 0);
    expect(port).toBeGreaterThan(0);
    const second = createServer();
    try {
      const refused = await listen(second, port).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(InputError);
      expect((refused as Error).message).toBe(`--port ${port}: already in use on 127.0.0.1`);
      // The refused server is still usable.
      expect(await listen(second, 0)).not.toBe(port);
    } finally {
      await closeServer(second);
      await closeServer(first);
    }
  });

  it('refuses an address that is not this machine, naming it', async () => {
    const server = createServer();
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): no machine has it.
    await expect(listen(server, 0, '192.0.2.1')).rejects.toThrow('--host 192.0.2.1: not an address of this machine');
  });
});

describe('closeServer', () => {
  /** A server whose one route answers when the test releases it. */
  async function slowServer(): Promise<{ server: Server; port: number; arrived: Promise<void>; release: () => void }> {
    let release!: () => void, arrived!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const arrival = new Promise<void>((r) => (arrived = r));
    const server = createServer((_req, res) => {
      arrived();
      void released.then(() => res.end('done'));
    });
    return { server, port: await listen(server, 0), arrived: arrival, release };
  }
  const get = (port: number) =>
    new Promise<string>((ok, fail) => {
      const req = request({ host: '127.0.0.1', port, path: '/' }, (res) => {
        let body = '';
        res.on('data', (b: Buffer) => (body += b.toString()));
        res.on('end', () => ok(body));
      });
      req.on('error', fail);
      req.end();
    });

  it('lets a request in progress finish, then closes', async () => {
    const s = await slowServer();
    const answer = get(s.port);
    await s.arrived;
    const closed = closeServer(s.server);
    s.release();
    expect(await answer).toBe('done');
    await closed;
    expect(s.server.listening).toBe(false);
  });

  it('with cut, ends a request in progress at once', async () => {
    const s = await slowServer();
    const answer = get(s.port).catch((err: Error) => err);
    await s.arrived;
    await closeServer(s.server, { cut: true });
    expect(await answer).toBeInstanceOf(Error);
    s.release();
  });
});

describe('pid files', () => {
  it('takes a missing file, or one naming a process that is gone; refuses other content and a running process, leaving the file as it was', () => {
    expect(pidFileFlag(undefined)).toBeUndefined();
    expect(pidFileFlag(join(tmp, 'new.pid'))).toBe(join(tmp, 'new.pid'));
    const stale = join(tmp, 'stale.pid');
    // Above the largest pid Linux hands out (4194304): never running.
    writeFileSync(stale, '99999999\n');
    expect(pidFileFlag(stale)).toBe(stale);
    const notes = join(tmp, 'notes.txt');
    writeFileSync(notes, 'my notes\n');
    expect(() => pidFileFlag(notes)).toThrow(`--pid-file ${notes}: the file exists and does not hold a process id; choose another path`);
    expect(readFileSync(notes, 'utf8')).toBe('my notes\n');
    const running = join(tmp, 'running.pid');
    writeFileSync(running, `${process.ppid}\n`);
    expect(() => pidFileFlag(running)).toThrow(`--pid-file ${running}: process ${process.ppid} is still running (stop it with kill ${process.ppid})`);
  });

  it('a served process writes its pid file, and on SIGHUP closes, says why and removes the file', async () => {
    const pidFile = join(tmp, 'served.pid');
    const lifecycle = pathToFileURL(join(ROOT, 'dist', 'src', 'http', 'lifecycle.js')).href;
    const script = `
      import { createServer } from 'node:http';
      const { closeServer, listen, serveUntilStopped } = await import(${JSON.stringify(lifecycle)});
      const server = createServer((_req, res) => res.end('up'));
      console.log('listening on ' + await listen(server, 0));
      await serveUntilStopped('toolkit-test', () => closeServer(server), ${JSON.stringify(pidFile)});`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const seen = (pattern: RegExp) =>
      new Promise<void>((ok, fail) => {
        const check = () => (pattern.test(out) ? ok() : child.exitCode !== null ? fail(new Error(`exited before ${pattern}:\n${out}`)) : setTimeout(check, 20));
        check();
      });
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
    await seen(/toolkit-test: pid \d+/);
    const port = Number(/listening on (\d+)/.exec(out)![1]);
    expect(readFileSync(pidFile, 'utf8')).toBe(`${child.pid}\n`);
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('up');
    child.kill('SIGHUP');
    expect(await exited, out).toBe(0);
    expect(out).toContain('toolkit-test: stopping (SIGHUP)');
    expect(existsSync(pidFile)).toBe(false);
  }, 60_000);
});
