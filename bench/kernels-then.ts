/**
 * The local backend's kernels now against the kernels of an earlier commit, side by side in one
 * process: the earlier kernels.ts is read from git history and compiled with this checkout's
 * AssemblyScript, both modules get the same inputs, and their calls alternate round after round (so
 * that load from other work hits both alike). Reports GFLOP/s (the best round) for attention forward
 * and backward and matmul forward and backward on a model's shapes, and whether every output of
 * the two is the same bit for bit. Used by bench:local.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WA } from '../src/wasm.js';
import { wasmPath } from '../src/backend/local/tensor-math.js';
import { LONG_MODEL } from '../src/backend/local/backend.js';

const KERNELS_SOURCE = 'src/backend/local/assembly/kernels.ts';
const PAGE = 65536;

interface KernelExports {
  matmul_forward(out: number, inp: number, w: number, b: number, T: number, C: number, OC: number): void;
  matmul_backward(dinp: number, dw: number, db: number, dout: number, inp: number, w: number, T: number, C: number, OC: number): void;
  attention_forward(out: number, att: number, qkv: number, t0: number, T: number, C: number, NH: number, S: number): void;
  attention_backward(dqkv: number, scratch: number, dout: number, qkv: number, att: number, t0: number, T: number, C: number, NH: number, S: number): void;
}

/** The kernels of `commit`, compiled to WebAssembly; a reason instead where git or the commit is missing. */
async function kernelsAt(root: string, commit: string): Promise<Uint8Array | { skipped: string }> {
  const src = spawnSync('git', ['show', `${commit}:${KERNELS_SOURCE}`], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (src.status !== 0) return { skipped: `git show ${commit}:${KERNELS_SOURCE} failed (${(src.stderr || String(src.error)).trim()}): no such revision in this clone` };
  const dir = mkdtempSync(join(tmpdir(), 'sleuth-kernels-then-'));
  try {
    writeFileSync(join(dir, 'kernels.ts'), src.stdout);
    const { default: asc } = await import('assemblyscript/asc');
    const { error, stderr } = await asc.main([join(dir, 'kernels.ts'), '--outFile', join(dir, 'kernels.wasm'), '-O3', '--enable', 'simd', '--importMemory', '--initialMemory', '1', '--runtime', 'stub', '--noAssert']);
    if (error) return { skipped: `compiling ${commit}'s kernels failed: ${stderr.toString().trim() || error.message}` };
    return readFileSync(join(dir, 'kernels.wasm'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One module over its own memory, with the shapes' inputs laid out alike in both. */
function instance(bytes: Uint8Array, floats: number) {
  const pages = Math.ceil((floats * 4 + 2 * PAGE) / PAGE);
  const memory = new WA.Memory({ initial: pages, maximum: pages });
  const x = new WA.Instance(new WA.Module(bytes), { env: { memory } }).exports as unknown as KernelExports;
  const f = new Float32Array(memory.buffer);
  let next = PAGE;
  const alloc = (n: number) => {
    const p = next;
    next += Math.ceil((n * 4) / 16) * 16;
    return p;
  };
  return { x, f, alloc };
}

export interface KernelShapes {
  /** Rows of the sequence, the model width, heads and context (the attention buffer's stride). */
  T: number;
  C: number;
  NH: number;
  S: number;
  /** Matmul shapes: inner x outputs, at T rows. */
  matmuls: [number, number][];
}

/** The 1.32M model's shapes at T rows: its attention, and the four matmuls of a block. */
export function longModelShapes(T: number): KernelShapes {
  const D = LONG_MODEL.dModel;
  return { T, C: D, NH: LONG_MODEL.nHeads, S: LONG_MODEL.context, matmuls: [[D, 4 * D], [4 * D, D], [D, 3 * D], [D, D]] };
}

/** GFLOP/s of each kernel, then and now, and whether they agree bit for bit. */
export async function compareKernels(root: string, commit: string, shapes: KernelShapes, rounds: number): Promise<Record<string, unknown>> {
  const then = await kernelsAt(root, commit);
  if (!(then instanceof Uint8Array)) return then;
  const nowPath = wasmPath();
  if (!nowPath) return { skipped: 'dist/wasm/kernels.wasm is not built' };
  const { T, C, NH, S, matmuls } = shapes;
  const floats = T * 3 * C * 2 + T * C * 2 + NH * S * S + 2 * S + matmuls.reduce((n, [Ci, OC]) => n + 3 * T * Ci + 2 * OC * Ci + 2 * T * OC + 2 * OC, 0) + 64 * 1024;
  const modules = [then, new Uint8Array(readFileSync(nowPath))].map((bytes) => {
    const { x, f, alloc } = instance(bytes, floats);
    const det = (p: number, n: number, salt: number) => {
      for (let i = 0; i < n; i++) f[p / 4 + i] = Math.sin(i * 0.7311 + salt);
    };
    const qkv = alloc(T * 3 * C), out = alloc(T * C), att = alloc(NH * S * S), dqkv = alloc(T * 3 * C), dout = alloc(T * C), scratch = alloc(2 * S);
    det(qkv, T * 3 * C, 1);
    det(dout, T * C, 2);
    const calls: Record<string, { run: () => void; flops: number; outputs: [number, number][] }> = {
      'attention forward': { run: () => x.attention_forward(out, att, qkv, 0, T, C, NH, S), flops: 4 * C * ((T * (T + 1)) / 2), outputs: [[out, T * C]] },
      'attention backward': {
        run: () => {
          f.fill(0, dqkv / 4, dqkv / 4 + T * 3 * C);
          x.attention_backward(dqkv, scratch, dout, qkv, att, 0, T, C, NH, S);
        },
        flops: 8 * C * ((T * (T + 1)) / 2),
        outputs: [[dqkv, T * 3 * C]],
      },
    };
    matmuls.forEach(([Ci, OC], k) => {
      const inp = alloc(T * Ci), w = alloc(OC * Ci), b = alloc(OC), o = alloc(T * OC), dinp = alloc(T * Ci), dw = alloc(OC * Ci), db = alloc(OC), d = alloc(T * OC);
      det(inp, T * Ci, 10 + k);
      det(w, OC * Ci, 20 + k);
      det(b, OC, 30 + k);
      det(d, T * OC, 40 + k);
      calls[`matmul ${T}x${Ci}x${OC} forward`] = { run: () => x.matmul_forward(o, inp, w, b, T, Ci, OC), flops: 2 * T * Ci * OC, outputs: [[o, T * OC]] };
      calls[`matmul ${T}x${Ci}x${OC} backward`] = {
        run: () => {
          f.fill(0, dinp / 4, dinp / 4 + T * Ci);
          f.fill(0, dw / 4, dw / 4 + OC * Ci);
          f.fill(0, db / 4, db / 4 + OC);
          x.matmul_backward(dinp, dw, db, d, inp, w, T, Ci, OC);
        },
        flops: 4 * T * Ci * OC,
        outputs: [[dinp, T * Ci], [dw, OC * Ci], [db, OC]],
      };
    });
    return { f, calls };
  });
  const names = Object.keys(modules[0]!.calls);
  const best = modules.map(() => Object.fromEntries(names.map((n) => [n, Infinity])) as Record<string, number>);
  for (let r = 0; r < rounds; r++) {
    for (const name of names) {
      modules.forEach((m, i) => {
        const t0 = process.hrtime.bigint();
        m.calls[name]!.run();
        best[i]![name] = Math.min(best[i]![name]!, Number(process.hrtime.bigint() - t0) / 1e9);
      });
    }
  }
  // The same inputs through both: every output compared as bits.
  const identical = names.every((name) =>
    modules[0]!.calls[name]!.outputs.every(([p, n], k) => {
      const [p1, n1] = modules[1]!.calls[name]!.outputs[k]!;
      const a = new Uint32Array(modules[0]!.f.buffer, p, n), b = new Uint32Array(modules[1]!.f.buffer, p1, n1);
      return a.every((v, i) => v === b[i]);
    }),
  );
  const gflops = (i: number) => Object.fromEntries(names.map((n) => [n, +(modules[i]!.calls[n]!.flops / best[i]![n]! / 1e9).toFixed(1)]));
  return { commit, shapes: { T, C, NH, S }, rounds, gflops_then: gflops(0), gflops_now: gflops(1), bit_identical: identical };
}
