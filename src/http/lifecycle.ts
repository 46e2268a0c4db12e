import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { resolve } from 'node:path';
import { writeFileAtomic } from '../files/atomic.js';
import { processAlive } from '../files/owned-dir.js';
import { InputError } from '../errors.js';

/**
 * A server's life: listening (a port already taken is an error that says so), its pid file, and
 * its end. A long-running server (`explore`, `serve`, `serve-tinker`, `serve-search`, `mcp --http`)
 * is stopped by SIGINT (Ctrl-C), SIGTERM (`kill PID`) and SIGHUP (the terminal closed), all of
 * which close it cleanly. Its PID is printed and, with `--pid-file`, written to a file. Started through npm (`npx sleuth explore &`), the
 * process `$!` names is npm's, and npm passes a SIGTERM only to the shell it started, which dies
 * without passing it on: so under npm the server also stops when that parent goes away.
 */

/** A pid file holds one process id and a newline; anything else is not ours to overwrite. */
const PID_TEXT = /^\d+\n?$/u;

/**
 * Check a `--pid-file` before the server starts: a missing file, or one that names a process no
 * longer running, is fine; a file of other content, or a server still running, is refused.
 */
export function pidFileFlag(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const file = resolve(path);
  if (!existsSync(file)) return file;
  const text = readFileSync(file, 'utf8');
  if (!PID_TEXT.test(text)) throw new InputError(`--pid-file ${path}: the file exists and does not hold a process id; choose another path`);
  const pid = Number(text.trim());
  if (pid !== process.pid && processAlive(pid)) throw new InputError(`--pid-file ${path}: process ${pid} is still running (stop it with kill ${pid})`);
  return file;
}

/** Under npm (npx, npm run), the parent is npm's shell: its going away means stop. */
function startedByNpm(): boolean {
  return process.env['npm_lifecycle_event'] !== undefined;
}

/**
 * Wait until the server is told to stop, then close it. Prints `NAME: pid N` on stderr, writes and
 * afterwards removes the pid file (only while it still holds this process's id).
 */
export async function serveUntilStopped(name: string, close: () => Promise<void>, pidFile?: string): Promise<void> {
  // The handlers are in place before the PID is told: a caller that reads the PID and signals at
  // once (a script, a test, a process manager) must never meet the default action, which kills.
  let done!: (why: string) => void;
  const stopped = new Promise<string>((resolve) => (done = resolve));
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const parent = process.ppid;
  const watch = startedByNpm() ? setInterval(() => process.ppid !== parent && stop('its npm parent exited'), 250) : undefined;
  watch?.unref();
  function stop(why: string) {
    for (const s of signals) process.off(s, onSignal);
    if (watch) clearInterval(watch);
    done(why);
  }
  function onSignal(signal: NodeJS.Signals) {
    stop(signal);
  }
  for (const s of signals) process.on(s, onSignal);
  if (pidFile) writeFileAtomic(pidFile, `${process.pid}\n`);
  process.stderr.write(`${name}: pid ${process.pid} (stop it with kill ${process.pid}${pidFile ? ` or kill $(cat ${pidFile})` : ''})\n`);
  const reason = await stopped;
  process.stderr.write(`${name}: stopping (${reason})\n`);
  try {
    await close();
  } finally {
    if (pidFile && existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() === String(process.pid)) rmSync(pidFile);
  }
}

/**
 * Listen and resolve with the bound port (port 0 picks a free one). A port or address that cannot
 * be had is an InputError naming the flag that gave it, e.g. `--port 8000: already in use on 127.0.0.1`.
 */
export function listen(server: Server, port: number, host = '127.0.0.1'): Promise<number> {
  return new Promise((bound, fail) => {
    const refused = (err: NodeJS.ErrnoException) => fail(listenError(err, port, host));
    server.once('error', refused);
    server.listen(port, host, () => {
      server.off('error', refused);
      const addr = server.address();
      bound(typeof addr === 'object' && addr ? addr.port : port);
    });
  });
}

function listenError(err: NodeJS.ErrnoException, port: number, host: string): Error {
  if (err.code === 'EADDRINUSE') return new InputError(`--port ${port}: already in use on ${host}`);
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') return new InputError(`--host ${host}: not an address of this machine`);
  if (err.code === 'EACCES') return new InputError(`--port ${port}: not allowed on ${host} (ports below 1024 need privileges)`);
  return new InputError(`--port ${port}: cannot listen on ${host} (${err.code ?? err.message})`);
}

/**
 * Stop listening and resolve once the server is closed. Idle keep-alive connections end at once;
 * requests in progress are let finish, unless `cut` (a long poll or a stream would hold the close
 * up): then every connection ends now.
 */
export function closeServer(server: Server, { cut = false }: { cut?: boolean } = {}): Promise<void> {
  return new Promise((closed) => {
    // A connection whose request ends after close() would stay open as keep-alive until its
    // timeout (5 s): ended as soon as it is idle.
    const idle = cut ? undefined : setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(idle);
      closed();
    });
    if (cut) server.closeAllConnections();
    else server.closeIdleConnections();
  });
}
