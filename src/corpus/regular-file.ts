import type { Stats } from 'node:fs';
import { InputError } from '../errors.js';

/**
 * `stats` (of `path`, links followed) if it is a regular file; otherwise an InputError naming it.
 * A device such as /dev/zero never ends and a FIFO with no writer blocks the open forever, so an
 * input file that is neither a file nor a directory is refused before it is opened (the explorer
 * refuses them the same way, on the open descriptor: src/explorer/guarded-read.ts).
 */
export function regularFile(path: string, stats: Stats): Stats {
  if (stats.isFile()) return stats;
  const kind = stats.isFIFO() ? 'a FIFO' : stats.isCharacterDevice() || stats.isBlockDevice() ? 'a device' : stats.isSocket() ? 'a socket' : stats.isDirectory() ? 'a directory' : 'something other than a file';
  throw new InputError(`${path}: is ${kind}, expected a file`);
}
