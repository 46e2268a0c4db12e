import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { describeFsError } from './fs-error.js';
import { processAlive } from './owned-dir.js';

/**
 * One writer at a time for a target sleuth writes over minutes (an index directory, a run
 * directory): a lock file `.NAME.lock` beside the target holds the writer's process id. A second
 * writer is refused with the holder named; a lock whose process is gone (a writer killed with
 * SIGKILL cannot remove it) is stale and taken over. The lock lives beside the target, not in it,
 * so it works before the target exists and survives the target being swapped by a rename.
 *
 * The lock file is made whole under a temporary name and linked into place: link() fails if the
 * name exists, so two writers never both see themselves as the holder and a reader never sees a
 * half-written pid.
 */
export interface Lock {
  readonly path: string;
  release(): void;
}

/** The refusal when a live sleuth holds the lock (exit 2, like any InputError). */
export class LockHeldError extends InputError {}

/** Whether a live process holds `target`'s lock now. */
export function lockHeld(target: string): boolean {
  const holder = holderOf(lockPath(target));
  return typeof holder === 'number' && processAlive(holder);
}

/** The lock file of `target`. */
export function lockPath(target: string): string {
  const full = resolve(target);
  return join(dirname(full), `.${basename(full)}.lock`);
}

/**
 * Take `target`'s lock for this process, or throw InputError (exit 2) naming the process holding
 * it. `what` names the target in the message ('index', 'run directory'). Released by `release()`
 * and, at the latest, when this process exits.
 */
export function acquireLock(target: string, what: string): Lock {
  const path = lockPath(target);
  const mine = join(dirname(path), `${basename(path)}.${process.pid}.tmp`);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(mine, `${process.pid}\n`);
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(mine, path);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = holderOf(path);
      if (holder === 'not a lock') throw new InputError(`${what} ${target}: ${path} exists and is not a sleuth lock (one process id), so sleuth leaves it alone; remove it or choose another path`);
      if (holder !== undefined && processAlive(holder)) {
        throw new LockHeldError(`${what} ${target} is being written by another sleuth (process ${holder}, lock ${path}); wait for it to finish, or stop it first`);
      }
      if (attempt > 0) throw new InputError(`${what} ${target}: cannot take the lock ${path} (another writer keeps replacing it)`);
      if (holder !== undefined) removeStale(path, holder);
    }
  } catch (err) {
    const problem = describeFsError(err);
    if (problem === undefined) throw err;
    throw new InputError(`cannot write ${target}: ${problem}`);
  } finally {
    try {
      unlinkSync(mine);
    } catch {
      /* never made */
    }
  }
  const release = () => {
    process.off('exit', release);
    // Only our own lock: never a lock another writer took over after ours was judged stale.
    if (holderOf(path) === process.pid) unlinkSync(path);
  };
  process.on('exit', release);
  return { path, release };
}

/** The pid a lock file holds; undefined if it is gone; 'not a lock' if it holds something else. */
function holderOf(path: string): number | undefined | 'not a lock' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return /^\d+\n$/u.test(text) ? Number(text) : 'not a lock';
}

/**
 * Remove a stale lock. It is first renamed away (atomic), then checked: if what was renamed is not
 * the stale lock seen (another writer took it over meanwhile) it is put back.
 */
function removeStale(path: string, staleHolder: number): void {
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = holderOf(aside);
  if (moved !== staleHolder && typeof moved === 'number' && processAlive(moved)) {
    try {
      linkSync(aside, path);
    } catch {
      /* a third writer holds it now; either way the live lock stays */
    }
  }
  unlinkSync(aside);
}
