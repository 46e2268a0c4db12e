import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendCheckpoints, readCheckpoints } from '../../src/runs/checkpoints.js';
import { runPath } from '../../src/runs/layout.js';

let root: string;
beforeEach(() => { root = mkdtempSync(join(tmpdir(), 'sleuth-ckpt-')); });
afterEach(() => rmSync(root, { recursive: true, force: true }));

const lines = (dir: string) => readFileSync(runPath(dir, 'checkpoints'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

describe('checkpoints.jsonl paths', () => {
  it('stores files inside the run directory relative to it, and reads them from where the directory is now', () => {
    const a = join(root, 'a');
    mkdirSync(a);
    appendCheckpoints(a, [{ step: 1, path: join(a, 'checkpoints', 'step-1.ckpt'), samplerPath: join(a, 'checkpoints', 'sampler-1.ckpt') }]);
    expect(lines(a)[0]).toMatchObject({ step: 1, path: 'checkpoints/step-1.ckpt', samplerPath: 'checkpoints/sampler-1.ckpt' });
    const b = join(root, 'b');
    renameSync(a, b);
    expect(readCheckpoints(b)).toEqual([{ step: 1, path: join(b, 'checkpoints', 'step-1.ckpt'), samplerPath: join(b, 'checkpoints', 'sampler-1.ckpt') }]);
  });

  it('keeps a file outside the run directory absolute, a remote URI and a null sampler as they are', () => {
    const a = join(root, 'a');
    mkdirSync(a);
    const outside = join(root, 'elsewhere', 'base.ckpt');
    appendCheckpoints(a, [{ step: 0, path: outside, samplerPath: null }, { step: 1, path: 'tinker://run-1/state/step-1', samplerPath: 'tinker://run-1/sampler/1' }]);
    expect(lines(a)).toEqual([{ step: 0, path: outside, samplerPath: null }, { step: 1, path: 'tinker://run-1/state/step-1', samplerPath: 'tinker://run-1/sampler/1' }]);
    expect(readCheckpoints(a)).toEqual(lines(a));
  });

  it('reads records written with absolute paths (before paths were relative) unchanged, and skips lines that are not checkpoints', () => {
    const a = join(root, 'a');
    mkdirSync(a);
    writeFileSync(runPath(a, 'checkpoints'), `${JSON.stringify({ step: 3, path: '/old/run/checkpoints/step-3.ckpt', samplerPath: '/old/run/checkpoints/sampler-3.ckpt' })}\n{"step": 4}\n{"step": 5, "pa`);
    expect(readCheckpoints(a)).toEqual([{ step: 3, path: '/old/run/checkpoints/step-3.ckpt', samplerPath: '/old/run/checkpoints/sampler-3.ckpt' }]);
  });
});
