import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, type Stats } from 'node:fs';
import { inside, PathRefused } from './paths.js';

/**
 * The explorer's one way to read a file. A run directory is data someone else may have made, so
 * every file the explorer opens goes through here:
 *  - its real path (symbolic links resolved) must lie inside one of the allowed roots, so a link to
 *    /etc/passwd inside a run is refused, not served;
 *  - it must be a regular file: a FIFO (which would block the server on open) or a device such as
 *    /dev/zero (which never ends) is refused; it is opened non-blocking and checked on the open
 *    descriptor, so it cannot be swapped between the check and the read;
 *  - a whole-file read is capped in size, so one huge file cannot grow the server without bound.
 * A refused file is PathRefused (404, or a warning on the run): other runs are served as before.
 */

/** Largest file read whole (config, summary, metrics, a task set's tasks). */
export const MAX_READ_BYTES = 256 << 20;

export interface OpenFile {
  fd: number;
  stat: Stats;
}

export class GuardedReader {
  /** `roots` must be real paths (realRoot). */
  constructor(readonly roots: readonly string[]) {}

  /** The real path of `path` if it exists and lies inside a root; undefined if it does not exist. */
  realPath(path: string): string | undefined {
    let real: string;
    try {
      real = realpathSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
      throw new PathRefused(`${path}: cannot be read (${(err as NodeJS.ErrnoException).code})`);
    }
    if (!this.roots.some((root) => inside(root, real))) throw new PathRefused(`${path} lies outside the directories the explorer serves`);
    return real;
  }

  /** Open a regular file for reading (the caller closes `fd`); undefined if it does not exist. */
  open(path: string): OpenFile | undefined {
    const real = this.realPath(path);
    if (real === undefined) return undefined;
    let fd: number;
    try {
      fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new PathRefused(`${path}: cannot be opened (${(err as NodeJS.ErrnoException).code})`);
    }
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      closeSync(fd);
      throw new PathRefused(`${path} is not a regular file`);
    }
    return { fd, stat };
  }

  /** Size, inode and times of a regular file, or undefined if it does not exist. */
  stat(path: string): Stats | undefined {
    const f = this.open(path);
    if (!f) return undefined;
    closeSync(f.fd);
    return f.stat;
  }

  /** A whole file as bytes (at most `maxBytes`), or undefined if it does not exist. */
  readBytes(path: string, maxBytes = MAX_READ_BYTES): Buffer | undefined {
    const f = this.open(path);
    if (!f) return undefined;
    try {
      if (f.stat.size > maxBytes) throw new PathRefused(`${path} is ${f.stat.size} bytes, more than the ${maxBytes} the explorer reads`);
      const buf = Buffer.allocUnsafe(f.stat.size);
      let got = 0;
      while (got < buf.length) {
        const n = readSync(f.fd, buf, got, buf.length - got, got);
        if (n === 0) break;
        got += n;
      }
      return buf.subarray(0, got);
    } finally {
      closeSync(f.fd);
    }
  }

  /** A whole file as UTF-8 text, or undefined if it does not exist. */
  readText(path: string, maxBytes = MAX_READ_BYTES): string | undefined {
    return this.readBytes(path, maxBytes)?.toString('utf8');
  }
}
