import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureWasm, TEXTS, tinyTokenizer, datumFor } from './helpers.js';

// Worker threads run the compiled backend, so this test drives dist/ (built here if missing).
const DIST = join(process.cwd(), 'dist/src/backend/local/backend.js');

beforeAll(() => {
  ensureWasm();
  if (!existsSync(join(process.cwd(), 'dist/src/backend/local/gradient-worker.js'))) spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'ignore' });
});

describe('forwardBackward on two threads', () => {
  it('gives the same loss, logprobs and (to rounding) gradient as one thread', async () => {
    const { createLocalBackend } = (await import(DIST)) as typeof import('../../src/backend/local/backend.js');
    const tok = tinyTokenizer();
    const make = (threads: number) => createLocalBackend({ tokenizer: tok, config: { context: 64, dModel: 16, nLayers: 2, nHeads: 2 }, seed: 3, threads, dir: mkdtempSync(join(tmpdir(), 'sleuth-threads-')) });
    const one = make(1), two = make(2);
    expect(two.threads).toBe(2);
    const datums = TEXTS.map((t) => datumFor(tok.encode(t).slice(0, 40)));
    const lps = datums.map((d) => d.weights.map(() => -3));
    const rl = datums.map((d, i) => ({ ...d, logprobs: lps[i], advantages: d.weights.map((_, t) => (t % 2 ? 1 : -0.5)) }));
    try {
      for (const [data, loss] of [[datums, 'cross_entropy'], [rl, 'ppo']] as const) {
        // Same weights on both (after a step they differ by the gradients' rounding).
        two.model.params.a.set(one.model.params.a);
        const a = await one.forwardBackward([...data], loss);
        const b = await two.forwardBackward([...data], loss);
        expect(b.logprobs).toEqual(a.logprobs);
        expect(b.loss).toBeCloseTo(a.loss, 6);
        expect(Object.keys(b.metrics)).toEqual(Object.keys(a.metrics));
        const ga = one.model.grads!.a, gb = two.model.grads!.a;
        let worst = 0;
        for (let i = 0; i < ga.length; i++) worst = Math.max(worst, Math.abs(ga[i]! - gb[i]!) / (1e-3 + Math.abs(ga[i]!)));
        expect(worst).toBeLessThan(1e-3);
        expect(gb.some((x) => x !== 0)).toBe(true);
        const adam = { learningRate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 0 };
        await one.optimStep(adam);
        await two.optimStep(adam);
      }
    } finally {
      await two.close();
    }
  });

  it('splits a batch whose datums all share one prompt prefix, with the gradient of one thread', async () => {
    const { createLocalBackend } = (await import(DIST)) as typeof import('../../src/backend/local/backend.js');
    const { prefixGroups, splitByTokens } = (await import(join(process.cwd(), 'dist/src/backend/local/gradients.js'))) as typeof import('../../src/backend/local/gradients.js');
    const tok = tinyTokenizer();
    const make = (threads: number) => createLocalBackend({ tokenizer: tok, config: { context: 96, dModel: 16, nLayers: 2, nHeads: 2 }, seed: 5, threads, dir: mkdtempSync(join(tmpdir(), 'sleuth-threads-')) });
    const one = make(1), two = make(2);
    // A shared system prompt (weight 0), then each datum's own written text (weight 1).
    const system = tok.encode(TEXTS[1]!).slice(0, 24);
    const datums = [...TEXTS, ...TEXTS].map((t, i) => {
      const own = tok.encode(t).slice(i % 3, 20 + i);
      const seq = [...system, ...own];
      return { ...datumFor(seq), weights: seq.slice(1).map((_, j) => (j + 1 >= system.length ? 1 : 0)), logprobs: seq.slice(1).map(() => -3), advantages: seq.slice(1).map((_, j) => ((i + j) % 3) - 1) };
    });
    expect(prefixGroups(datums).length).toBe(1);
    expect(splitByTokens(datums, 2, two.trainRows).length).toBe(2);
    try {
      two.model.params.a.set(one.model.params.a);
      // Every shard runs in a worker: the main thread's model does no forward pass, so a trainer
      // can run the next batch's episodes on this thread meanwhile.
      let mainThreadForwards = 0;
      const forward = two.model.forward.bind(two.model);
      two.model.forward = (...args: Parameters<typeof forward>) => (mainThreadForwards++, forward(...args));
      const a = await one.forwardBackward(datums, 'importance_sampling');
      const b = await two.forwardBackward(datums, 'importance_sampling');
      expect(mainThreadForwards).toBe(0);
      expect(b.logprobs).toEqual(a.logprobs);
      expect(b.loss).toBeCloseTo(a.loss, 5);
      const ga = one.model.grads!.a, gb = two.model.grads!.a;
      let maxAbs = 0, maxDiff = 0;
      for (let i = 0; i < ga.length; i++) (maxAbs = Math.max(maxAbs, Math.abs(ga[i]!)), (maxDiff = Math.max(maxDiff, Math.abs(ga[i]! - gb[i]!))));
      expect(maxAbs).toBeGreaterThan(0);
      expect(maxDiff / maxAbs).toBeLessThan(2e-5);
      // More threads after the workers started: a worker per shard again, the same loss.
      two.threads = 3;
      expect(splitByTokens(datums, 3, two.trainRows).length).toBe(3);
      const c = await two.forwardBackward(datums, 'importance_sampling');
      expect(c.loss).toBeCloseTo(a.loss, 5);
    } finally {
      await two.close();
    }
  });
});
