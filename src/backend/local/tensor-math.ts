import { readFileSync } from 'node:fs';
import { WA, wasmPath as wasmPathOf, type WasmMemory } from '../../wasm.js';

/**
 * The memory the model lives in, and the kernels that work on it. All tensors of one model
 * (weights, gradients, Adam moments, activations, KV cache) are views into one heap, allocated
 * once, so the WebAssembly kernels read them in place with no copying. A tensor is a view plus
 * its byte offset (what the WebAssembly side takes).
 */
export interface Tensor {
  a: Float32Array;
  p: number;
}

export interface IntTensor {
  a: Int32Array;
  p: number;
}

/** Bytes the kernels leave alone at the start of the memory (AssemblyScript's static area). */
const RESERVED = 65536;
const PAGE = 65536;

export class Heap {
  readonly buffer: ArrayBuffer;
  private next = RESERVED;
  constructor(
    readonly bytes: number,
    readonly memory?: WasmMemory,
  ) {
    this.buffer = memory ? memory.buffer : new ArrayBuffer(bytes);
  }

  f32(length: number): Tensor {
    const p = this.take(length);
    return { a: new Float32Array(this.buffer, p, length), p };
  }

  i32(length: number): IntTensor {
    const p = this.take(length);
    return { a: new Int32Array(this.buffer, p, length), p };
  }

  private take(length: number): number {
    const p = this.next;
    // 16-byte alignment for v128 loads.
    this.next = p + Math.ceil((length * 4) / 16) * 16;
    if (this.next > this.bytes) throw new Error(`heap overflow: need ${this.next} bytes, have ${this.bytes}`);
    return p;
  }
}

/**
 * A window of rows [row, row + rows) of a row-major tensor with `width` columns. Its view is made
 * when first read: the WebAssembly kernels take the offset alone, and a decoding step opens a few
 * dozen windows per token, whose views were most of the sampler's garbage.
 */
export function rows(t: Tensor, row: number, rowsCount: number, width: number): Tensor {
  const start = row * width;
  return new RowWindow(t.a, start, start + rowsCount * width, t.p + start * 4);
}

class RowWindow implements Tensor {
  private view: Float32Array | undefined;
  constructor(
    private readonly base: Float32Array,
    private readonly start: number,
    private readonly end: number,
    readonly p: number,
  ) {}
  get a(): Float32Array {
    return (this.view ??= this.base.subarray(this.start, this.end));
  }
}

/** The shared kernel set; the WebAssembly and TypeScript versions compute the same things. */
export interface Kernels {
  readonly name: 'wasm-simd' | 'js';
  heap: Heap;
  matmulForward(out: Tensor, inp: Tensor, w: Tensor, b: Tensor | null, T: number, C: number, OC: number): void;
  matmulBackward(dinp: Tensor | null, dw: Tensor, db: Tensor | null, dout: Tensor, inp: Tensor, w: Tensor, T: number, C: number, OC: number): void;
  layernormForward(out: Tensor, mean: Tensor, rstd: Tensor, inp: Tensor, w: Tensor, b: Tensor, T: number, C: number): void;
  layernormBackward(dinp: Tensor, dw: Tensor, db: Tensor, dout: Tensor, inp: Tensor, w: Tensor, mean: Tensor, rstd: Tensor, T: number, C: number): void;
  attentionForward(out: Tensor, att: Tensor, qkv: Tensor, t0: number, T: number, C: number, NH: number, S: number): void;
  /** scratch: 2 S floats (the WebAssembly kernel scores two query rows at a time). */
  attentionBackward(dqkv: Tensor, scratch: Tensor, dout: Tensor, qkv: Tensor, att: Tensor, t0: number, T: number, C: number, NH: number, S: number): void;
  geluForward(out: Tensor, inp: Tensor, N: number): void;
  geluBackward(dinp: Tensor, inp: Tensor, dout: Tensor, N: number): void;
  /** lse (may be null) receives each row's log-sum-exp. */
  softmaxRows(logits: Tensor, targets: IntTensor, lp: Tensor, entropy: Tensor, lse: Tensor | null, T: number, V: number): void;
  softmaxBackward(probs: Tensor, targets: IntTensor, g: Tensor, T: number, V: number): void;
}

interface WasmExports {
  matmul_forward(out: number, inp: number, w: number, b: number, T: number, C: number, OC: number): void;
  matmul_backward(dinp: number, dw: number, db: number, dout: number, inp: number, w: number, T: number, C: number, OC: number): void;
  layernorm_forward(out: number, mean: number, rstd: number, inp: number, w: number, b: number, T: number, C: number): void;
  layernorm_backward(dinp: number, dw: number, db: number, dout: number, inp: number, w: number, mean: number, rstd: number, T: number, C: number): void;
  attention_forward(out: number, att: number, qkv: number, t0: number, T: number, C: number, NH: number, S: number): void;
  attention_backward(dqkv: number, scratch: number, dout: number, qkv: number, att: number, t0: number, T: number, C: number, NH: number, S: number): void;
  gelu_forward(out: number, inp: number, N: number): void;
  gelu_backward(dinp: number, inp: number, dout: number, N: number): void;
  softmax_rows(logits: number, targets: number, lp: number, entropy: number, lse: number, T: number, V: number): void;
  softmax_backward(probs: number, targets: number, g: number, T: number, V: number): void;
}

let wasmModule: object | null | undefined;

/** Where `npm run build` puts the compiled kernels: dist/wasm/kernels.wasm under the package root. */
export function wasmPath(): string | null {
  return wasmPathOf('kernels.wasm');
}

function loadWasmModule(): object | null {
  if (wasmModule === undefined) {
    const path = wasmPath();
    wasmModule = path ? new WA.Module(readFileSync(path)) : null;
  }
  return wasmModule;
}

export function wasmAvailable(): boolean {
  return loadWasmModule() !== null;
}

let warned = false;

/**
 * Kernels over a fresh heap of `bytes`. `kind` 'auto' uses WebAssembly SIMD when it has been built
 * (`npm run build`), else the TypeScript kernels with a one-time warning (about 10x slower).
 */
export function createKernels(bytes: number, kind: 'auto' | 'wasm-simd' | 'js' = 'auto'): Kernels {
  const mod = kind === 'js' ? null : loadWasmModule();
  if (kind === 'wasm-simd' && !mod) throw new Error('WebAssembly kernels not built: run `npm run build` (dist/wasm/kernels.wasm)');
  if (!mod) {
    if (kind === 'auto' && !warned) {
      warned = true;
      process.stderr.write('sleuth: dist/wasm/kernels.wasm not found (run `npm run build`); using the slower TypeScript kernels\n');
    }
    return jsKernels(new Heap(bytes));
  }
  const pages = Math.ceil(bytes / PAGE);
  const memory = new WA.Memory({ initial: pages, maximum: pages });
  const inst = new WA.Instance(mod, { env: { memory } });
  return wasmKernels(new Heap(pages * PAGE, memory), inst.exports as unknown as WasmExports);
}

function wasmKernels(heap: Heap, x: WasmExports): Kernels {
  return {
    name: 'wasm-simd',
    heap,
    matmulForward: (out, inp, w, b, T, C, OC) => x.matmul_forward(out.p, inp.p, w.p, b ? b.p : 0, T, C, OC),
    matmulBackward: (dinp, dw, db, dout, inp, w, T, C, OC) => x.matmul_backward(dinp ? dinp.p : 0, dw.p, db ? db.p : 0, dout.p, inp.p, w.p, T, C, OC),
    layernormForward: (out, mean, rstd, inp, w, b, T, C) => x.layernorm_forward(out.p, mean.p, rstd.p, inp.p, w.p, b.p, T, C),
    layernormBackward: (dinp, dw, db, dout, inp, w, mean, rstd, T, C) => x.layernorm_backward(dinp.p, dw.p, db.p, dout.p, inp.p, w.p, mean.p, rstd.p, T, C),
    attentionForward: (out, att, qkv, t0, T, C, NH, S) => x.attention_forward(out.p, att.p, qkv.p, t0, T, C, NH, S),
    attentionBackward: (dqkv, scratch, dout, qkv, att, t0, T, C, NH, S) => x.attention_backward(dqkv.p, scratch.p, dout.p, qkv.p, att.p, t0, T, C, NH, S),
    geluForward: (out, inp, N) => x.gelu_forward(out.p, inp.p, N),
    geluBackward: (dinp, inp, dout, N) => x.gelu_backward(dinp.p, inp.p, dout.p, N),
    softmaxRows: (logits, targets, lp, entropy, lse, T, V) => x.softmax_rows(logits.p, targets.p, lp.p, entropy.p, lse ? lse.p : 0, T, V),
    softmaxBackward: (probs, targets, g, T, V) => x.softmax_backward(probs.p, targets.p, g.p, T, V),
  };
}

const GELU_K = Math.fround(Math.sqrt(2 / Math.PI));

/** The same kernels in plain TypeScript: the reference the WebAssembly ones are tested against. */
export function jsKernels(heap: Heap): Kernels {
  return {
    name: 'js',
    heap,
    matmulForward(out, inp, w, b, T, C, OC) {
      const I = inp.a, W = w.a, O = out.a;
      for (let t = 0; t < T; t++) {
        for (let o = 0; o < OC; o++) {
          let s = b ? b.a[o]! : 0;
          for (let c = 0; c < C; c++) s += I[t * C + c]! * W[o * C + c]!;
          O[t * OC + o] = s;
        }
      }
    },
    matmulBackward(dinp, dw, db, dout, inp, w, T, C, OC) {
      const D = dout.a, I = inp.a, W = w.a, DW = dw.a;
      for (let t = 0; t < T; t++) {
        for (let o = 0; o < OC; o++) {
          const g = D[t * OC + o]!;
          if (g === 0) continue;
          if (dinp) for (let c = 0; c < C; c++) dinp.a[t * C + c]! += g * W[o * C + c]!;
          for (let c = 0; c < C; c++) DW[o * C + c]! += g * I[t * C + c]!;
          if (db) db.a[o]! += g;
        }
      }
    },
    layernormForward(out, mean, rstd, inp, w, b, T, C) {
      for (let t = 0; t < T; t++) {
        let m = 0;
        for (let i = 0; i < C; i++) m += inp.a[t * C + i]!;
        m /= C;
        let v = 0;
        for (let i = 0; i < C; i++) v += (inp.a[t * C + i]! - m) ** 2;
        v /= C;
        const s = 1 / Math.sqrt(v + 1e-5);
        for (let i = 0; i < C; i++) out.a[t * C + i] = (inp.a[t * C + i]! - m) * s * w.a[i]! + b.a[i]!;
        mean.a[t] = m;
        rstd.a[t] = s;
      }
    },
    layernormBackward(dinp, dw, db, dout, inp, w, mean, rstd, T, C) {
      for (let t = 0; t < T; t++) {
        const m = mean.a[t]!, s = rstd.a[t]!;
        let dm = 0, dnm = 0;
        for (let i = 0; i < C; i++) {
          const n = (inp.a[t * C + i]! - m) * s;
          const dn = w.a[i]! * dout.a[t * C + i]!;
          dm += dn;
          dnm += dn * n;
        }
        dm /= C;
        dnm /= C;
        for (let i = 0; i < C; i++) {
          const n = (inp.a[t * C + i]! - m) * s;
          const g = dout.a[t * C + i]!;
          db.a[i]! += g;
          dw.a[i]! += n * g;
          dinp.a[t * C + i]! += (w.a[i]! * g - dm - n * dnm) * s;
        }
      }
    },
    attentionForward(out, att, qkv, t0, T, C, NH, S) {
      const hs = C / NH, scale = 1 / Math.sqrt(hs), Q = qkv.a, A = att.a;
      for (let t = t0; t < T; t++) {
        for (let h = 0; h < NH; h++) {
          const a = (h * S + t) * S;
          let max = -Infinity;
          for (let t2 = 0; t2 <= t; t2++) {
            let s = 0;
            for (let i = 0; i < hs; i++) s += Q[t * 3 * C + h * hs + i]! * Q[t2 * 3 * C + C + h * hs + i]!;
            A[a + t2] = s * scale;
            max = Math.max(max, A[a + t2]!);
          }
          let sum = 0;
          for (let t2 = 0; t2 <= t; t2++) {
            A[a + t2] = Math.exp(A[a + t2]! - max);
            sum += A[a + t2]!;
          }
          for (let t2 = 0; t2 <= t; t2++) A[a + t2]! /= sum;
          for (let i = 0; i < hs; i++) {
            let s = 0;
            for (let t2 = 0; t2 <= t; t2++) s += A[a + t2]! * Q[t2 * 3 * C + 2 * C + h * hs + i]!;
            out.a[t * C + h * hs + i] = s;
          }
        }
      }
    },
    attentionBackward(dqkv, scratch, dout, qkv, att, t0, T, C, NH, S) {
      const hs = C / NH, scale = 1 / Math.sqrt(hs), Q = qkv.a, A = att.a, G = dqkv.a, dp = scratch.a;
      for (let t = t0; t < T; t++) {
        for (let h = 0; h < NH; h++) {
          const a = (h * S + t) * S;
          let dot = 0;
          for (let t2 = 0; t2 <= t; t2++) {
            let s = 0;
            for (let i = 0; i < hs; i++) {
              const d = dout.a[t * C + h * hs + i]!;
              s += d * Q[t2 * 3 * C + 2 * C + h * hs + i]!;
              G[t2 * 3 * C + 2 * C + h * hs + i]! += A[a + t2]! * d;
            }
            dp[t2] = s;
            dot += A[a + t2]! * s;
          }
          for (let t2 = 0; t2 <= t; t2++) {
            const ds = A[a + t2]! * (dp[t2]! - dot) * scale;
            for (let i = 0; i < hs; i++) {
              G[t * 3 * C + h * hs + i]! += ds * Q[t2 * 3 * C + C + h * hs + i]!;
              G[t2 * 3 * C + C + h * hs + i]! += ds * Q[t * 3 * C + h * hs + i]!;
            }
          }
        }
      }
    },
    geluForward(out, inp, N) {
      for (let i = 0; i < N; i++) {
        const x = inp.a[i]!;
        out.a[i] = 0.5 * x * (1 + Math.tanh(GELU_K * (x + 0.044715 * x ** 3)));
      }
    },
    geluBackward(dinp, inp, dout, N) {
      for (let i = 0; i < N; i++) {
        const x = inp.a[i]!;
        const th = Math.tanh(GELU_K * (x + 0.044715 * x ** 3));
        const g = 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_K * (1 + 3 * 0.044715 * x * x);
        dinp.a[i]! += g * dout.a[i]!;
      }
    },
    softmaxRows(logits, targets, lp, entropy, lseOut, T, V) {
      for (let t = 0; t < T; t++) {
        const r = logits.a.subarray(t * V, (t + 1) * V);
        let max = -Infinity;
        for (let v = 0; v < V; v++) max = Math.max(max, r[v]!);
        let sum = 0;
        for (let v = 0; v < V; v++) sum += Math.exp(r[v]! - max);
        // Rounded to f32 as the WebAssembly kernel does, so logprob = f32(logit - lse) holds here too.
        const lse = Math.fround(max + Math.log(sum));
        if (lseOut) lseOut.a[t] = lse;
        const tgt = targets.a[t]!;
        lp.a[t] = tgt >= 0 ? r[tgt]! - lse : 0;
        let px = 0;
        for (let v = 0; v < V; v++) {
          const p = Math.exp(r[v]! - lse);
          px += p * r[v]!;
          r[v] = p;
        }
        entropy.a[t] = lse - px;
      }
    },
    softmaxBackward(probs, targets, g, T, V) {
      for (let t = 0; t < T; t++) {
        const r = probs.a.subarray(t * V, (t + 1) * V);
        const gt = g.a[t]!;
        if (gt === 0) {
          r.fill(0);
          continue;
        }
        for (let v = 0; v < V; v++) r[v] = -gt * r[v]!;
        r[targets.a[t]!]! += gt;
      }
    },
  };
}
