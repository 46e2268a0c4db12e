// The hot kernels of the local transformer, in AssemblyScript compiled to WebAssembly SIMD
// (scripts/build-wasm.mjs: asc --enable simd -O3). Every pointer is a byte offset into the one
// imported memory; the TypeScript side (../kernels.ts) owns allocation. src/backend/local/jskernels.ts
// holds the same maths in plain TypeScript; the tests check the two agree.
//
// Reproducibility rule: each output element is computed in the same order whatever the number of
// rows in the call, so the sampler (one row at a time, KV cache) and the learner (whole sequence)
// get bit-identical logits for the same weights.

// Dimensions passed here are multiples of 4 (the model config enforces it).

/** Sum of the four lanes, always in the same order. */
@inline function hsum(v: v128): f32 {
  return (f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1)) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}

/** hsum of the lane-wise products of the `bytes` at a and at b (a multiple of 16), accumulated from +0 in order. */
@inline function innerProduct(a: usize, b: usize, bytes: usize): f32 {
  let acc = f32x4.splat(0);
  for (let c: usize = 0; c < bytes; c += 16) acc = f32x4.add(acc, f32x4.mul(v128.load(a + c), v128.load(b + c)));
  return hsum(acc);
}

/** dst += s * src over `bytes` (a multiple of 16). */
@inline function addScaled(dst: usize, s: v128, src: usize, bytes: usize): void {
  for (let c: usize = 0; c < bytes; c += 16) v128.store(dst + c, f32x4.add(v128.load(dst + c), f32x4.mul(s, v128.load(src + c))));
}

/**
 * dst += g0 src0 + g1 src1 + g2 src2 + g3 src3, added in that order, over `bytes`, where g_k is the
 * f32 at g + k * gStride and src_k starts at src + k * srcStride. Nothing when all four g are 0
 * (the logits of masked tokens): they would add nothing.
 */
@inline function addScaled4(dst: usize, g: usize, gStride: usize, src: usize, srcStride: usize, bytes: usize): void {
  const g0 = load<f32>(g), g1 = load<f32>(g + gStride), g2 = load<f32>(g + 2 * gStride), g3 = load<f32>(g + 3 * gStride);
  if (g0 == 0 && g1 == 0 && g2 == 0 && g3 == 0) return;
  const s0 = f32x4.splat(g0), s1 = f32x4.splat(g1), s2 = f32x4.splat(g2), s3 = f32x4.splat(g3);
  for (let c: usize = 0; c < bytes; c += 16) {
    const x0 = v128.load(src + c), x1 = v128.load(src + srcStride + c), x2 = v128.load(src + 2 * srcStride + c), x3 = v128.load(src + 3 * srcStride + c);
    addScaledLanes4(dst + c, s0, s1, s2, s3, x0, x1, x2, x3);
  }
}

/**
 * addScaled4 for two rows that share src: dst += g0 src0 + ... + g3 src3 (g at g, 4 apart), and
 * dst + dstStride the same with the g at g + gStride, each added in that order, one load of src
 * for both. A row whose four g are 0 is left alone, as addScaled4 leaves it.
 */
@inline function addScaled4Pair(dst: usize, dstStride: usize, g: usize, gStride: usize, src: usize, srcStride: usize): void {
  const g0 = load<f32>(g), g1 = load<f32>(g + 4), g2 = load<f32>(g + 8), g3 = load<f32>(g + 12);
  const h0 = load<f32>(g + gStride), h1 = load<f32>(g + gStride + 4), h2 = load<f32>(g + gStride + 8), h3 = load<f32>(g + gStride + 12);
  const zeroA = g0 == 0 && g1 == 0 && g2 == 0 && g3 == 0, zeroB = h0 == 0 && h1 == 0 && h2 == 0 && h3 == 0;
  if (zeroA || zeroB) {
    if (!zeroA) addScaled4(dst, g, 4, src, srcStride, dstStride);
    if (!zeroB) addScaled4(dst + dstStride, g + gStride, 4, src, srcStride, dstStride);
    return;
  }
  const s0 = f32x4.splat(g0), s1 = f32x4.splat(g1), s2 = f32x4.splat(g2), s3 = f32x4.splat(g3);
  const r0 = f32x4.splat(h0), r1 = f32x4.splat(h1), r2 = f32x4.splat(h2), r3 = f32x4.splat(h3);
  for (let c: usize = 0; c < dstStride; c += 16) {
    const x0 = v128.load(src + c), x1 = v128.load(src + srcStride + c), x2 = v128.load(src + 2 * srcStride + c), x3 = v128.load(src + 3 * srcStride + c);
    addScaledLanes4(dst + c, s0, s1, s2, s3, x0, x1, x2, x3);
    addScaledLanes4(dst + dstStride + c, r0, r1, r2, r3, x0, x1, x2, x3);
  }
}

/** Whether any of the four rows' two gradients at g, g + 4 (rows gStride apart) is not 0. */
@inline function anyNonZero8(g: usize, gStride: usize): bool {
  return load<f32>(g) != 0 || load<f32>(g + gStride) != 0 || load<f32>(g + 2 * gStride) != 0 || load<f32>(g + 3 * gStride) != 0 ||
    load<f32>(g + 4) != 0 || load<f32>(g + gStride + 4) != 0 || load<f32>(g + 2 * gStride + 4) != 0 || load<f32>(g + 3 * gStride + 4) != 0;
}

/**
 * matmul_backward's dw step: two dw rows (at dwr, dwr + rowIn) += the four input rows at i0 times
 * their gradients (row k's at g + k * gStride and g + k * gStride + 4), added in row order.
 */
@inline function addScaledRows4x2(dwr: usize, rowIn: usize, g: usize, gStride: usize, i0: usize): void {
  const s0 = v128.load32_splat(g), s1 = v128.load32_splat(g + gStride), s2 = v128.load32_splat(g + 2 * gStride), s3 = v128.load32_splat(g + 3 * gStride);
  const r0 = v128.load32_splat(g + 4), r1 = v128.load32_splat(g + gStride + 4), r2 = v128.load32_splat(g + 2 * gStride + 4), r3 = v128.load32_splat(g + 3 * gStride + 4);
  for (let c: usize = 0; c < rowIn; c += 16) {
    const x0 = v128.load(i0 + c), x1 = v128.load(i0 + rowIn + c), x2 = v128.load(i0 + 2 * rowIn + c), x3 = v128.load(i0 + 3 * rowIn + c);
    addScaledLanes4(dwr + c, s0, s1, s2, s3, x0, x1, x2, x3);
    addScaledLanes4(dwr + rowIn + c, r0, r1, r2, r3, x0, x1, x2, x3);
  }
}

/** addScaledRows4x2 for four dw rows (gradients at g, g + 4, g + 8, g + 12 of each input row). */
@inline function addScaledRows4x4(dwr: usize, rowIn: usize, g: usize, gStride: usize, i0: usize): void {
  const s0 = v128.load32_splat(g), s1 = v128.load32_splat(g + gStride), s2 = v128.load32_splat(g + 2 * gStride), s3 = v128.load32_splat(g + 3 * gStride);
  const r0 = v128.load32_splat(g + 4), r1 = v128.load32_splat(g + gStride + 4), r2 = v128.load32_splat(g + 2 * gStride + 4), r3 = v128.load32_splat(g + 3 * gStride + 4);
  const u0 = v128.load32_splat(g + 8), u1 = v128.load32_splat(g + gStride + 8), u2 = v128.load32_splat(g + 2 * gStride + 8), u3 = v128.load32_splat(g + 3 * gStride + 8);
  const v0 = v128.load32_splat(g + 12), v1 = v128.load32_splat(g + gStride + 12), v2 = v128.load32_splat(g + 2 * gStride + 12), v3 = v128.load32_splat(g + 3 * gStride + 12);
  for (let c: usize = 0; c < rowIn; c += 16) {
    const x0 = v128.load(i0 + c), x1 = v128.load(i0 + rowIn + c), x2 = v128.load(i0 + 2 * rowIn + c), x3 = v128.load(i0 + 3 * rowIn + c);
    addScaledLanes4(dwr + c, s0, s1, s2, s3, x0, x1, x2, x3);
    addScaledLanes4(dwr + rowIn + c, r0, r1, r2, r3, x0, x1, x2, x3);
    addScaledLanes4(dwr + 2 * rowIn + c, u0, u1, u2, u3, x0, x1, x2, x3);
    addScaledLanes4(dwr + 3 * rowIn + c, v0, v1, v2, v3, x0, x1, x2, x3);
  }
}

/** addScaled4's step, four lanes at p: p += s0 x0 + s1 x1 + s2 x2 + s3 x3, added in that order. */
@inline function addScaledLanes4(p: usize, s0: v128, s1: v128, s2: v128, s3: v128, x0: v128, x1: v128, x2: v128, x3: v128): void {
  v128.store(p, mulAdd4(v128.load(p), s0, s1, s2, s3, x0, x1, x2, x3));
}

/** acc + s0 x0 + s1 x1 + s2 x2 + s3 x3, lane-wise, added in that order (one accumulator: a chain). */
@inline function mulAdd4(acc: v128, s0: v128, s1: v128, s2: v128, s3: v128, x0: v128, x1: v128, x2: v128, x3: v128): v128 {
  acc = f32x4.add(acc, f32x4.mul(s0, x0));
  acc = f32x4.add(acc, f32x4.mul(s1, x1));
  acc = f32x4.add(acc, f32x4.mul(s2, x2));
  return f32x4.add(acc, f32x4.mul(s3, x3));
}

/** out[t,o] = b[o] + sum_c inp[t,c] * w[o,c]   (inp: T x C, w: OC x C, out: T x OC; b may be 0). */
export function matmul_forward(out: usize, inp: usize, w: usize, b: usize, T: i32, C: i32, OC: i32): void {
  const rowIn = <usize>C << 2;
  const rowOut = <usize>OC << 2;
  let t = 0;
  // Blocks of 4 rows x 2 outputs share loads (8 accumulators); each element's sum runs in the
  // same order as in the one-row loop below.
  for (; t + 4 <= T; t += 4) {
    const i0 = inp + <usize>t * rowIn;
    const i1 = i0 + rowIn;
    const i2 = i1 + rowIn;
    const i3 = i2 + rowIn;
    const o0 = out + <usize>t * rowOut;
    let o = 0;
    for (; o + 2 <= OC; o += 2) {
      const wr = w + <usize>o * rowIn;
      const wr1 = wr + rowIn;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
      for (let c: usize = 0; c < rowIn; c += 16) {
        const wv = v128.load(wr + c), wv1 = v128.load(wr1 + c);
        const x0 = v128.load(i0 + c), x1 = v128.load(i1 + c), x2 = v128.load(i2 + c), x3 = v128.load(i3 + c);
        a0 = f32x4.add(a0, f32x4.mul(x0, wv));
        a1 = f32x4.add(a1, f32x4.mul(x1, wv));
        a2 = f32x4.add(a2, f32x4.mul(x2, wv));
        a3 = f32x4.add(a3, f32x4.mul(x3, wv));
        b0 = f32x4.add(b0, f32x4.mul(x0, wv1));
        b1 = f32x4.add(b1, f32x4.mul(x1, wv1));
        b2 = f32x4.add(b2, f32x4.mul(x2, wv1));
        b3 = f32x4.add(b3, f32x4.mul(x3, wv1));
      }
      const bias: f32 = b ? load<f32>(b + (<usize>o << 2)) : 0;
      const bias1: f32 = b ? load<f32>(b + (<usize>o << 2) + 4) : 0;
      const oo = o0 + (<usize>o << 2);
      store<f32>(oo, hsum(a0) + bias);
      store<f32>(oo + rowOut, hsum(a1) + bias);
      store<f32>(oo + 2 * rowOut, hsum(a2) + bias);
      store<f32>(oo + 3 * rowOut, hsum(a3) + bias);
      store<f32>(oo + 4, hsum(b0) + bias1);
      store<f32>(oo + 4 + rowOut, hsum(b1) + bias1);
      store<f32>(oo + 4 + 2 * rowOut, hsum(b2) + bias1);
      store<f32>(oo + 4 + 3 * rowOut, hsum(b3) + bias1);
    }
    for (; o < OC; o++) {
      const wr = w + <usize>o * rowIn;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      for (let c: usize = 0; c < rowIn; c += 16) {
        const wv = v128.load(wr + c);
        a0 = f32x4.add(a0, f32x4.mul(v128.load(i0 + c), wv));
        a1 = f32x4.add(a1, f32x4.mul(v128.load(i1 + c), wv));
        a2 = f32x4.add(a2, f32x4.mul(v128.load(i2 + c), wv));
        a3 = f32x4.add(a3, f32x4.mul(v128.load(i3 + c), wv));
      }
      const bias: f32 = b ? load<f32>(b + (<usize>o << 2)) : 0;
      const oo = o0 + (<usize>o << 2);
      store<f32>(oo, hsum(a0) + bias);
      store<f32>(oo + rowOut, hsum(a1) + bias);
      store<f32>(oo + 2 * rowOut, hsum(a2) + bias);
      store<f32>(oo + 3 * rowOut, hsum(a3) + bias);
    }
  }
  // Remaining rows (and the sampler's single row): 4 outputs at a time share the input's loads.
  for (; t < T; t++) {
    const i0 = inp + <usize>t * rowIn;
    const o0 = out + <usize>t * rowOut;
    let o = 0;
    for (; o + 4 <= OC; o += 4) {
      const wr = w + <usize>o * rowIn;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      for (let c: usize = 0; c < rowIn; c += 16) {
        const x = v128.load(i0 + c);
        a0 = f32x4.add(a0, f32x4.mul(x, v128.load(wr + c)));
        a1 = f32x4.add(a1, f32x4.mul(x, v128.load(wr + rowIn + c)));
        a2 = f32x4.add(a2, f32x4.mul(x, v128.load(wr + 2 * rowIn + c)));
        a3 = f32x4.add(a3, f32x4.mul(x, v128.load(wr + 3 * rowIn + c)));
      }
      const oo = o0 + (<usize>o << 2);
      store<f32>(oo, hsum(a0) + (b ? load<f32>(b + (<usize>o << 2)) : 0));
      store<f32>(oo + 4, hsum(a1) + (b ? load<f32>(b + (<usize>o << 2) + 4) : 0));
      store<f32>(oo + 8, hsum(a2) + (b ? load<f32>(b + (<usize>o << 2) + 8) : 0));
      store<f32>(oo + 12, hsum(a3) + (b ? load<f32>(b + (<usize>o << 2) + 12) : 0));
    }
    for (; o < OC; o++) {
      const bias: f32 = b ? load<f32>(b + (<usize>o << 2)) : 0;
      store<f32>(o0 + (<usize>o << 2), innerProduct(i0, w + <usize>o * rowIn, rowIn) + bias);
    }
  }
}

/**
 * Gradients of matmul_forward, accumulated (+=):
 *   dinp[t,c] += sum_o dout[t,o] w[o,c];  dw[o,c] += sum_t dout[t,o] inp[t,c];  db[o] += sum_t dout[t,o].
 * dinp and db may be 0 (not wanted).
 */
export function matmul_backward(dinp: usize, dw: usize, db: usize, dout: usize, inp: usize, w: usize, T: i32, C: i32, OC: i32): void {
  const rowIn = <usize>C << 2;
  const rowOut = <usize>OC << 2;
  if (dinp) {
    // Two rows at a time share the loads of w; each row's sum runs as in the one-row loop below.
    let t = 0;
    for (; t + 2 <= T; t += 2) {
      const d = dout + <usize>t * rowOut;
      const di = dinp + <usize>t * rowIn;
      let o = 0;
      for (; o + 4 <= OC; o += 4) addScaled4Pair(di, rowIn, d + (<usize>o << 2), rowOut, w + <usize>o * rowIn, rowIn);
      for (; o < OC; o++) {
        addScaled(di, f32x4.splat(load<f32>(d + (<usize>o << 2))), w + <usize>o * rowIn, rowIn);
        addScaled(di + rowIn, f32x4.splat(load<f32>(d + rowOut + (<usize>o << 2))), w + <usize>o * rowIn, rowIn);
      }
    }
    for (; t < T; t++) {
      const d = dout + <usize>t * rowOut;
      const di = dinp + <usize>t * rowIn;
      let o = 0;
      // Four output columns at a time (hot path: four SIMD accumulators in flight), then the rest one by one.
      for (; o + 4 <= OC; o += 4) addScaled4(di, d + (<usize>o << 2), 4, w + <usize>o * rowIn, rowIn, rowIn);
      for (; o < OC; o++) addScaled(di, f32x4.splat(load<f32>(d + (<usize>o << 2))), w + <usize>o * rowIn, rowIn);
    }
  }
  if (db) {
    // Each output's sum over t runs in one lane, from +0 in t order, as the scalar loop below adds
    // it; sixteen outputs at a time, so that sixteen chains run side by side along dout's rows.
    let o = 0;
    for (; o + 16 <= OC; o += 16) {
      let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
      let d = dout + (<usize>o << 2);
      for (let t = 0; t < T; t++, d += rowOut) {
        s0 = f32x4.add(s0, v128.load(d));
        s1 = f32x4.add(s1, v128.load(d + 16));
        s2 = f32x4.add(s2, v128.load(d + 32));
        s3 = f32x4.add(s3, v128.load(d + 48));
      }
      const b0 = db + (<usize>o << 2);
      v128.store(b0, f32x4.add(v128.load(b0), s0));
      v128.store(b0 + 16, f32x4.add(v128.load(b0 + 16), s1));
      v128.store(b0 + 32, f32x4.add(v128.load(b0 + 32), s2));
      v128.store(b0 + 48, f32x4.add(v128.load(b0 + 48), s3));
    }
    for (; o < OC; o++) {
      let bsum: f32 = 0;
      for (let t = 0; t < T; t++) bsum += load<f32>(dout + <usize>t * rowOut + (<usize>o << 2));
      store<f32>(db + (<usize>o << 2), load<f32>(db + (<usize>o << 2)) + bsum);
    }
  }
  // dw: 4 rows of t into 2 rows of dw at a time, sharing the input loads.
  let t = 0;
  for (; t + 4 <= T; t += 4) {
    const i0 = inp + <usize>t * rowIn;
    const d0 = dout + <usize>t * rowOut;
    let o = 0;
    // Four rows of dw at a time share each input load; a pair whose eight gradients are all 0 is
    // skipped, as the two-row step skips it.
    for (; o + 4 <= OC; o += 4) {
      const g = d0 + (<usize>o << 2);
      const liveA = anyNonZero8(g, rowOut), liveB = anyNonZero8(g + 8, rowOut);
      const dwr = dw + <usize>o * rowIn;
      if (liveA && liveB) addScaledRows4x4(dwr, rowIn, g, rowOut, i0);
      else if (liveA) addScaledRows4x2(dwr, rowIn, g, rowOut, i0);
      else if (liveB) addScaledRows4x2(dwr + 2 * rowIn, rowIn, g + 8, rowOut, i0);
    }
    for (; o + 2 <= OC; o += 2) {
      const g = d0 + (<usize>o << 2);
      if (anyNonZero8(g, rowOut)) addScaledRows4x2(dw + <usize>o * rowIn, rowIn, g, rowOut, i0);
    }
    // The column the two-wide loop above left over (OC odd).
    for (; o < OC; o++) addScaled4(dw + <usize>o * rowIn, d0 + (<usize>o << 2), rowOut, i0, rowIn, rowIn);
  }
  for (; t < T; t++) {
    const i0 = inp + <usize>t * rowIn;
    for (let o = 0; o < OC; o++) {
      const g0 = load<f32>(dout + <usize>t * rowOut + (<usize>o << 2));
      if (g0 != 0) addScaled(dw + <usize>o * rowIn, f32x4.splat(g0), i0, rowIn);
    }
  }
}

/** Layer norm over the last dimension; keeps mean and 1/std per row for the backward pass. */
export function layernorm_forward(out: usize, mean: usize, rstd: usize, inp: usize, w: usize, b: usize, T: i32, C: i32): void {
  for (let t = 0; t < T; t++) {
    const x = inp + (<usize>t * C << 2);
    let m: f32 = 0;
    for (let i = 0; i < C; i++) m += load<f32>(x + (<usize>i << 2));
    m /= <f32>C;
    let v: f32 = 0;
    for (let i = 0; i < C; i++) {
      const d = load<f32>(x + (<usize>i << 2)) - m;
      v += d * d;
    }
    v /= <f32>C;
    const s: f32 = 1 / Mathf.sqrt(v + 1e-5);
    const o = out + (<usize>t * C << 2);
    for (let i = 0; i < C; i++) {
      const n = (load<f32>(x + (<usize>i << 2)) - m) * s;
      store<f32>(o + (<usize>i << 2), n * load<f32>(w + (<usize>i << 2)) + load<f32>(b + (<usize>i << 2)));
    }
    store<f32>(mean + (<usize>t << 2), m);
    store<f32>(rstd + (<usize>t << 2), s);
  }
}

/** Gradients of layernorm_forward, accumulated into dinp, dw, db. */
export function layernorm_backward(dinp: usize, dw: usize, db: usize, dout: usize, inp: usize, w: usize, mean: usize, rstd: usize, T: i32, C: i32): void {
  for (let t = 0; t < T; t++) {
    const row = <usize>t * C << 2;
    const m = load<f32>(mean + (<usize>t << 2));
    const s = load<f32>(rstd + (<usize>t << 2));
    let dnormMean: f32 = 0, dnormNormMean: f32 = 0;
    for (let i = 0; i < C; i++) {
      const k = <usize>i << 2;
      const n = (load<f32>(inp + row + k) - m) * s;
      const dn = load<f32>(w + k) * load<f32>(dout + row + k);
      dnormMean += dn;
      dnormNormMean += dn * n;
    }
    dnormMean /= <f32>C;
    dnormNormMean /= <f32>C;
    for (let i = 0; i < C; i++) {
      const k = <usize>i << 2;
      const n = (load<f32>(inp + row + k) - m) * s;
      const g = load<f32>(dout + row + k);
      store<f32>(db + k, load<f32>(db + k) + g);
      store<f32>(dw + k, load<f32>(dw + k) + n * g);
      const dn = load<f32>(w + k) * g;
      store<f32>(dinp + row + k, load<f32>(dinp + row + k) + (dn - dnormMean - n * dnormNormMean) * s);
    }
  }
}

/**
 * exp of four lanes: 2^n times Cephes' expf polynomial on [-ln2/2, ln2/2] (within 2 ulp of the
 * true value); arguments are clamped to [-87, 88], where exp stays a normal f32.
 */
@inline function exp4(x: v128): v128 {
  // pmin/pmax (one x86 instruction each; min/max's NaN and signed-zero rules cost V8 a handful):
  // the same clamp, and a NaN stays NaN.
  const c = f32x4.pmax(f32x4.pmin(x, f32x4.splat(88)), f32x4.splat(-87));
  const n = f32x4.nearest(f32x4.mul(c, f32x4.splat(1.44269504088896341)));
  // c - n ln2, with ln2 split in two so that n ln2's rounding does not reach f.
  const f = f32x4.sub(f32x4.sub(c, f32x4.mul(n, f32x4.splat(0.693359375))), f32x4.mul(n, f32x4.splat(-2.12194440e-4)));
  let p = f32x4.splat(1.9875691500e-4);
  p = f32x4.add(f32x4.mul(p, f), f32x4.splat(1.3981999507e-3));
  p = f32x4.add(f32x4.mul(p, f), f32x4.splat(8.3334519073e-3));
  p = f32x4.add(f32x4.mul(p, f), f32x4.splat(4.1665795894e-2));
  p = f32x4.add(f32x4.mul(p, f), f32x4.splat(1.6666665459e-1));
  p = f32x4.add(f32x4.mul(p, f), f32x4.splat(5.0000001201e-1));
  p = f32x4.add(f32x4.add(f32x4.mul(f32x4.mul(p, f), f), f), f32x4.splat(1));
  // 2^n (n in -126..127) into the exponent bits. n + 1.5 * 2^23 is exact and holds n in its low
  // bits: the integer n with two integer ops (V8 spends seven on trunc_sat's range checks).
  const nBits = i32x4.sub(f32x4.add(n, f32x4.splat(12582912)), i32x4.splat(0x4B400000 - 127));
  return f32x4.mul(p, i32x4.shl(nBits, 23));
}

/**
 * Scores a[0..t] become exp(score - maxv) in place, four at a time (the last few through the same
 * lanes, so that a key's weight does not depend on t); returns their sum (softmax's denominator),
 * summed in an order that depends on t only (sampler and learner agree bit for bit).
 */
@inline function expScoresAndSum(a: usize, t: i32, maxv: f32): f32 {
  const m = f32x4.splat(maxv);
  let acc = f32x4.splat(0);
  let t2 = 0;
  for (; t2 + 4 <= t + 1; t2 += 4) {
    const e = exp4(f32x4.sub(v128.load(a + (<usize>t2 << 2)), m));
    v128.store(a + (<usize>t2 << 2), e);
    acc = f32x4.add(acc, e);
  }
  let sum = hsum(acc);
  for (; t2 <= t; t2++) {
    const e = f32x4.extract_lane(exp4(f32x4.splat(load<f32>(a + (<usize>t2 << 2)) - maxv)), 0);
    store<f32>(a + (<usize>t2 << 2), e);
    sum += e;
  }
  return sum;
}

/**
 * Causal multi-head attention for rows t0..T-1 (rows before t0 are the KV cache).
 * qkv: T x 3C (q | k | v, heads side by side); out: T x C; att: NH x S x S probabilities (S = stride).
 */
export function attention_forward(out: usize, att: usize, qkv: usize, t0: i32, T: i32, C: i32, NH: i32, S: i32): void {
  const hs = C / NH;
  const hsb = <usize>hs << 2;
  const row3 = <usize>(3 * C) << 2;
  const scale: f32 = 1 / Mathf.sqrt(<f32>hs);
  if (hs == 32) {
    attention_forward_hs32(out, att, qkv, t0, T, C, NH, S, scale);
    return;
  }
  for (let t = t0; t < T; t++) {
    for (let h = 0; h < NH; h++) {
      const q = qkv + <usize>t * row3 + <usize>h * hsb;
      const a = att + ((<usize>h * S + t) * S << 2);
      let maxv: f32 = -Infinity;
      for (let t2 = 0; t2 <= t; t2++) {
        const s = innerProduct(q, qkv + <usize>t2 * row3 + (<usize>C << 2) + <usize>h * hsb, hsb) * scale;
        store<f32>(a + (<usize>t2 << 2), s);
        if (s > maxv) maxv = s;
      }
      const inv: f32 = 1 / expScoresAndSum(a, t, maxv);
      for (let t2 = 0; t2 <= t; t2++) store<f32>(a + (<usize>t2 << 2), load<f32>(a + (<usize>t2 << 2)) * inv);
      const o = out + (<usize>t * C << 2) + <usize>h * hsb;
      for (let i: usize = 0; i < hsb; i += 16) v128.store(o + i, f32x4.splat(0));
      for (let t2 = 0; t2 <= t; t2++) addScaled(o, f32x4.splat(load<f32>(a + (<usize>t2 << 2))), qkv + <usize>t2 * row3 + (<usize>(2 * C) << 2) + <usize>h * hsb, hsb);
    }
  }
}

/**
 * Gradient of attention_forward for query rows [t0, T), accumulated into dqkv (the keys and values
 * of rows before t0 get their share too: a shared prefix's); scratch holds 2 S floats.
 */
export function attention_backward(dqkv: usize, scratch: usize, dout: usize, qkv: usize, att: usize, t0: i32, T: i32, C: i32, NH: i32, S: i32): void {
  const hs = C / NH;
  const hsb = <usize>hs << 2;
  const row3 = <usize>(3 * C) << 2;
  const kOff = <usize>C << 2;
  const vOff = <usize>(2 * C) << 2;
  const scale: f32 = 1 / Mathf.sqrt(<f32>hs);
  if (hs == 32) {
    attention_backward_hs32(dqkv, scratch, dout, qkv, att, t0, T, C, NH, S, scale);
    return;
  }
  for (let t = t0; t < T; t++) {
    for (let h = 0; h < NH; h++) {
      const a = att + ((<usize>h * S + t) * S << 2);
      const dO = dout + (<usize>t * C << 2) + <usize>h * hsb;
      const hb = <usize>h * hsb;
      // d(probability) = dout . v, and v's gradient.
      let dot: f32 = 0;
      for (let t2 = 0; t2 <= t; t2++) {
        const vr = <usize>t2 * row3 + vOff + hb;
        const dp = innerProduct(dO, qkv + vr, hsb);
        const p = load<f32>(a + (<usize>t2 << 2));
        store<f32>(scratch + (<usize>t2 << 2), dp);
        dot += p * dp;
        addScaled(dqkv + vr, f32x4.splat(p), dO, hsb);
      }
      // Softmax backward, then the score's gradient into q and k.
      const q = <usize>t * row3 + hb;
      for (let t2 = 0; t2 <= t; t2++) {
        const p = load<f32>(a + (<usize>t2 << 2));
        const ds = p * (load<f32>(scratch + (<usize>t2 << 2)) - dot) * scale;
        if (ds == 0) continue;
        const dsv = f32x4.splat(ds);
        const k = <usize>t2 * row3 + kOff + hb;
        for (let i: usize = 0; i < hsb; i += 16) {
          v128.store(dqkv + q + i, f32x4.add(v128.load(dqkv + q + i), f32x4.mul(dsv, v128.load(qkv + k + i))));
          v128.store(dqkv + k + i, f32x4.add(v128.load(dqkv + k + i), f32x4.mul(dsv, v128.load(qkv + q + i))));
        }
      }
    }
  }
}

// Heads of 32 (both shipped sizes): the same arithmetic as the loops above, in the same order, with
// the head's q, output and query gradient held in eight v128 registers instead of memory.

/** innerProduct of a head of 32 floats held in r0..r7 with the 32 at p. */
@inline function innerProduct32(r0: v128, r1: v128, r2: v128, r3: v128, r4: v128, r5: v128, r6: v128, r7: v128, p: usize): f32 {
  // From +0, lane by lane in order, as innerProduct sums: the chain addScaledLanes4 adds too.
  const low = mulAdd4(f32x4.splat(0), r0, r1, r2, r3, v128.load(p), v128.load(p + 16), v128.load(p + 32), v128.load(p + 48));
  return hsum(mulAdd4(low, r4, r5, r6, r7, v128.load(p + 64), v128.load(p + 80), v128.load(p + 96), v128.load(p + 112)));
}

/** addScaled of a head of 32 floats held in r0..r7: dst += s * r. */
@inline function addScaled32(dst: usize, s: v128, r0: v128, r1: v128, r2: v128, r3: v128, r4: v128, r5: v128, r6: v128, r7: v128): void {
  v128.store(dst, f32x4.add(v128.load(dst), f32x4.mul(s, r0)));
  v128.store(dst + 16, f32x4.add(v128.load(dst + 16), f32x4.mul(s, r1)));
  v128.store(dst + 32, f32x4.add(v128.load(dst + 32), f32x4.mul(s, r2)));
  v128.store(dst + 48, f32x4.add(v128.load(dst + 48), f32x4.mul(s, r3)));
  v128.store(dst + 64, f32x4.add(v128.load(dst + 64), f32x4.mul(s, r4)));
  v128.store(dst + 80, f32x4.add(v128.load(dst + 80), f32x4.mul(s, r5)));
  v128.store(dst + 96, f32x4.add(v128.load(dst + 96), f32x4.mul(s, r6)));
  v128.store(dst + 112, f32x4.add(v128.load(dst + 112), f32x4.mul(s, r7)));
}

/** A head of 32 floats held in r0..r7, stored at p. */
@inline function store32(p: usize, r0: v128, r1: v128, r2: v128, r3: v128, r4: v128, r5: v128, r6: v128, r7: v128): void {
  v128.store(p, r0); v128.store(p + 16, r1); v128.store(p + 32, r2); v128.store(p + 48, r3);
  v128.store(p + 64, r4); v128.store(p + 80, r5); v128.store(p + 96, r6); v128.store(p + 112, r7);
}

/**
 * dst, a head of 32 floats, += w[t2] * wScale * the head at rows + t2 * rowStride for t2 = 0..t,
 * added in that order in eight registers; each weight times wScale is stored back into w (the
 * forward pass normalizes its probabilities so; the backward pass's wScale is 1).
 */
@inline function addWeightedRows32(dst: usize, w: usize, wScale: f32, rows: usize, rowStride: usize, t: i32): void {
  let a0 = v128.load(dst), a1 = v128.load(dst + 16), a2 = v128.load(dst + 32), a3 = v128.load(dst + 48);
  let a4 = v128.load(dst + 64), a5 = v128.load(dst + 80), a6 = v128.load(dst + 96), a7 = v128.load(dst + 112);
  for (let t2 = 0; t2 <= t; t2++) {
    const wt = load<f32>(w + (<usize>t2 << 2)) * wScale;
    store<f32>(w + (<usize>t2 << 2), wt);
    const s = f32x4.splat(wt);
    const r = rows + <usize>t2 * rowStride;
    a0 = f32x4.add(a0, f32x4.mul(s, v128.load(r)));
    a1 = f32x4.add(a1, f32x4.mul(s, v128.load(r + 16)));
    a2 = f32x4.add(a2, f32x4.mul(s, v128.load(r + 32)));
    a3 = f32x4.add(a3, f32x4.mul(s, v128.load(r + 48)));
    a4 = f32x4.add(a4, f32x4.mul(s, v128.load(r + 64)));
    a5 = f32x4.add(a5, f32x4.mul(s, v128.load(r + 80)));
    a6 = f32x4.add(a6, f32x4.mul(s, v128.load(r + 96)));
    a7 = f32x4.add(a7, f32x4.mul(s, v128.load(r + 112)));
  }
  store32(dst, a0, a1, a2, a3, a4, a5, a6, a7);
}

/**
 * The hsums of four accumulators, as one vector: lane j is hsum(a_j), added in hsum's order
 * ((l0 + l1) + (l2 + l3)), so that each score equals innerProduct32's bit for bit.
 */
@inline function hsum4(a0: v128, a1: v128, a2: v128, a3: v128): v128 {
  // [a0.l0+a0.l1, a0.l2+a0.l3, a1.l0+a1.l1, a1.l2+a1.l3], and the same for a2, a3.
  const p01 = f32x4.add(v128.shuffle<f32>(a0, a1, 0, 2, 4, 6), v128.shuffle<f32>(a0, a1, 1, 3, 5, 7));
  const p23 = f32x4.add(v128.shuffle<f32>(a2, a3, 0, 2, 4, 6), v128.shuffle<f32>(a2, a3, 1, 3, 5, 7));
  return f32x4.add(v128.shuffle<f32>(p01, p23, 0, 2, 4, 6), v128.shuffle<f32>(p01, p23, 1, 3, 5, 7));
}

/** The head of 32 floats at p times r0..r7 lane by lane, summed from +0 in innerProduct32's order, not yet hsummed. */
@inline function dotLanes32(r0: v128, r1: v128, r2: v128, r3: v128, r4: v128, r5: v128, r6: v128, r7: v128, p: usize): v128 {
  const low = mulAdd4(f32x4.splat(0), r0, r1, r2, r3, v128.load(p), v128.load(p + 16), v128.load(p + 32), v128.load(p + 48));
  return mulAdd4(low, r4, r5, r6, r7, v128.load(p + 64), v128.load(p + 80), v128.load(p + 96), v128.load(p + 112));
}

/**
 * out[t2] = innerProduct32(r, the head at rows + t2 * rowStride) * scale for t2 = 0..t, four keys
 * at a time (one hsum4 instead of four hsums), the rest one by one; returns the largest.
 */
@inline function scores32(out: usize, r0: v128, r1: v128, r2: v128, r3: v128, r4: v128, r5: v128, r6: v128, r7: v128, rows: usize, rowStride: usize, t: i32, scale: f32): f32 {
  const sv = f32x4.splat(scale);
  let mv = f32x4.splat(-Infinity);
  let t2 = 0;
  for (; t2 + 4 <= t + 1; t2 += 4) {
    const k = rows + <usize>t2 * rowStride;
    const a0 = dotLanes32(r0, r1, r2, r3, r4, r5, r6, r7, k);
    const a1 = dotLanes32(r0, r1, r2, r3, r4, r5, r6, r7, k + rowStride);
    const a2 = dotLanes32(r0, r1, r2, r3, r4, r5, r6, r7, k + 2 * rowStride);
    const a3 = dotLanes32(r0, r1, r2, r3, r4, r5, r6, r7, k + 3 * rowStride);
    const s = f32x4.mul(hsum4(a0, a1, a2, a3), sv);
    v128.store(out + (<usize>t2 << 2), s);
    mv = f32x4.pmax(mv, s);
  }
  let maxv = Mathf.max(Mathf.max(f32x4.extract_lane(mv, 0), f32x4.extract_lane(mv, 1)), Mathf.max(f32x4.extract_lane(mv, 2), f32x4.extract_lane(mv, 3)));
  for (; t2 <= t; t2++) {
    const s = innerProduct32(r0, r1, r2, r3, r4, r5, r6, r7, rows + <usize>t2 * rowStride) * scale;
    store<f32>(out + (<usize>t2 << 2), s);
    if (s > maxv) maxv = s;
  }
  return maxv;
}

/** The largest of a[0..t], four at a time (pmax, as scores32 takes it), then the rest. */
@inline function rowMax(a: usize, t: i32): f32 {
  let mv = f32x4.splat(-Infinity);
  let t2 = 0;
  for (; t2 + 4 <= t + 1; t2 += 4) mv = f32x4.pmax(mv, v128.load(a + (<usize>t2 << 2)));
  let maxv = Mathf.max(Mathf.max(f32x4.extract_lane(mv, 0), f32x4.extract_lane(mv, 1)), Mathf.max(f32x4.extract_lane(mv, 2), f32x4.extract_lane(mv, 3)));
  for (; t2 <= t; t2++) {
    const s = load<f32>(a + (<usize>t2 << 2));
    if (s > maxv) maxv = s;
  }
  return maxv;
}

/**
 * Scores of two query heads (32 floats at qa and qb) against keys t2 = 0..n-1 (n a multiple of 4;
 * the key head at rows + t2 * rowStride), four keys at a time: oa[t2] and ob[t2] get
 * innerProduct32(q, k) * scale, bit for bit (each a chain of lane products from +0 over the head's
 * eight quarters, then hsum). The two rows share every key load (eight accumulators).
 */
@inline function scoresPair32(oa: usize, ob: usize, qa: usize, qb: usize, rows: usize, rowStride: usize, n: i32, scale: f32): void {
  const sv = f32x4.splat(scale);
  for (let t2 = 0; t2 < n; t2 += 4) {
    const k0 = rows + <usize>t2 * rowStride, k1 = k0 + rowStride, k2 = k1 + rowStride, k3 = k2 + rowStride;
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
    let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
    for (let c: usize = 0; c < 128; c += 16) {
      const x = v128.load(qa + c), y = v128.load(qb + c);
      const w0 = v128.load(k0 + c), w1 = v128.load(k1 + c), w2 = v128.load(k2 + c), w3 = v128.load(k3 + c);
      a0 = f32x4.add(a0, f32x4.mul(x, w0)); a1 = f32x4.add(a1, f32x4.mul(x, w1));
      a2 = f32x4.add(a2, f32x4.mul(x, w2)); a3 = f32x4.add(a3, f32x4.mul(x, w3));
      b0 = f32x4.add(b0, f32x4.mul(y, w0)); b1 = f32x4.add(b1, f32x4.mul(y, w1));
      b2 = f32x4.add(b2, f32x4.mul(y, w2)); b3 = f32x4.add(b3, f32x4.mul(y, w3));
    }
    v128.store(oa + (<usize>t2 << 2), f32x4.mul(hsum4(a0, a1, a2, a3), sv));
    v128.store(ob + (<usize>t2 << 2), f32x4.mul(hsum4(b0, b1, b2, b3), sv));
  }
}

/** o[t2] = innerProduct32(the head at q, the head at rows + t2 * rowStride) * scale for t2 = from..t. */
@inline function scoresTail32(o: usize, q: usize, rows: usize, rowStride: usize, from: i32, t: i32, scale: f32): void {
  if (from > t) return;
  const q0 = v128.load(q), q1 = v128.load(q + 16), q2 = v128.load(q + 32), q3 = v128.load(q + 48);
  const q4 = v128.load(q + 64), q5 = v128.load(q + 80), q6 = v128.load(q + 96), q7 = v128.load(q + 112);
  for (let t2 = from; t2 <= t; t2++) store<f32>(o + (<usize>t2 << 2), innerProduct32(q0, q1, q2, q3, q4, q5, q6, q7, rows + <usize>t2 * rowStride) * scale);
}

/**
 * Scores of query rows ta and ta + 1 (heads at qa, qa + qStride) against keys 0..ta and
 * 0..ta + 1, into rows oa and ob: the keys both see in blocks of four, shared; the rest row by row.
 */
@inline function scoresRowPair32(oa: usize, ob: usize, qa: usize, qStride: usize, rows: usize, rowStride: usize, ta: i32, scale: f32): void {
  const n4 = ((ta + 1) >> 2) << 2;
  scoresPair32(oa, ob, qa, qa + qStride, rows, rowStride, n4, scale);
  scoresTail32(oa, qa, rows, rowStride, n4, ta, scale);
  scoresTail32(ob, qa + qStride, rows, rowStride, n4, ta + 1, scale);
}

/**
 * Two heads of 32, at da and db (= da + dStride), += the weighted sums of the heads at
 * rows + t2 * rowStride: da with wa[t2] for t2 = 0..ta, db with wb[t2] for t2 = 0..ta + 1, each
 * added in key order (as addWeightedRows32 adds, with wScale 1). Half a head at a time, so that the
 * two rows share each value load in eight registers.
 */
@inline function addWeightedRowPair32(da: usize, dStride: usize, wa: usize, wb: usize, rows: usize, rowStride: usize, ta: i32): void {
  const db = da + dStride;
  for (let half: usize = 0; half < 128; half += 64) {
    const pa = da + half, pb = db + half;
    let a0 = v128.load(pa), a1 = v128.load(pa + 16), a2 = v128.load(pa + 32), a3 = v128.load(pa + 48);
    let b0 = v128.load(pb), b1 = v128.load(pb + 16), b2 = v128.load(pb + 32), b3 = v128.load(pb + 48);
    let r = rows + half;
    for (let t2 = 0; t2 <= ta; t2++, r += rowStride) {
      const sa = v128.load32_splat(wa + (<usize>t2 << 2)), sb = v128.load32_splat(wb + (<usize>t2 << 2));
      const x0 = v128.load(r), x1 = v128.load(r + 16), x2 = v128.load(r + 32), x3 = v128.load(r + 48);
      a0 = f32x4.add(a0, f32x4.mul(sa, x0)); a1 = f32x4.add(a1, f32x4.mul(sa, x1));
      a2 = f32x4.add(a2, f32x4.mul(sa, x2)); a3 = f32x4.add(a3, f32x4.mul(sa, x3));
      b0 = f32x4.add(b0, f32x4.mul(sb, x0)); b1 = f32x4.add(b1, f32x4.mul(sb, x1));
      b2 = f32x4.add(b2, f32x4.mul(sb, x2)); b3 = f32x4.add(b3, f32x4.mul(sb, x3));
    }
    // Row b's last key, ta + 1 (r is there now).
    const sb = v128.load32_splat(wb + (<usize>(ta + 1) << 2));
    b0 = f32x4.add(b0, f32x4.mul(sb, v128.load(r))); b1 = f32x4.add(b1, f32x4.mul(sb, v128.load(r + 16)));
    b2 = f32x4.add(b2, f32x4.mul(sb, v128.load(r + 32))); b3 = f32x4.add(b3, f32x4.mul(sb, v128.load(r + 48)));
    v128.store(pa, a0); v128.store(pa + 16, a1); v128.store(pa + 32, a2); v128.store(pa + 48, a3);
    v128.store(pb, b0); v128.store(pb + 16, b1); v128.store(pb + 32, b2); v128.store(pb + 48, b3);
  }
}

/** a[0..t] *= s, four at a time, then the rest (each product as addWeightedRows32 rounds it). */
@inline function scaleRow(a: usize, t: i32, s: f32): void {
  const sv = f32x4.splat(s);
  let t2 = 0;
  for (; t2 + 4 <= t + 1; t2 += 4) v128.store(a + (<usize>t2 << 2), f32x4.mul(v128.load(a + (<usize>t2 << 2)), sv));
  for (; t2 <= t; t2++) store<f32>(a + (<usize>t2 << 2), load<f32>(a + (<usize>t2 << 2)) * s);
}

/**
 * Heads of 32. Query rows two at a time share their key and value loads (scoresRowPair32,
 * addWeightedRowPair32); a row left over, and the sampler's single row, go alone. Either way each
 * probability and output is the same sum in the same order, so the two agree bit for bit.
 */
function attention_forward_hs32(out: usize, att: usize, qkv: usize, t0: i32, T: i32, C: i32, NH: i32, S: i32, scale: f32): void {
  const row3 = <usize>(3 * C) << 2;
  const rowS = <usize>S << 2;
  const kOff = <usize>C << 2, vOff = <usize>(2 * C) << 2;
  for (let h = 0; h < NH; h++) {
    const hb = <usize>h << 7;
    let t = t0;
    for (; t + 2 <= T; t += 2) {
      const aa = att + (<usize>h * S + t) * rowS, ab = aa + rowS;
      scoresRowPair32(aa, ab, qkv + <usize>t * row3 + hb, row3, qkv + kOff + hb, row3, t, scale);
      scaleRow(aa, t, 1 / expScoresAndSum(aa, t, rowMax(aa, t)));
      scaleRow(ab, t + 1, 1 / expScoresAndSum(ab, t + 1, rowMax(ab, t + 1)));
      const o = out + (<usize>t * C << 2) + hb;
      for (let i: usize = 0; i < 128; i += 16) {
        v128.store(o + i, f32x4.splat(0));
        v128.store(o + (<usize>C << 2) + i, f32x4.splat(0));
      }
      addWeightedRowPair32(o, <usize>C << 2, aa, ab, qkv + vOff + hb, row3, t);
    }
    for (; t < T; t++) {
      const q = qkv + <usize>t * row3 + hb;
      const q0 = v128.load(q), q1 = v128.load(q + 16), q2 = v128.load(q + 32), q3 = v128.load(q + 48);
      const q4 = v128.load(q + 64), q5 = v128.load(q + 80), q6 = v128.load(q + 96), q7 = v128.load(q + 112);
      const a = att + (<usize>h * S + t) * rowS;
      const maxv = scores32(a, q0, q1, q2, q3, q4, q5, q6, q7, qkv + kOff + hb, row3, t, scale);
      const inv: f32 = 1 / expScoresAndSum(a, t, maxv);
      const o = out + (<usize>t * C << 2) + hb;
      for (let i: usize = 0; i < 128; i += 16) v128.store(o + i, f32x4.splat(0));
      addWeightedRows32(o, a, inv, qkv + vOff + hb, row3, t);
    }
  }
}

/** dp[0..t] becomes ds = p (dp - dot) scale, four at a time, then the rest (each as the scalar expression rounds it). */
@inline function scoreGradients(dp: usize, a: usize, t: i32, dot: f32, scale: f32): void {
  const dotv = f32x4.splat(dot), sv = f32x4.splat(scale);
  let t2 = 0;
  for (; t2 + 4 <= t + 1; t2 += 4) {
    const k = <usize>t2 << 2;
    v128.store(dp + k, f32x4.mul(f32x4.mul(v128.load(a + k), f32x4.sub(v128.load(dp + k), dotv)), sv));
  }
  for (; t2 <= t; t2++) {
    const k = <usize>t2 << 2;
    store<f32>(dp + k, load<f32>(a + k) * (load<f32>(dp + k) - dot) * scale);
  }
}

/**
 * For key rows t2 = 0..ta, the head of 32 at dst + t2 * dstStride += wa[t2] * (the head at xa),
 * then += wb[t2] * (the head at xb); and for t2 = ta + 1, += wb[t2] * xb alone: query row ta's
 * additions, then row ta + 1's, as adding the two rows one after the other into memory would, with
 * one load and store of each key's head. With skipZero, a zero weight adds nothing.
 */
@inline function addScaledPair32(dst: usize, dstStride: usize, wa: usize, xa: usize, wb: usize, xb: usize, ta: i32, skipZero: bool): void {
  for (let half: usize = 0; half < 128; half += 64) {
    const ya0 = v128.load(xa + half), ya1 = v128.load(xa + half + 16), ya2 = v128.load(xa + half + 32), ya3 = v128.load(xa + half + 48);
    const yb0 = v128.load(xb + half), yb1 = v128.load(xb + half + 16), yb2 = v128.load(xb + half + 32), yb3 = v128.load(xb + half + 48);
    let d = dst + half;
    for (let t2 = 0; t2 <= ta; t2++, d += dstStride) {
      const ga = load<f32>(wa + (<usize>t2 << 2)), gb = load<f32>(wb + (<usize>t2 << 2));
      let v0 = v128.load(d), v1 = v128.load(d + 16), v2 = v128.load(d + 32), v3 = v128.load(d + 48);
      if (!skipZero || ga != 0) {
        const s = f32x4.splat(ga);
        v0 = f32x4.add(v0, f32x4.mul(s, ya0)); v1 = f32x4.add(v1, f32x4.mul(s, ya1));
        v2 = f32x4.add(v2, f32x4.mul(s, ya2)); v3 = f32x4.add(v3, f32x4.mul(s, ya3));
      }
      if (!skipZero || gb != 0) {
        const s = f32x4.splat(gb);
        v0 = f32x4.add(v0, f32x4.mul(s, yb0)); v1 = f32x4.add(v1, f32x4.mul(s, yb1));
        v2 = f32x4.add(v2, f32x4.mul(s, yb2)); v3 = f32x4.add(v3, f32x4.mul(s, yb3));
      }
      v128.store(d, v0); v128.store(d + 16, v1); v128.store(d + 32, v2); v128.store(d + 48, v3);
    }
    const gb = load<f32>(wb + (<usize>(ta + 1) << 2));
    if (!skipZero || gb != 0) {
      const s = f32x4.splat(gb);
      v128.store(d, f32x4.add(v128.load(d), f32x4.mul(s, yb0)));
      v128.store(d + 16, f32x4.add(v128.load(d + 16), f32x4.mul(s, yb1)));
      v128.store(d + 32, f32x4.add(v128.load(d + 32), f32x4.mul(s, yb2)));
      v128.store(d + 48, f32x4.add(v128.load(d + 48), f32x4.mul(s, yb3)));
    }
  }
}

/**
 * One query row's share of attention_backward_hs32 once dp (dout . v) is in scratch row dp: v's
 * gradient (p dout, added into memory key by key), then ds = p (dp - p . dp) scale in place of dp,
 * and k's gradient (ds q). q's gradient is left to the caller (the sum of ds k).
 */
@inline function backwardRow32(dqkv: usize, dp: usize, dO: usize, qkv: usize, a: usize, t: i32, row3: usize, hb: usize, kOff: usize, vOff: usize, scale: f32): void {
  const d0 = v128.load(dO), d1 = v128.load(dO + 16), d2 = v128.load(dO + 32), d3 = v128.load(dO + 48);
  const d4 = v128.load(dO + 64), d5 = v128.load(dO + 80), d6 = v128.load(dO + 96), d7 = v128.load(dO + 112);
  let dot: f32 = 0;
  for (let t2 = 0; t2 <= t; t2++) {
    const p = load<f32>(a + (<usize>t2 << 2));
    dot += p * load<f32>(dp + (<usize>t2 << 2));
    addScaled32(dqkv + <usize>t2 * row3 + vOff + hb, f32x4.splat(p), d0, d1, d2, d3, d4, d5, d6, d7);
  }
  const q = qkv + <usize>t * row3 + hb;
  const q0 = v128.load(q), q1 = v128.load(q + 16), q2 = v128.load(q + 32), q3 = v128.load(q + 48);
  const q4 = v128.load(q + 64), q5 = v128.load(q + 80), q6 = v128.load(q + 96), q7 = v128.load(q + 112);
  for (let t2 = 0; t2 <= t; t2++) {
    const p = load<f32>(a + (<usize>t2 << 2));
    const ds = p * (load<f32>(dp + (<usize>t2 << 2)) - dot) * scale;
    store<f32>(dp + (<usize>t2 << 2), ds);
    if (ds != 0) addScaled32(dqkv + <usize>t2 * row3 + kOff + hb, f32x4.splat(ds), q0, q1, q2, q3, q4, q5, q6, q7);
  }
}

/**
 * Heads of 32; scratch holds 2 S floats. Query rows two at a time: dp = dout . v with shared
 * loads, the two rows' ds, then v's and k's gradients with one load and store of each key for both
 * rows, and q's (the sum of ds k) with shared loads. A row left over goes alone (backwardRow32).
 * Every gradient element is the same sum in the same order as adding row after row into memory.
 */
function attention_backward_hs32(dqkv: usize, scratch: usize, dout: usize, qkv: usize, att: usize, t0: i32, T: i32, C: i32, NH: i32, S: i32, scale: f32): void {
  const row3 = <usize>(3 * C) << 2;
  const rowC = <usize>C << 2;
  const rowS = <usize>S << 2;
  const kOff = <usize>C << 2, vOff = <usize>(2 * C) << 2;
  const dpa = scratch, dpb = scratch + rowS;
  for (let h = 0; h < NH; h++) {
    const hb = <usize>h << 7;
    let t = t0;
    for (; t + 2 <= T; t += 2) {
      const aa = att + (<usize>h * S + t) * rowS, ab = aa + rowS;
      const dO = dout + <usize>t * rowC + hb;
      scoresRowPair32(dpa, dpb, dO, rowC, qkv + vOff + hb, row3, t, 1);
      // p . dp of both rows, in key order: two independent chains in one loop (each add waits on
      // the one before it in its own row only).
      let dotA: f32 = 0, dotB: f32 = 0;
      for (let t2 = 0; t2 <= t; t2++) {
        const k = <usize>t2 << 2;
        dotA += load<f32>(aa + k) * load<f32>(dpa + k);
        dotB += load<f32>(ab + k) * load<f32>(dpb + k);
      }
      dotB += load<f32>(ab + (<usize>(t + 1) << 2)) * load<f32>(dpb + (<usize>(t + 1) << 2));
      addScaledPair32(dqkv + vOff + hb, row3, aa, dO, ab, dO + rowC, t, false);
      scoreGradients(dpa, aa, t, dotA, scale);
      scoreGradients(dpb, ab, t + 1, dotB, scale);
      const q = qkv + <usize>t * row3 + hb;
      addScaledPair32(dqkv + kOff + hb, row3, dpa, q, dpb, q + row3, t, true);
      addWeightedRowPair32(dqkv + <usize>t * row3 + hb, row3, dpa, dpb, qkv + kOff + hb, row3, t);
    }
    for (; t < T; t++) {
      const a = att + (<usize>h * S + t) * rowS;
      const dO = dout + <usize>t * rowC + hb;
      scoresTail32(dpa, dO, qkv + vOff + hb, row3, 0, t, 1);
      backwardRow32(dqkv, dpa, dO, qkv, a, t, row3, hb, kOff, vOff, scale);
      addWeightedRows32(dqkv + <usize>t * row3 + hb, dpa, 1, qkv + kOff + hb, row3, t);
    }
  }
}

// GELU, tanh approximation (GPT-2), four lanes at a time. tanh(u) = sign(u) (1 - 2 / (exp(2|u|) + 1)),
// with exp as 2^n times Cephes' expf polynomial on [-ln2/2, ln2/2]: no Mathf.tanh call per element
// (which took 0.73 s of a 3.5 s demo step). Against f64 Math.tanh on 2^20 points over [-12, 12]
// (test/backend/kernels.test.ts checks 1e-6): GELU within 4.3e-7 and GELU' within 5.6e-7 absolute,
// the same worst case as Mathf.tanh's (the output's own f32 rounding). The rounding changed: 2.0% of
// GELU outputs and 9.2% of GELU' outputs differ from Mathf.tanh's, by at most 2.4e-7. Speed, the
// same run: 3.4-4.4 ns per element forward against 17.0, 4.5-6.0 backward against 21.4.
const GELU_K: f32 = 0.7978845608028654; // sqrt(2/pi)

@inline function tanh4(u: v128): v128 {
  // Past 2|u| = 20, 1 - tanh is below f32's resolution at 1: the result is +-1 exactly.
  const e = exp4(f32x4.pmin(f32x4.add(f32x4.abs(u), f32x4.abs(u)), f32x4.splat(20)));
  const t = f32x4.sub(f32x4.splat(1), f32x4.div(f32x4.splat(2), f32x4.add(e, f32x4.splat(1))));
  return v128.or(t, v128.and(u, i32x4.splat(0x80000000)));
}

/** GELU's tanh argument: sqrt(2/pi) (x + 0.044715 x^3). */
@inline function geluArg(x: v128): v128 {
  return f32x4.mul(f32x4.splat(GELU_K), f32x4.add(x, f32x4.mul(f32x4.mul(f32x4.mul(f32x4.splat(0.044715), x), x), x)));
}

@inline function geluForward4(x: v128): v128 {
  return f32x4.mul(f32x4.mul(f32x4.splat(0.5), x), f32x4.add(f32x4.splat(1), tanh4(geluArg(x))));
}

@inline function geluGrad4(x: v128): v128 {
  const th = tanh4(geluArg(x));
  const sech2 = f32x4.sub(f32x4.splat(1), f32x4.mul(th, th));
  const inner = f32x4.mul(f32x4.splat(GELU_K), f32x4.add(f32x4.splat(1), f32x4.mul(f32x4.mul(f32x4.splat(<f32>(3 * 0.044715)), x), x)));
  return f32x4.add(f32x4.mul(f32x4.splat(0.5), f32x4.add(f32x4.splat(1), th)), f32x4.mul(f32x4.mul(f32x4.mul(f32x4.splat(0.5), x), sech2), inner));
}

export function gelu_forward(out: usize, inp: usize, N: i32): void {
  let i = 0;
  for (; i + 4 <= N; i += 4) v128.store(out + (<usize>i << 2), geluForward4(v128.load(inp + (<usize>i << 2))));
  // A tail (N not a multiple of 4) through the same lanes, so that every element rounds alike.
  for (; i < N; i++) store<f32>(out + (<usize>i << 2), f32x4.extract_lane(geluForward4(f32x4.splat(load<f32>(inp + (<usize>i << 2)))), 0));
}

/** dinp += gelu'(inp) * dout. */
export function gelu_backward(dinp: usize, inp: usize, dout: usize, N: i32): void {
  let i = 0;
  for (; i + 4 <= N; i += 4) {
    const k = <usize>i << 2;
    v128.store(dinp + k, f32x4.add(v128.load(dinp + k), f32x4.mul(geluGrad4(v128.load(inp + k)), v128.load(dout + k))));
  }
  for (; i < N; i++) {
    const k = <usize>i << 2;
    store<f32>(dinp + k, load<f32>(dinp + k) + f32x4.extract_lane(geluGrad4(f32x4.splat(load<f32>(inp + k))), 0) * load<f32>(dout + k));
  }
}

// AssemblyScript's Mathf.exp (expf_lut: ARM's optimized-routines expf, as in musl) in four lanes,
// bit for bit: its table, and its double-precision steps in f64x2 halves. The softmax's two passes
// over the vocabulary took one scalar call per logit each (about 45% of a forward pass of the
// demo's model, vocabulary 2,048). Lanes at |x| >= 88, NaN or infinite, take Mathf.exp itself.
// The table: exp2f_data_tab[i] = uint(2^(i/32)) - (i << 47), from AssemblyScript's std/assembly/util/math.ts.
const EXPF_TAB = memory.data<u64>([
  0x3FF0000000000000, 0x3FEFD9B0D3158574, 0x3FEFB5586CF9890F, 0x3FEF9301D0125B51,
  0x3FEF72B83C7D517B, 0x3FEF54873168B9AA, 0x3FEF387A6E756238, 0x3FEF1E9DF51FDEE1,
  0x3FEF06FE0A31B715, 0x3FEEF1A7373AA9CB, 0x3FEEDEA64C123422, 0x3FEECE086061892D,
  0x3FEEBFDAD5362A27, 0x3FEEB42B569D4F82, 0x3FEEAB07DD485429, 0x3FEEA47EB03A5585,
  0x3FEEA09E667F3BCD, 0x3FEE9F75E8EC5F74, 0x3FEEA11473EB0187, 0x3FEEA589994CCE13,
  0x3FEEACE5422AA0DB, 0x3FEEB737B0CDC5E5, 0x3FEEC49182A3F090, 0x3FEED503B23E255D,
  0x3FEEE89F995AD3AD, 0x3FEEFF76F2FB5E47, 0x3FEF199BDD85529C, 0x3FEF3720DCEF9069,
  0x3FEF5818DCFBA487, 0x3FEF7C97337B9B5F, 0x3FEFA4AFA2A490DA, 0x3FEFD0765B6E4540,
]);

/** expf_lut's steps on two lanes already in double precision. */
@inline function expfPair(xd: v128): v128 {
  const shift = reinterpret<f64>(0x4338000000000000);
  const InvLn2N = reinterpret<f64>(0x3FF71547652B82FE) * 32;
  const C0 = reinterpret<f64>(0x3FAC6AF84B912394) / 32 / 32 / 32;
  const C1 = reinterpret<f64>(0x3FCEBFCE50FAC4F3) / 32 / 32;
  const C2 = reinterpret<f64>(0x3FE62E42FF0C52D6) / 32;
  const z = f64x2.mul(f64x2.splat(InvLn2N), xd);
  const kd = f64x2.add(z, f64x2.splat(shift));
  const r = f64x2.sub(z, f64x2.sub(kd, f64x2.splat(shift)));
  // 2^(k/32): the table's entry for k mod 32, with k added into the exponent.
  const t0 = load<u64>(EXPF_TAB + ((<usize>i64x2.extract_lane(kd, 0) & 31) << 3));
  const t1 = load<u64>(EXPF_TAB + ((<usize>i64x2.extract_lane(kd, 1) & 31) << 3));
  const s = i64x2.add(i64x2.replace_lane(i64x2.splat(t0), 1, t1), i64x2.shl(kd, 47));
  const zz = f64x2.add(f64x2.mul(f64x2.splat(C0), r), f64x2.splat(C1));
  let y = f64x2.add(f64x2.mul(f64x2.splat(C2), r), f64x2.splat(1));
  y = f64x2.add(y, f64x2.mul(zz, f64x2.mul(r, r)));
  return f64x2.mul(y, s);
}

/** Mathf.exp of each lane, bit for bit. */
@inline function expfExact4(x: v128): v128 {
  // |x| >= 88 (the bits of 88 are 0x42B00000), or NaN or infinite: Mathf.exp's special cases.
  const big = i32x4.ge_u(v128.and(x, i32x4.splat(0x7FF00000)), i32x4.splat(0x42B00000));
  if (v128.any_true(big)) {
    return f32x4.replace_lane(f32x4.replace_lane(f32x4.replace_lane(f32x4.splat(Mathf.exp(f32x4.extract_lane(x, 0))), 1, Mathf.exp(f32x4.extract_lane(x, 1))), 2, Mathf.exp(f32x4.extract_lane(x, 2))), 3, Mathf.exp(f32x4.extract_lane(x, 3)));
  }
  const lo = f32x4.demote_f64x2_zero(expfPair(f64x2.promote_low_f32x4(x)));
  const hi = f32x4.demote_f64x2_zero(expfPair(f64x2.promote_low_f32x4(v128.shuffle<f32>(x, x, 2, 3, 0, 1))));
  return v128.shuffle<f32>(lo, hi, 0, 1, 4, 5);
}

/**
 * Row-wise log-softmax of logits (T x V), in place into probabilities; writes the logprob of each
 * row's target (targets: i32, < 0 = none), each row's entropy in nats, and (if lseOut is not 0)
 * each row's log-sum-exp, so that any token's logprob is logit - lse, rounded to f32. The sums run
 * over the vocabulary in order, one term at a time; the exps are Mathf.exp's, four at a time.
 */
export function softmax_rows(logits: usize, targets: usize, lp: usize, entropy: usize, lseOut: usize, T: i32, V: i32): void {
  const V4 = V & ~3;
  for (let t = 0; t < T; t++) {
    const r = logits + (<usize>t * V << 2);
    const maxv = rowMax(r, V - 1);
    const mv = f32x4.splat(maxv);
    let sum: f32 = 0;
    let v = 0;
    for (; v < V4; v += 4) {
      const e = expfExact4(f32x4.sub(v128.load(r + (<usize>v << 2)), mv));
      sum += f32x4.extract_lane(e, 0);
      sum += f32x4.extract_lane(e, 1);
      sum += f32x4.extract_lane(e, 2);
      sum += f32x4.extract_lane(e, 3);
    }
    for (; v < V; v++) sum += Mathf.exp(load<f32>(r + (<usize>v << 2)) - maxv);
    const lse = maxv + Mathf.log(sum);
    if (lseOut) store<f32>(lseOut + (<usize>t << 2), lse);
    const tgt = load<i32>(targets + (<usize>t << 2));
    store<f32>(lp + (<usize>t << 2), tgt >= 0 ? load<f32>(r + (<usize>tgt << 2)) - lse : 0);
    const lv = f32x4.splat(lse);
    let px: f32 = 0;
    v = 0;
    for (; v < V4; v += 4) {
      const k = r + (<usize>v << 2);
      const x = v128.load(k);
      const p = expfExact4(f32x4.sub(x, lv));
      const xp = f32x4.mul(p, x);
      px += f32x4.extract_lane(xp, 0);
      px += f32x4.extract_lane(xp, 1);
      px += f32x4.extract_lane(xp, 2);
      px += f32x4.extract_lane(xp, 3);
      v128.store(k, p);
    }
    for (; v < V; v++) {
      const x = load<f32>(r + (<usize>v << 2));
      const p = Mathf.exp(x - lse);
      px += p * x;
      store<f32>(r + (<usize>v << 2), p);
    }
    store<f32>(entropy + (<usize>t << 2), lse - px);
  }
}

/** Turn probabilities into dL/dlogits in place, given g[t] = dL/dlp[t] for each row's target logprob. */
export function softmax_backward(probs: usize, targets: usize, g: usize, T: i32, V: i32): void {
  for (let t = 0; t < T; t++) {
    const r = probs + (<usize>t * V << 2);
    const gt = load<f32>(g + (<usize>t << 2));
    if (gt == 0) {
      memory.fill(r, 0, <usize>V << 2);
      continue;
    }
    // L depends on the logits only through lp = logit[target] - lse, so dL/dlogit = g * (onehot - p).
    const ng = f32x4.splat(-gt);
    for (let v: usize = 0; v < (<usize>V << 2); v += 16) v128.store(r + v, f32x4.mul(v128.load(r + v), ng));
    const tgt = load<i32>(targets + (<usize>t << 2));
    const k = r + (<usize>tgt << 2);
    store<f32>(k, load<f32>(k) + gt);
  }
}
