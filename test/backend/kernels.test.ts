import { beforeAll, describe, expect, it } from 'vitest';
import { createKernels, type Kernels, type Tensor } from '../../src/backend/local/tensor-math.js';
import { seededRandom } from '../../src/random.js';
import { ensureWasm } from './helpers.js';

// The WebAssembly SIMD kernels against the plain TypeScript ones, on the same random inputs.
beforeAll(ensureWasm);

function pair(): [Kernels, Kernels] {
  return [createKernels(1 << 22, 'wasm-simd'), createKernels(1 << 22, 'js')];
}

function fill(k: Kernels, values: Float32Array): Tensor {
  const t = k.heap.f32(values.length);
  t.a.set(values);
  return t;
}

const rand = (n: number, seed: number) => {
  const r = seededRandom(seed);
  return Float32Array.from({ length: n }, () => r() * 2 - 1);
};

function close(a: Float32Array, b: Float32Array, tol = 1e-4) {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!) / (1 + Math.abs(b[i]!)));
  expect(worst).toBeLessThan(tol);
}

describe('WASM SIMD kernels', () => {
  // Rows x inputs x outputs: odd row counts (the backward takes rows in pairs and in fours, then
  // alone), outputs not a multiple of 4 or of 2, a single row (the sampler's).
  for (const [T, C, OC] of [[7, 12, 21], [5, 4, 3], [9, 20, 5], [4, 8, 8], [1, 16, 6], [6, 36, 7], [13, 8, 10], [2, 4, 1]] as const) {
    it(`matmul forward and backward equal the TypeScript reference, ${T} x ${C} x ${OC}, with zero gradients and sums already begun`, () => {
      const [w, j] = pair();
      const x = rand(T * C, 1), W = rand(OC * C, 2), b = rand(OC, 3), g = rand(T * OC, 4);
      // Zero gradients where the kernels skip work: whole rows (masked tokens), whole pairs of
      // output columns (a dw pair skipped beside a live one), and a row's first four outputs.
      for (let t = 0; t < T; t++) {
        for (let o = 0; o < OC; o++) if (t % 3 === 1 || (o >> 1) % 3 === 1 || (t % 4 === 2 && o < 4)) g[t * OC + o] = 0;
      }
      const start = rand(Math.max(T * C, OC * C), 9);
      const outs = [w, j].map((k) => {
        const out = k.heap.f32(T * OC), dinp = fill(k, start.subarray(0, T * C)), dw = fill(k, start.subarray(0, OC * C)), db = k.heap.f32(OC);
        const [xi, Wi, bi, gi] = [x, W, b, g].map((v) => fill(k, v)) as [Tensor, Tensor, Tensor, Tensor];
        k.matmulForward(out, xi, Wi, bi, T, C, OC);
        k.matmulBackward(dinp, dw, db, gi, xi, Wi, T, C, OC);
        return [out.a, dinp.a, dw.a, db.a];
      });
      for (let i = 0; i < 4; i++) close(outs[0]![i]!, outs[1]![i]!);
    });
  }

  it('a row computed alone equals the same row computed in a block of four (sampler/learner parity)', () => {
    const [k] = pair();
    const T = 5, C = 16, OC = 8;
    const x = fill(k, rand(T * C, 5)), W = fill(k, rand(OC * C, 6));
    const all = k.heap.f32(T * OC), one = k.heap.f32(OC);
    k.matmulForward(all, x, W, null, T, C, OC);
    k.matmulForward(one, { a: x.a.subarray(2 * C, 3 * C), p: x.p + 2 * C * 4 }, W, null, 1, C, OC);
    expect(Array.from(one.a)).toEqual(Array.from(all.a.subarray(2 * OC, 3 * OC)));
  });

  it('GELU and its derivative (polynomial exp, four lanes) stay within 1e-6 of f64 tanh over [-12, 12]', () => {
    const [w, j] = pair();
    // An odd count: the last elements take the scalar tail, which must round like the lanes.
    const N = 40_003;
    const xs = Float32Array.from({ length: N }, (_, i) => -12 + (24 * i) / (N - 1));
    xs[N - 1] = xs[7]!;
    const [[gw, dw], [gj, dj]] = [w, j].map((k) => {
      const x = fill(k, xs), out = k.heap.f32(N), dinp = k.heap.f32(N), dout = fill(k, new Float32Array(N).fill(1));
      k.geluForward(out, x, N);
      k.geluBackward(dinp, x, dout, N);
      return [out.a, dinp.a];
    }) as [[Float32Array, Float32Array], [Float32Array, Float32Array]];
    let worstForward = 0, worstBackward = 0;
    for (let i = 0; i < N; i++) {
      worstForward = Math.max(worstForward, Math.abs(gw[i]! - gj[i]!));
      worstBackward = Math.max(worstBackward, Math.abs(dw[i]! - dj[i]!));
    }
    expect(worstForward).toBeLessThan(1e-6);
    expect(worstBackward).toBeLessThan(1e-6);
    // Saturated ends: exactly x and 0 (GELU), 1 and 0 (its derivative).
    expect([gw[N - 2], gw[0], dw[N - 2], dw[0]]).toEqual([xs[N - 2], -0, 1, 0].map((v) => Math.fround(v!)));
    expect(gw[N - 1]).toBe(gw[7]);
    expect(dw[N - 1]).toBe(dw[7]);
  });

  for (const [C, NH] of [[16, 2], [64, 2]] as const) {
    it(`attention (head size ${C / NH}, four-lane exp) equals the reference forward and backward, and a decoded row equals its row in the whole sequence`, () => {
      const [w, j] = pair();
      // 23 rows: rows with 1 to 23 keys, so every remainder of the four-lane exp is taken; large
      // scores, so that exp's argument spans tens.
      const T = 23, S = 24;
      const qkvValues = rand(T * 3 * C, 21).map((v) => v * 3), doutValues = rand(T * C, 22);
      const [[yw, dw], [yj, dj]] = [w, j].map((k) => {
        const qkv = fill(k, qkvValues), att = k.heap.f32(NH * S * S), y = k.heap.f32(T * C), dqkv = k.heap.f32(T * 3 * C), scratch = k.heap.f32(2 * S), dout = fill(k, doutValues);
        k.attentionForward(y, att, qkv, 0, T, C, NH, S);
        k.attentionBackward(dqkv, scratch, dout, qkv, att, 0, T, C, NH, S);
        return [Float32Array.from(y.a), Float32Array.from(dqkv.a)];
      }) as [[Float32Array, Float32Array], [Float32Array, Float32Array]];
      close(yw, yj, 1e-5);
      close(dw, dj, 1e-4);
      // The last row alone (the earlier rows as its KV cache), as the sampler runs it: the same bits.
      const qkv = fill(w, qkvValues), att = w.heap.f32(NH * S * S), y = w.heap.f32(T * C);
      w.attentionForward(y, att, qkv, T - 1, T, C, NH, S);
      expect(Array.from(y.a.subarray((T - 1) * C))).toEqual(Array.from(yw.subarray((T - 1) * C)));
      // Rows from t0 on (a shared prefix's continuation: pairs of rows, and a row alone, from odd and
      // even starts): every row's output, and every row one at a time, the same bits as the whole.
      for (const [t0, n] of [[1, 23], [6, 23], [7, 12], [0, 1], [0, 2], [0, 3], [21, 23]] as const) {
        const part = w.heap.f32(n * C), dpart = w.heap.f32(n * 3 * C);
        w.attentionForward(part, att, qkv, t0, n, C, NH, S);
        const single = w.heap.f32(n * C);
        for (let t = t0; t < n; t++) w.attentionForward(single, att, qkv, t, t + 1, C, NH, S);
        const whole = w.heap.f32(n * C);
        w.attentionForward(whole, att, qkv, 0, n, C, NH, S);
        expect(Array.from(part.a.subarray(t0 * C)), `rows ${t0}..${n}`).toEqual(Array.from(whole.a.subarray(t0 * C)));
        expect(Array.from(single.a.subarray(t0 * C)), `rows ${t0}..${n} one by one`).toEqual(Array.from(whole.a.subarray(t0 * C)));
        // The backward pass of rows t0..n against the reference's, on the same probabilities.
        const dout = fill(w, doutValues.subarray(0, n * C)), sw = w.heap.f32(2 * S);
        w.attentionForward(whole, att, qkv, 0, n, C, NH, S);
        w.attentionBackward(dpart, sw, dout, qkv, att, t0, n, C, NH, S);
        const qj = fill(j, qkvValues), attj = j.heap.f32(NH * S * S), yj2 = j.heap.f32(n * C), dj2 = j.heap.f32(n * 3 * C), doutj = fill(j, doutValues.subarray(0, n * C));
        j.attentionForward(yj2, attj, qj, 0, n, C, NH, S);
        j.attentionBackward(dj2, j.heap.f32(2 * S), doutj, qj, attj, t0, n, C, NH, S);
        close(dpart.a, dj2.a, 1e-4);
      }
    });
  }

  it('layer norm, attention, GELU and softmax equal the TypeScript reference', () => {
    const [w, j] = pair();
    const T = 6, C = 16, NH = 2, S = 8, V = 12;
    const results = [w, j].map((k) => {
      const x = fill(k, rand(T * C, 7)), lw = fill(k, rand(C, 8)), lb = fill(k, rand(C, 9)), dout = fill(k, rand(T * C, 10));
      const ln = k.heap.f32(T * C), mean = k.heap.f32(T), rstd = k.heap.f32(T), dx = k.heap.f32(T * C), dlw = k.heap.f32(C), dlb = k.heap.f32(C);
      k.layernormForward(ln, mean, rstd, x, lw, lb, T, C);
      k.layernormBackward(dx, dlw, dlb, dout, x, lw, mean, rstd, T, C);
      const qkv = fill(k, rand(T * 3 * C, 11)), att = k.heap.f32(NH * S * S), y = k.heap.f32(T * C), dqkv = k.heap.f32(T * 3 * C), scratch = k.heap.f32(2 * S);
      k.attentionForward(y, att, qkv, 0, T, C, NH, S);
      k.attentionBackward(dqkv, scratch, dout, qkv, att, 0, T, C, NH, S);
      const gl = k.heap.f32(T * C), dgl = k.heap.f32(T * C);
      k.geluForward(gl, x, T * C);
      k.geluBackward(dgl, x, dout, T * C);
      const logits = fill(k, rand(T * V, 12)), targets = k.heap.i32(T), lp = k.heap.f32(T), ent = k.heap.f32(T), lse = k.heap.f32(T), gg = fill(k, rand(T, 13));
      targets.a.set([0, 3, 5, 11, 2, 7]);
      const raw = Float32Array.from(logits.a);
      k.softmaxRows(logits, targets, lp, ent, lse, T, V);
      // The target's logprob is exactly its logit minus the row's log-sum-exp, in f32.
      for (let t = 0; t < T; t++) expect(lp.a[t]).toBe(Math.fround(raw[t * V + targets.a[t]!]! - lse.a[t]!));
      const probs = Float32Array.from(logits.a);
      k.softmaxBackward(logits, targets, gg, T, V);
      return [ln.a, dx.a, dlw.a, dlb.a, y.a, dqkv.a, gl.a, dgl.a, lp.a, ent.a, lse.a, probs, logits.a];
    });
    results[0]!.forEach((a, i) => close(a, results[1]![i]!));
  });
});
