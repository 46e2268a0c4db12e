/**
 * A file-system failure (permission denied, a file where a directory should be, a full disk, ...)
 * as one line naming the path and the cause, instead of a stack trace: the user can fix these.
 */

const VERBS: Record<string, string> = {
  open: 'open',
  mkdir: 'create directory',
  rmdir: 'remove directory',
  rm: 'remove',
  unlink: 'remove',
  rename: 'rename',
  scandir: 'list directory',
  opendir: 'list directory',
  stat: 'read',
  lstat: 'read',
  read: 'read',
  write: 'write',
  copyfile: 'copy',
  access: 'access',
};

/** The one-line description of a Node file-system error, or undefined if `err` is not one. */
export function describeFsError(err: unknown): string | undefined {
  const e = err as NodeJS.ErrnoException & { dest?: string };
  if (typeof e !== 'object' || e === null || typeof e.code !== 'string' || !/^E[A-Z]+$/.test(e.code) || typeof e.syscall !== 'string') return undefined;
  // Node's message reads "EACCES: permission denied, open '/x'": the middle part is the cause.
  const cause = /^E[A-Z]+: ([^,]+)/.exec(e.message)?.[1] ?? e.code;
  const verb = VERBS[e.syscall] ?? e.syscall;
  const path = e.path !== undefined ? ` ${e.path}` : '';
  const dest = e.dest !== undefined ? ` -> ${e.dest}` : '';
  return `cannot ${verb}${path}${dest}: ${cause} (${e.code})`;
}
