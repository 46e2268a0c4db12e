import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { InputError } from '../errors.js';
import { describeFsError } from './fs-error.js';

/**
 * Directories sleuth writes whole (an index, a task set) and replaces on a rebuild. A rebuild may
 * only replace what sleuth itself wrote there, recognised by the manifest it leaves behind; anything
 * else at the target is refused with the path named, unless the user passes --force.
 *
 * The new directory is built in a temporary sibling `.NAME.tmp-PID-TIME` and renamed into place,
 * so a failure leaves the old one untouched; temporaries left by a killed build (whose process is
 * gone) are removed when the next build of the same target starts.
 */
export interface OwnedDirKind {
  /** What the directory is, for messages: 'index', 'task set'. */
  what: string;
  /** The manifest file sleuth writes last into every such directory. */
  manifest: string;
  /** Whether a parsed manifest is one of ours (e.g. its `format` field). */
  recognise(manifest: unknown): boolean;
}

/**
 * Refuse (InputError, exit 2) to replace `dir` unless it is absent, an empty directory, or a
 * directory holding this kind's manifest; `force` replaces anything.
 */
export function checkReplaceable(dir: string, kind: OwnedDirKind, force = false): void {
  if (force) return;
  let stat;
  try {
    stat = lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const refuse = (why: string) => {
    throw new InputError(`${dir} ${why}, so sleuth will not replace it with the new ${kind.what}: choose another path, or pass --force to replace it`);
  };
  if (stat.isSymbolicLink()) refuse('is a symbolic link');
  if (!stat.isDirectory()) refuse('is a file, not a directory');
  if (readdirSync(dir).length === 0) return;
  if (!isOwned(dir, kind)) refuse(`holds files sleuth did not write (no ${kind.what} ${kind.manifest})`);
}

function isOwned(dir: string, kind: OwnedDirKind): boolean {
  const path = join(dir, kind.manifest);
  try {
    if (!lstatSync(path).isFile()) return false;
    return kind.recognise(JSON.parse(readFileSync(path, 'utf8')));
  } catch {
    return false;
  }
}

const TEMP = /^\.(.+)\.tmp-(\d+)-\d+(\.old)?$/;

/**
 * A fresh temporary sibling of `dir` to build into, after removing the temporaries of earlier builds
 * of `dir` whose process no longer runs (a build killed mid-way cannot clean up after itself).
 */
export function makeTempSibling(dir: string): string {
  const parent = dirname(dir);
  const tmp = join(parent, `.${basename(dir)}.tmp-${process.pid}-${Date.now()}`);
  try {
    mkdirSync(parent, { recursive: true });
    removeStaleTemps(dir);
    mkdirSync(tmp);
  } catch (err) {
    // Named by the target the user gave, not only by the temporary sibling that failed.
    const problem = describeFsError(err);
    if (problem === undefined) throw err;
    throw new InputError(`cannot write ${dir}: ${problem}`);
  }
  return tmp;
}

/** Remove `.NAME.tmp-PID-*` siblings of `dir` left by processes that are gone. Returns what was removed. */
export function removeStaleTemps(dir: string): string[] {
  const parent = dirname(dir);
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return removed;
  }
  for (const name of names) {
    const m = TEMP.exec(name);
    if (!m || m[1] !== basename(dir) || processAlive(Number(m[2]))) continue;
    rmSync(join(parent, name), { recursive: true, force: true });
    removed.push(join(parent, name));
  }
  return removed;
}

/** Whether process `pid` still runs (this one always does). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Swap a finished temporary directory into place, keeping the old one until the rename is done. */
export function replaceDir(tmp: string, dir: string): void {
  mkdirSync(dirname(dir), { recursive: true });
  if (!existsSync(dir) && !isDanglingLink(dir)) {
    renameSync(tmp, dir);
    return;
  }
  const old = `${tmp}.old`;
  renameSync(dir, old);
  renameSync(tmp, dir);
  rmSync(old, { recursive: true, force: true });
}

function isDanglingLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
