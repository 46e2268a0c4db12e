import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { describeFsError } from '../../src/files/fs-error.js';
import { checkReplaceable, makeTempSibling, removeStaleTemps, replaceDir, type OwnedDirKind } from '../../src/files/owned-dir.js';

const tmp = mkdtempSync(join(tmpdir(), 'sleuth-owned-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const KIND: OwnedDirKind = { what: 'thing', manifest: 'thing.json', recognise: (m) => (m as { format?: string })?.format === 'thing' };

describe('owned directories', () => {
  it('replaces only what sleuth wrote: absent, empty or with its manifest; anything else needs force', () => {
    const dir = join(tmp, 'a');
    expect(() => checkReplaceable(dir, KIND)).not.toThrow();
    mkdirSync(dir);
    expect(() => checkReplaceable(dir, KIND)).not.toThrow();
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    expect(() => checkReplaceable(dir, KIND)).toThrow(InputError);
    expect(() => checkReplaceable(dir, KIND)).toThrow(/a holds files sleuth did not write \(no thing thing\.json\).*--force/u);
    expect(() => checkReplaceable(dir, KIND, true)).not.toThrow();
    writeFileSync(join(dir, 'thing.json'), '{"format":"other"}');
    expect(() => checkReplaceable(dir, KIND)).toThrow(InputError);
    writeFileSync(join(dir, 'thing.json'), '{"format":"thing"}');
    expect(() => checkReplaceable(dir, KIND)).not.toThrow();
    writeFileSync(join(tmp, 'file'), 'x');
    expect(() => checkReplaceable(join(tmp, 'file'), KIND)).toThrow(/is a file, not a directory/u);
  });

  it('removes the temporaries of dead builds of the same target, keeps live ones and other names', () => {
    const target = join(tmp, 'ix');
    const dead = join(tmp, '.ix.tmp-2147480000-5');
    const deadOld = join(tmp, '.ix.tmp-2147480000-5.old');
    const live = join(tmp, `.ix.tmp-${process.pid}-7`);
    const other = join(tmp, '.other.tmp-2147480000-5');
    for (const d of [dead, deadOld, live, other]) mkdirSync(d);
    expect(removeStaleTemps(target).sort()).toEqual([dead, deadOld].sort());
    expect([existsSync(dead), existsSync(deadOld), existsSync(live), existsSync(other)]).toEqual([false, false, true, true]);
  });

  it('swaps a finished temporary directory into place', () => {
    const target = join(tmp, 'swap');
    mkdirSync(target);
    writeFileSync(join(target, 'thing.json'), 'old');
    const t = makeTempSibling(target);
    writeFileSync(join(t, 'thing.json'), 'new');
    replaceDir(t, target);
    expect(readFileSync(join(target, 'thing.json'), 'utf8')).toBe('new');
    expect(existsSync(t)).toBe(false);
  });

  it('names the path and the cause of a file-system error in one line', () => {
    writeFileSync(join(tmp, 'plain'), 'x');
    let err: unknown;
    try {
      mkdirSync(join(tmp, 'plain', 'sub'), { recursive: true });
    } catch (e) {
      err = e;
    }
    const line = describeFsError(err)!;
    expect(line).toMatch(/plain/u);
    expect(line).toMatch(/\((ENOTDIR|EEXIST)\)$/u);
    expect(line.includes('\n')).toBe(false);
    expect(describeFsError(new Error('not a file-system error'))).toBeUndefined();
  });
});
