import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalBackend } from '../../src/backend/local/backend.js';
import type { SampledSequence, Sampler, SamplingParams } from '../../src/backend/types.js';
import { ensureWasm, TEXTS, tinyBackend, tinyTokenizer } from './helpers.js';

// The worker-thread case drives dist/ (worker threads run the compiled backend), built here if missing.
const DIST = join(process.cwd(), 'dist/src/backend/local/backend.js');

beforeAll(() => {
  ensureWasm();
  if (!existsSync(join(process.cwd(), 'dist/src/backend/local/sampler-worker.js'))) spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'ignore' });
});

const tok = tinyTokenizer();
const ids = TEXTS.flatMap((t) => tok.encode(t));

/** Requests as a trainer makes them: a group sharing a prompt, several samples, stop tokens, budgets, greedy, top-k/top-p. */
function requests(): { prompt: number[]; params: SamplingParams; n: number }[] {
  const out: { prompt: number[]; params: SamplingParams; n: number }[] = [];
  for (let g = 0; g < 3; g++) for (let j = 0; j < 4; j++) out.push({ prompt: ids.slice(g * 7, g * 7 + 12), params: { maxTokens: 10 + j * 3, temperature: 1, seed: 100 * g + j }, n: 1 });
  out.push({ prompt: ids.slice(3, 9), params: { maxTokens: 8, temperature: 1, seed: 5 }, n: 3 });
  out.push({ prompt: ids.slice(1, 5), params: { maxTokens: 12, temperature: 1, seed: 6, stop: Array.from({ length: 107 }, (_, i) => 3 * i) }, n: 2 });
  out.push({ prompt: ids.slice(0, 20), params: { maxTokens: 6, temperature: 0 }, n: 1 });
  out.push({ prompt: ids.slice(10, 30), params: { maxTokens: 9, temperature: 0.7, topK: 5, topP: 0.9, seed: 8, topLogprobs: 3 }, n: 1 });
  return out;
}

/** All requests at once on the batched sampler, then an episode's next turn resuming from the first results. */
async function batchedVsSingle(b: LocalBackend, batched: Sampler): Promise<void> {
  const single = b.samplerInMemory('single');
  const reqs = requests();
  const got = await Promise.all(reqs.map((r) => batched.sample(r.prompt, r.params, r.n)));
  const want = reqs.map((r) => single.sampleSync(r.prompt, r.params, r.n));
  expect(got).toEqual(want);
  expect(got.flat().some((s) => s.stopReason === 'stop')).toBe(true);
  // Next turns: each first-round episode plus inserted tokens (its slot's KV rows are reused).
  const next = reqs.slice(0, 8).map((r, i) => ({ prompt: [...r.prompt, ...got[i]![0]!.tokens, ...ids.slice(40, 45)], params: { ...r.params, seed: r.params.seed! + 1 } }));
  const got2 = await Promise.all(next.map((r) => batched.sample(r.prompt, r.params)));
  expect(got2).toEqual(next.map((r) => single.sampleSync(r.prompt, r.params)));
  // The logprobs are the learner's, bit for bit (temperature 1).
  for (const [i, r] of next.entries()) {
    const s: SampledSequence = got2[i]![0]!;
    expect((await single.computeLogprobs([...r.prompt, ...s.tokens])).slice(r.prompt.length)).toEqual(s.logprobs);
  }
}

describe('batched decoding', () => {
  it('gives the same tokens and logprobs as single decoding for fixed seeds (one thread)', async () => {
    const b = tinyBackend(tok, { context: 96, dModel: 16, nLayers: 2, nHeads: 2 });
    await batchedVsSingle(b, b.batchSampler('batched'));
    await b.close();
  });

  it('gives the same tokens and logprobs in worker threads, and after new weights', async () => {
    const { createLocalBackend } = (await import(DIST)) as typeof import('../../src/backend/local/backend.js');
    const b = createLocalBackend({ tokenizer: tok, config: { context: 96, dModel: 16, nLayers: 2, nHeads: 2 }, seed: 4, dir: mkdtempSync(join(tmpdir(), 'sleuth-batch-')) });
    try {
      const first = await b.saveWeightsForSampler('w0');
      expect(first.constructor.name).toBe('BatchSampler');
      await batchedVsSingle(b, first);
      expect((first as { rowsRun: number }).rowsRun).toBeGreaterThan(0);
      // New weights: the workers load them, and the old sampler still answers with its own.
      for (let i = 0; i < b.model.params.a.length; i += 7) b.model.params.a[i]! += 0.05;
      const second = await b.saveWeightsForSampler('w1');
      await batchedVsSingle(b, second);
      const r = requests()[0]!;
      const old = await first.sample(r.prompt, r.params);
      expect(old).not.toEqual(await second.sample(r.prompt, r.params));
    } finally {
      await b.close();
    }
  });

  it('spreads requests over both workers when every prompt shares the system prompt', async () => {
    const { createLocalBackend } = (await import(DIST)) as typeof import('../../src/backend/local/backend.js');
    const { WorkerHost } = (await import(join(process.cwd(), 'dist/src/backend/local/batch-sampler.js'))) as typeof import('../../src/backend/local/batch-sampler.js');
    const b = createLocalBackend({ tokenizer: tok, config: { context: 96, dModel: 16, nLayers: 2, nHeads: 2 }, seed: 4, dir: mkdtempSync(join(tmpdir(), 'sleuth-batch-')) });
    const host = new WorkerHost(b.config, tok, 'auto', 2);
    const system = ids.slice(0, 40);
    const sampling = (seed: number) => ({ maxTokens: 6, temperature: 1, seed });
    try {
      // One episode first, so that a worker holds the system prompt; then 8 episodes at once (the
      // trainer's concurrency), two groups of 4 sharing a question, and their second turns.
      await host.decode(1, b.model.params.a, [...system, ...ids.slice(60, 70)], sampling(1), 1);
      const prompts = Array.from({ length: 8 }, (_, i) => [...system, ...ids.slice(70 + 10 * (i % 2), 80 + 10 * (i % 2))]);
      const first = await Promise.all(prompts.map((p, i) => host.decode(1, b.model.params.a, p, sampling(10 + i), 1)));
      await Promise.all(prompts.map((p, i) => host.decode(1, b.model.params.a, [...p, ...first[i]![0]!.tokens, ...ids.slice(100, 105)], sampling(20 + i), 1)));
      const perWorker = host.requestsPerWorker;
      expect(perWorker.reduce((a, n) => a + n, 0)).toBe(17);
      // Both workers take a real share (the old routing sent every one of them to worker 0).
      expect(Math.min(...perWorker)).toBeGreaterThanOrEqual(5);
    } finally {
      await host.close();
      await b.close();
    }
  });
});
