import { beforeAll, describe, expect, it } from 'vitest';
import { createKernels } from '../../src/backend/local/tensor-math.js';
import { checksumHex, xxh32 } from '../../src/files/checksum.js';
import { datumFor, ensureWasm, tinyBackend, tinyTokenizer, TEXTS } from './helpers.js';

beforeAll(ensureWasm);

/**
 * The kernels' exact bits, pinned. Faster kernels (issue 47) must compute the same sums in the same
 * order, so that every committed learning curve, checkpoint and seed reproduces: this is the
 * checksum of one model's logprobs, gradients and greedy samples, taken with the kernels before
 * that work (commit 250aff1). Heads of 32 (the shipped sizes' kernels), rows in pairs and alone,
 * a shared prefix (attention from a row t0 > 0), zero-weight rows, and the sampler's KV cache.
 * WebAssembly's SIMD arithmetic is IEEE single precision, the same on every machine.
 */
const PINNED = { logprobs: '26f0c1d5', grads: '44faeb64', samples: 'b63b6954' };

const PINNED_SOFTMAX = { probabilities: 'a25f411e', rows: '6412854d' };

/** The checksum of the values as f32 bits, every NaN as one pattern (x86 and Arm make different NaNs). */
function bitsOf(values: ArrayLike<number>): string {
  const f = Float32Array.from(values), u = new Uint32Array(f.buffer);
  for (let i = 0; i < f.length; i++) if (Number.isNaN(f[i])) u[i] = 0x7fc00000;
  return checksumHex(xxh32(new Uint8Array(f.buffer)));
}

describe('kernel bits', () => {
  it("the model's logprobs, gradients and greedy samples are bit-identical to the kernels' before the speed work", async () => {
    const tok = tinyTokenizer();
    const ids = tok.encode(TEXTS.join(' ')).slice(0, 47);
    const b = tinyBackend(tok, { context: 64, dModel: 64, nLayers: 2, nHeads: 2 }, 5);
    // Two datums sharing a 17-token prefix; 46 and 30 rows (pairs, and a row alone after a prefix of odd length).
    const d1 = datumFor(ids, { weights: ids.slice(1).map((_, t) => (t % 5 === 0 ? 0 : 1 + (t % 3) / 2)) });
    const d2 = datumFor([...ids.slice(0, 17), ...ids.slice(30, 44).reverse()]);
    const r = b.forwardBackwardSync([d1, d2], 'cross_entropy');
    const sampler = b.saveWeightsForLocalSampler('bits');
    const samples = await sampler.sample(ids.slice(0, 21), { maxTokens: 24, temperature: 0 });
    const got = {
      logprobs: bitsOf(r.logprobs.flat()),
      grads: bitsOf(b.model.grads!.a),
      samples: bitsOf(samples.flatMap((s) => [...s.tokens, ...(s.logprobs ?? [])])),
    };
    await b.close();
    expect(got).toEqual(PINNED);
  });

  it("softmax rows over a vocabulary's worth of logits, from 0 down past exp's underflow, with -0, -Infinity and a row length not a multiple of 4, are bit-identical too", () => {
    const k = createKernels(1 << 22, 'wasm-simd');
    const T = 3, V = 4099;
    const logits = k.heap.f32(T * V), targets = k.heap.i32(T), lp = k.heap.f32(T), entropy = k.heap.f32(T), lse = k.heap.f32(T);
    for (let i = 0; i < T * V; i++) logits.a[i] = -120 * ((i * 7919) % (T * V)) / (T * V) + (i % 3 === 0 ? 0.37 : 0);
    logits.a[10] = -0;
    logits.a[V + 11] = -Infinity;
    logits.a[2 * V + 12] = -88;
    targets.a.set([5, V - 1, -1]);
    k.softmaxRows(logits, targets, lp, entropy, lse, T, V);
    expect({ probabilities: bitsOf(logits.a), rows: bitsOf([...lp.a, ...entropy.a, ...lse.a]) }).toEqual(PINNED_SOFTMAX);
  });
});
