import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { acquireLock, lockPath } from '../../src/files/lock.js';

const tmp = mkdtempSync(join(tmpdir(), 'sleuth-lock-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('lock files', () => {
  it('holds the pid beside the target, refuses a second writer while a live process holds it, and is removed on release', async () => {
    const target = join(tmp, 'run');
    const lock = acquireLock(target, 'run directory');
    expect(lock.path).toBe(join(tmp, '.run.lock'));
    expect(readFileSync(lock.path, 'utf8')).toBe(`${process.pid}\n`);
    lock.release();
    expect(existsSync(lock.path)).toBe(false);

    // Another live process holds it.
    const holder = spawn('sleep', ['30']);
    try {
      writeFileSync(lockPath(target), `${holder.pid}\n`);
      expect(() => acquireLock(target, 'run directory')).toThrow(InputError);
      expect(() => acquireLock(target, 'run directory')).toThrow(new RegExp(`run directory .*run is being written by another sleuth \\(process ${holder.pid}, lock .*\\.run\\.lock\\)`, 'u'));
      expect(readFileSync(lockPath(target), 'utf8')).toBe(`${holder.pid}\n`);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
    }
    // Its process is gone now: the lock is stale and taken over.
    const taken = acquireLock(target, 'run directory');
    expect(readFileSync(taken.path, 'utf8')).toBe(`${process.pid}\n`);
    taken.release();
  });

  it('leaves a file of the user\'s at the lock\'s name alone and refuses', () => {
    const target = join(tmp, 'ix');
    writeFileSync(lockPath(target), 'my notes\n');
    expect(() => acquireLock(target, 'index')).toThrow(/\.ix\.lock exists and is not a sleuth lock/u);
    expect(readFileSync(lockPath(target), 'utf8')).toBe('my notes\n');
  });

  it('names the target when the lock cannot be written', () => {
    writeFileSync(join(tmp, 'plain'), 'x');
    expect(() => acquireLock(join(tmp, 'plain', 'sub'), 'index')).toThrow(/cannot write .*plain\/sub: /u);
  });
});
