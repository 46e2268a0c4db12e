import { existsSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { writeFileAtomic } from '../files/atomic.js';
import { InputError } from '../errors.js';

/**
 * How a long-running server (`explore`, `serve`, `serve-tinker`) is stopped: SIGINT (Ctrl-C),
 * SIGTERM (`kill PID`) and SIGHUP (the terminal closed) all close it cleanly. Its PID is printed
 * and, with `--pid-file`, written to a file. Started through npm (`npx sleuth explore &`), the
 * process `$!` names is npm's, and npm passes a SIGTERM only to the shell it started, which dies
 * without passing it on: so under npm the server also stops when that parent goes away.
 */

/** A pid file holds one process id and a newline; anything else is not ours to overwrite. */
const PID_TEXT = /^\d+\n?$/u;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

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
  if (pid !== process.pid && isRunning(pid)) throw new InputError(`--pid-file ${path}: process ${pid} is still running (stop it with kill ${pid})`);
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
  if (pidFile) writeFileAtomic(pidFile, `${process.pid}\n`);
  process.stderr.write(`${name}: pid ${process.pid} (stop it with kill ${process.pid}${pidFile ? ` or kill $(cat ${pidFile})` : ''})\n`);
  const reason = await new Promise<string>((done) => {
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
  });
  process.stderr.write(`${name}: stopping (${reason})\n`);
  try {
    await close();
  } finally {
    if (pidFile && existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() === String(process.pid)) rmSync(pidFile);
  }
}
