import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { compareKernels } from '../../bench/kernels-then.js';
import { ensureWasm } from '../backend/helpers.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHAPES = { T: 37, C: 64, NH: 2, S: 40, matmuls: [[64, 96], [96, 64]] as [number, number][] };
/** The kernels before issue 47 (the same bits as now), and before issue 32's four-lane exp (not). */
const SAME = '250aff1', DIFFERENT = '2626f8e';
const present = (rev: string) => spawnSync('git', ['cat-file', '-e', `${rev}^{commit}`], { cwd: ROOT }).status === 0;

beforeAll(ensureWasm);

describe('bench: kernels then and now', () => {
  it("compiles an earlier commit's kernels from git history and tells bit-identical outputs from changed ones", async () => {
    if (!present(SAME) || !present(DIFFERENT)) {
      // A shallow clone: the comparison says why it cannot run.
      expect(await compareKernels(ROOT, SAME, SHAPES, 1)).toMatchObject({ skipped: expect.stringContaining('no such revision') });
      return;
    }
    const same = await compareKernels(ROOT, SAME, SHAPES, 1);
    expect(same).toMatchObject({ commit: SAME, bit_identical: true });
    expect(Object.keys(same['gflops_now'] as object)).toEqual(['attention forward', 'attention backward', 'matmul 37x64x96 forward', 'matmul 37x64x96 backward', 'matmul 37x96x64 forward', 'matmul 37x96x64 backward']);
    expect(await compareKernels(ROOT, DIFFERENT, SHAPES, 1)).toMatchObject({ commit: DIFFERENT, bit_identical: false });
  }, 120_000);

  it('names a revision git does not have', async () => {
    expect(await compareKernels(ROOT, 'no-such-revision', SHAPES, 1)).toEqual({ skipped: expect.stringMatching(/git show no-such-revision:src\/backend\/local\/assembly\/kernels.ts failed .*no such revision in this clone/) });
  });
});
