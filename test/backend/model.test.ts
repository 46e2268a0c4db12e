import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalBackend, loadSampler } from '../../src/backend/local/backend.js';
import { paramShapes } from '../../src/backend/local/model.js';
import { seededRandom } from '../../src/random.js';
import { LOSS_NAMES } from '../../src/backend/losses.js';
import type { Datum, LossFn } from '../../src/backend/types.js';
import { InputError } from '../../src/errors.js';
import { ADAM, datumFor, ensureWasm, tinyBackend, tinyTokenizer, TEXTS } from './helpers.js';

beforeAll(ensureWasm);

describe('local model gradients', () => {
  const tok = tinyTokenizer();
  const ids = tok.encode(TEXTS[1]!).slice(0, 24);
  const n = ids.length - 1;
  const rng = seededRandom(3);
  // RL inputs: first third masked (weight 0, advantage 0, logprob 0), ratios spread around the clip range.
  const rl = (lpNow: number[]): Partial<Datum> => ({
    weights: lpNow.map((_, t) => (t < n / 3 ? 0 : 1)),
    advantages: lpNow.map((_, t) => (t < n / 3 ? 0 : rng() < 0.5 ? -1 - rng() : 1 + rng())),
    logprobs: lpNow.map((lp, t) => (t < n / 3 ? 0 : lp + [0.5, 0, -0.4, 0.05][t % 4]!)),
  });

  // Every loss of the loss table, with heads of 4 (the general attention kernels); and with heads
  // of 32 (the shipped sizes' kernels, whose query rows go in pairs and alone), two losses.
  const cases = [
    ...LOSS_NAMES.map((lossFn) => ({ lossFn, dModel: 8 })),
    ...(['cross_entropy', 'importance_sampling'] as const).map((lossFn) => ({ lossFn, dModel: 64 })),
  ];
  for (const { lossFn, dModel } of cases) {
    it(`${lossFn}, heads of ${dModel / 2}: analytic gradient matches central finite differences for every parameter tensor`, () => {
      const b = tinyBackend(tok, { context: 32, dModel, nLayers: 2, nHeads: 2 });
      const m = b.model;
      const base = datumFor(ids);
      const lpNow = b.forwardBackwardSync([base], 'cross_entropy').logprobs[0]!;
      m.zeroGrads();
      const d: Datum = lossFn === 'cross_entropy' ? { ...base, weights: lpNow.map((_, t) => (t % 3 === 0 ? 0 : 0.5 + (t % 2))) } : { ...base, ...rl(lpNow) };
      b.forwardBackwardSync([d], lossFn);
      const grad = Float64Array.from(m.grads!.a);
      m.zeroGrads();
      // cispo stops the gradient through its clipped ratio: differentiate its surrogate, with the
      // ratio weights frozen at the base point, -Σ w·sg(clip(r))·A·lp.
      const frozen = lpNow.map((lp, t) => Math.min(Math.max(Math.exp(lp - (d.logprobs?.[t] ?? 0)), 0), 4));
      const lossAt = () => {
        const r = b.forwardBackwardSync([d], lossFn);
        m.zeroGrads();
        if (lossFn !== 'cispo') return r.loss;
        // Only weighted rows have a logprob on the loss-rows path (the others are NaN).
        return r.logprobs[0]!.reduce((s, lp, t) => (d.weights[t] ? s - d.weights[t]! * frozen[t]! * d.advantages![t]! * lp : s), 0);
      };
      const p = m.params.a;
      const dirRng = seededRandom(11);
      let off = 0;
      for (const shape of paramShapes(m.config)) {
        // A random unit direction inside this tensor: g·u against (L(p+εu) − L(p−εu)) / 2ε.
        const u = Float64Array.from({ length: shape.size }, () => dirRng() * 2 - 1);
        const norm = Math.hypot(...u);
        let analytic = 0;
        for (let i = 0; i < shape.size; i++) analytic += grad[off + i]! * (u[i]! / norm);
        // Small steps: the residual stream is small at initialisation and layer norm magnifies it.
        const eps = 1e-3;
        const saved = Float32Array.from(p.subarray(off, off + shape.size));
        for (let i = 0; i < shape.size; i++) p[off + i] = saved[i]! + eps * (u[i]! / norm);
        const plus = lossAt();
        for (let i = 0; i < shape.size; i++) p[off + i] = saved[i]! - eps * (u[i]! / norm);
        const minus = lossAt();
        p.set(saved, off);
        const numeric = (plus - minus) / (2 * eps);
        expect(Math.abs(numeric - analytic), `${lossFn} ${shape.name}: numeric ${numeric} analytic ${analytic}`).toBeLessThan(5e-3 + 2e-2 * Math.abs(analytic));
        off += shape.size;
      }
    });
  }

  it('rejects a datum whose arrays disagree in length, naming the datum and the field', () => {
    const b = tinyBackend(tok);
    const d = datumFor(ids);
    expect(() => b.forwardBackwardSync([d, { ...d, weights: [1] }], 'cross_entropy')).toThrow(/datum 1: weights has 1 entries/);
    expect(() => b.forwardBackwardSync([d], 'ppo')).toThrow(InputError);
  });
});

describe('sampler', () => {
  const tok = tinyTokenizer();
  const ids = tok.encode(TEXTS[2]!);

  it.each([
    ['wasm-simd', 16],
    ['js', 16],
    ['wasm-simd', 64],
  ] as const)("sampler logprobs equal the learner's forward logprobs bit for bit, at temperature 1 (%s kernels, dModel %i)", async (kernels, dModel) => {
    const b = createLocalBackend({ tokenizer: tok, config: { context: 64, dModel, nLayers: 2, nHeads: 2 }, seed: 7, kernels, dir: tinyBackend(tok).dir });
    const sampler = await b.saveWeightsForSampler('parity');
    const prompt = ids.slice(0, 5);
    const [seq] = await sampler.sample(prompt, { maxTokens: 20, temperature: 1, seed: 42 });
    const full = [...prompt, ...seq!.tokens];
    const fb = b.forwardBackwardSync([datumFor(full)], 'cross_entropy');
    b.model.zeroGrads();
    expect(fb.logprobs[0]!.slice(prompt.length - 1)).toEqual(seq!.logprobs);
    const lps = await sampler.computeLogprobs(full);
    expect(lps[0]).toBeNull();
    expect(lps.slice(prompt.length)).toEqual(seq!.logprobs);
  });

  it('resumes a longer prompt from its prefix cache with exactly the results of a fresh run', async () => {
    const b = tinyBackend(tok);
    const s = b.samplerInMemory('cached');
    const p1 = ids.slice(0, 5);
    const [first] = s.sampleSync(p1, { maxTokens: 6, temperature: 1, seed: 1 });
    s.sampleSync(ids.slice(2, 8), { maxTokens: 3, temperature: 1, seed: 1 }); // another episode in between
    const p2 = [...p1, ...first!.tokens, ...ids.slice(5, 9)];
    const cached = s.sampleSync(p2, { maxTokens: 6, temperature: 1, seed: 2 });
    const fresh = b.samplerInMemory('fresh').sampleSync(p2, { maxTokens: 6, temperature: 1, seed: 2 });
    expect(cached).toEqual(fresh);
    // The cache did the work: a group of rollouts sharing a prompt runs it once.
    const before = s.rowsRun;
    s.sampleSync(p2, { maxTokens: 1, temperature: 1, seed: 3 });
    expect(s.rowsRun - before).toBe(1); // only the prompt's last row, for its logits
    expect((await s.computeLogprobs([...p2, ...cached[0]!.tokens])).slice(p2.length)).toEqual(cached[0]!.logprobs);
  });

  it('is deterministic given a seed, honours stop tokens and the token budget', async () => {
    const b = tinyBackend(tok);
    const s = b.samplerInMemory();
    const prompt = ids.slice(0, 4);
    const a = s.sampleSync(prompt, { maxTokens: 12, temperature: 1, seed: 5 }, 3);
    const again = s.sampleSync(prompt, { maxTokens: 12, temperature: 1, seed: 5 }, 3);
    expect(again).toEqual(a);
    expect(a.every((x) => x.stopReason === 'length' && x.tokens.length === 12)).toBe(true);
    const stopOn = a[0]!.tokens[3]!;
    const stopped = s.sampleSync(prompt, { maxTokens: 12, temperature: 1, seed: 5, stop: [stopOn] })[0]!;
    expect(stopped.stopReason).toBe('stop');
    expect(stopped.tokens.at(-1)).toBe(stopOn);
    expect(stopped.tokens.indexOf(stopOn)).toBe(stopped.tokens.length - 1);
    // top-k 1 is greedy.
    const greedy = s.sampleSync(prompt, { maxTokens: 6, temperature: 0 })[0]!;
    expect(s.sampleSync(prompt, { maxTokens: 6, temperature: 1, topK: 1, seed: 9 })[0]!.tokens).toEqual(greedy.tokens);
    expect(() => s.sampleSync(prompt, { maxTokens: 0, temperature: 1 })).toThrow(/maxTokens/);
    expect(() => s.sampleSync([99999], { maxTokens: 1, temperature: 1 })).toThrow(/prompt\[0\]/);
  });
});

describe('training', () => {
  const tok = tinyTokenizer();

  it('a few hundred cross-entropy steps drive the loss on a small fixed set near zero', () => {
    const b = tinyBackend(tok, { context: 64, dModel: 32, nLayers: 2, nHeads: 2 });
    const data = TEXTS.slice(0, 3).map((t) => datumFor(tok.encode(t)));
    const tokens = data.reduce((s, d) => s + d.targetTokens.length, 0);
    const first = b.forwardBackwardSync(data, 'cross_entropy').loss / tokens;
    b.model.zeroGrads();
    let last = first;
    for (let i = 0; i < 300; i++) {
      last = b.forwardBackwardSync(data, 'cross_entropy').loss / tokens;
      b.optimStepSync({ ...ADAM, learningRate: 3e-3 });
    }
    expect(first).toBeGreaterThan(4);
    expect(last).toBeLessThan(0.05);
  });

  it('importance-sampling steps with a positive advantage raise the probability of the rewarded token', async () => {
    const b = tinyBackend(tok);
    const prompt = tok.encode('Paris is the');
    const target = tok.encode(' dog')[0]!;
    const seq = [...prompt, target];
    const before = (await b.samplerInMemory().computeLogprobs(seq)).at(-1)!;
    for (let i = 0; i < 5; i++) {
      const lp = b.forwardBackwardSync([datumFor(seq)], 'cross_entropy').logprobs[0]!;
      b.model.zeroGrads();
      const n = lp.length;
      const d = datumFor(seq, { weights: lp.map((_, t) => (t === n - 1 ? 1 : 0)), logprobs: lp.map((x, t) => (t === n - 1 ? x : 0)), advantages: lp.map((_, t) => (t === n - 1 ? 1 : 0)) });
      const r = b.forwardBackwardSync([d], 'importance_sampling');
      expect(r.metrics['ratio:mean']).toBe(1);
      b.optimStepSync({ ...ADAM, learningRate: 1e-2 });
    }
    const after = (await b.samplerInMemory().computeLogprobs(seq)).at(-1)!;
    expect(after).toBeGreaterThan(before! + 0.5);
  });

  it('save, load and resume give bit-identical next steps', async () => {
    const b = tinyBackend(tok);
    const data = TEXTS.map((t) => datumFor(tok.encode(t).slice(0, 40)));
    for (let i = 0; i < 3; i++) {
      b.forwardBackwardSync(data.slice(i, i + 2), 'cross_entropy');
      b.optimStepSync(ADAM);
    }
    const path = await b.saveState('resume-me');
    const step = () => {
      const r = b.forwardBackwardSync(data.slice(1, 3), 'cross_entropy');
      b.optimStepSync({ ...ADAM, weightDecay: 0.1 });
      return r.loss;
    };
    const c = createLocalBackend({ checkpoint: path, dir: b.dir });
    expect(c.step).toBe(3);
    const lossB = step();
    const lossC = c.forwardBackwardSync(data.slice(1, 3), 'cross_entropy').loss;
    c.optimStepSync({ ...ADAM, weightDecay: 0.1 });
    expect(lossC).toBe(lossB);
    expect(Buffer.from(c.model.params.a.buffer, c.model.params.a.byteOffset, c.model.params.a.byteLength).equals(Buffer.from(b.model.params.a.buffer, b.model.params.a.byteOffset, b.model.params.a.byteLength))).toBe(true);
    // loadState into a live backend rewinds it to the saved point, too.
    await b.loadState(path);
    expect(b.step).toBe(3);
    expect(step()).toBe(lossB);
    // A sampler checkpoint reloads to the same logprobs.
    const s = await b.saveWeightsForSampler('after');
    const reread = loadSampler(s.modelPath);
    const seq = tok.encode(TEXTS[0]!);
    expect(await reread.computeLogprobs(seq)).toEqual(await s.computeLogprobs(seq));
  });

  it('rejects a bad model config, naming the field', () => {
    expect(() => createLocalBackend({ tokenizer: tok, config: { dModel: 30 } })).toThrow(/dModel: .*multiple of 4/);
    expect(() => createLocalBackend({ tokenizer: tok, config: { dModel: 64, nHeads: 3 } })).toThrow(/dModel \/ nHeads/);
    expect(() => createLocalBackend({ tokenizer: tok, config: { context: 2048, dModel: 512, nLayers: 16, nHeads: 64 } })).toThrow(/over the 4 GiB/);
    expect(() => createLocalBackend({})).toThrow(InputError);
  });

  it('refuses a file that is not a checkpoint, or of another format version, naming the path', () => {
    const b = tinyBackend(tok);
    const junk = join(b.dir, 'junk.ckpt');
    writeFileSync(junk, 'hello world, not a checkpoint');
    expect(() => createLocalBackend({ checkpoint: junk })).toThrow(new RegExp(`${junk}.*not a sleuth`));
    const header = Buffer.from(JSON.stringify({ format: 'sleuth-local-lm', version: 99 }));
    const file = Buffer.concat([Buffer.from('SLEUTHLM'), Buffer.from(Uint32Array.of(header.length).buffer), header]);
    writeFileSync(junk, file);
    expect(() => loadSampler(junk)).toThrow(/format version 99 is not supported/);
    expect(() => createLocalBackend({ checkpoint: join(b.dir, 'missing.ckpt') })).toThrow(InputError);
  });
});
