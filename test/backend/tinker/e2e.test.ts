import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TinkerServer } from '../../../src/tinker-server/index.js';
import { TinkerAuthError, TinkerRequestError, createTinkerBackend } from '../../../src/backend/tinker/index.js';
import { InputError } from '../../../src/errors.js';
import { resolveModelAgent } from '../../../src/cli/agents.js';
import type { TokenAgent } from '../../../src/agent/token-agent.js';
import { readCheckpoint } from '../../../src/backend/local/checkpoint.js';
import { BpeTokenizer } from '../../../src/protocol/compact/bpe.js';
import { CompactRenderer } from '../../../src/protocol/compact/renderer.js';
import { registerRenderer } from '../../../src/protocol/registry.js';
import { ADAM, connect, directBackend, FAST, rlDatums, startServer, tinyCheckpoint } from './helpers.js';

let checkpoint: string;
let server: TinkerServer;
let url: string;

beforeAll(async () => {
  checkpoint = await tinyCheckpoint();
  ({ server, url } = await startServer(checkpoint));
});
afterAll(async () => {
  await server.close();
});

describe('Tinker client against serve-tinker (hosted dialect)', () => {
  it('forward_backward + optim_step over HTTP train exactly as the local backend does', async () => {
    const direct = directBackend(checkpoint);
    const remote = await connect(url);
    expect(remote.flavor).toBe('tinker');
    for (let step = 0; step < 2; step++) {
      const a = direct.forwardBackwardSync(rlDatums(), 'importance_sampling');
      const b = await remote.forwardBackward(rlDatums(), 'importance_sampling');
      expect(b.logprobs).toEqual(a.logprobs);
      expect(b.loss).toBe(a.loss);
      expect(b.metrics['tokens:sum']).toBe(a.metrics['tokens:sum']);
      expect(b.metrics['ratio:mean']).toBeCloseTo(a.metrics['ratio:mean']!, 12);
      direct.optimStepSync(ADAM);
      const opt = await remote.optimStep(ADAM);
      expect(opt.metrics['step']).toBe(step + 1);
      expect(opt.metrics['tinker/train_tokens']).toBe(rlDatums().reduce((s, d) => s + d.inputTokens.length, 0) * (step + 1));
    }
    // The weights moved, and identically.
    const served = server.models.get(remote.modelId)!.backend;
    expect(Array.from(served.model.params.a)).toEqual(Array.from(direct.model.params.a));
    expect(served.step).toBe(2);
    remote.close();
  });

  it('pipelines forward_backward and optim_step, and chunks big batches, with the same result', async () => {
    const direct = directBackend(checkpoint);
    const remote = await connect(url, { maxChunkDatums: 1 });
    const a = direct.forwardBackwardSync(rlDatums(), 'ppo', { clipLowThreshold: 0.9, clipHighThreshold: 1.1 });
    direct.optimStepSync(ADAM);
    const before = server.requestCounts.get('forward_backward') ?? 0;
    const r = await remote.forwardBackwardAndStep(rlDatums(), 'ppo', { clipLowThreshold: 0.9, clipHighThreshold: 1.1 }, ADAM);
    expect((server.requestCounts.get('forward_backward') ?? 0) - before).toBe(3);
    expect(r.forwardBackward.logprobs).toEqual(a.logprobs);
    expect(r.forwardBackward.loss).toBe(a.loss);
    expect(r.optim.metrics['step']).toBe(1);
    expect(Array.from(server.models.get(remote.modelId)!.backend.model.params.a)).toEqual(Array.from(direct.model.params.a));
    remote.close();
  });

  it('splits a batch by estimated request size as well as by datum count', async () => {
    const direct = directBackend(checkpoint);
    const remote = await connect(url, { maxChunkBytes: 600 });
    const before = server.requestCounts.get('forward_backward') ?? 0;
    const r = await remote.forwardBackward(rlDatums(), 'importance_sampling');
    // Each datum's JSON is over 300 bytes: no two fit one 600-byte request.
    expect((server.requestCounts.get('forward_backward') ?? 0) - before).toBe(3);
    expect(r.logprobs).toEqual(direct.forwardBackwardSync(rlDatums(), 'importance_sampling').logprobs);
    remote.close();
  });

  it('resolves the agent spec tinker:MODEL@URL to a token agent sampling on the server', async () => {
    await import('../../../src/backend/tinker/agent.js');
    const tok = new BpeTokenizer(readCheckpoint(checkpoint).header.tokenizer);
    registerRenderer('tinker-test-compact', () => new CompactRenderer(tok));
    const agent = (await resolveModelAgent(`tinker:base@${url}`, { renderer: 'tinker-test-compact', temperature: 1, seed: 2 })) as TokenAgent;
    expect(agent.renderer.name).toBe('compact');
    expect(agent.sampler.modelPath).toBe('base');
    const [s] = await agent.sampler.sample([5, 40, 41], { maxTokens: 3, temperature: 1, seed: 2 });
    expect(s!.logprobs).toHaveLength(s!.tokens.length);
    await expect(resolveModelAgent(`tinker:mystery-model@${url}`)).rejects.toThrow(/cannot tell the renderer from 'mystery-model'/);
    const other = (await resolveModelAgent(`tinker:other-model@${url}`, { renderer: 'tinker-test-compact' })) as TokenAgent;
    await expect(other.sampler.sample([5, 40], { maxTokens: 2, temperature: 1 })).rejects.toThrow(/base_model 'other-model' is not served here/);
  });

  it("passes the context's temperature on: at 0 a tinker: agent samples greedily, whatever the seed (issue 50, point 1)", async () => {
    // The renderer the test above registered.
    const agent = (await resolveModelAgent(`tinker:base@${url}`, { renderer: 'tinker-test-compact', temperature: 0 })) as TokenAgent;
    expect(agent.sampling.temperature).toBe(0);
    const draw = async (seed: number) => (await agent.sampler.sample([5, 40, 41], { maxTokens: 8, temperature: agent.sampling.temperature, seed }))[0]!.tokens;
    expect(await draw(1)).toEqual(await draw(2));
  });

  it('samples tokens with logprobs from saved sampler weights (named and ephemeral)', async () => {
    const remote = await connect(url);
    await remote.forwardBackward(rlDatums(), 'importance_sampling');
    await remote.optimStep(ADAM);
    const sampler = await remote.saveWeightsForSampler('after-one');
    expect(sampler.modelPath).toBe(`tinker://${remote.modelId}/sampler_weights/after-one`);
    const prompt = [5, 40, 41, 42];
    const seqs = await sampler.sample(prompt, { maxTokens: 6, temperature: 1, seed: 11 }, 3);
    expect(seqs).toHaveLength(3);
    for (const s of seqs) {
      expect(s.tokens.length).toBeGreaterThan(0);
      expect(s.tokens.length).toBeLessThanOrEqual(6);
      expect(s.logprobs).toHaveLength(s.tokens.length);
      for (const lp of s.logprobs) expect(lp).toBeLessThan(0);
    }
    // Sampled logprobs at temperature 1 are the model's logprobs of those tokens.
    const s0 = seqs[0]!;
    const lps = await sampler.computeLogprobs([...prompt, ...s0.tokens]);
    expect(lps[0]).toBeNull();
    lps.slice(prompt.length).forEach((lp, i) => expect(lp).toBeCloseTo(s0.logprobs[i]!, 5));
    // A stop token ends the sequence and is included.
    const stopAt = s0.tokens[0]!;
    const stopped = await sampler.sample(prompt, { maxTokens: 6, temperature: 1, seed: 11, stop: [stopAt] });
    expect(stopped[0]!.tokens).toEqual([stopAt]);
    expect(stopped[0]!.stopReason).toBe('stop');
    // The same weights through an ephemeral sampling session.
    const eph = await connect(url, { samplerWeights: 'ephemeral' });
    await eph.forwardBackward(rlDatums(), 'importance_sampling');
    await eph.optimStep(ADAM);
    const es = await eph.saveWeightsForSampler('eph');
    const same = await es.sample(prompt, { maxTokens: 6, temperature: 1, seed: 11 }, 3);
    expect(same).toEqual(seqs);
    expect(remote.usage().sampleTokens).toBeGreaterThan(0);
    remote.close();
    eph.close();
  });

  it('saves and loads state: a loaded model continues exactly where the saved one was', async () => {
    const remote = await connect(url);
    await remote.forwardBackward(rlDatums(), 'importance_sampling');
    await remote.optimStep(ADAM);
    const path = await remote.saveState('one');
    expect(path).toBe(`tinker://${remote.modelId}/weights/one`);
    // Continue from the saved state twice: once in the same model, once after loading it.
    const cont = await remote.forwardBackward(rlDatums(), 'importance_sampling');
    await remote.optimStep(ADAM);
    const first = remote.modelId;
    await remote.loadState(path);
    expect(remote.modelId).not.toBe(first);
    const again = await remote.forwardBackward(rlDatums(), 'importance_sampling');
    expect(again.logprobs).toEqual(cont.logprobs);
    const o = await remote.optimStep(ADAM);
    expect(o.metrics['step']).toBe(2);
    expect(Array.from(server.models.get(remote.modelId)!.backend.model.params.a)).toEqual(Array.from(server.models.get(first)!.backend.model.params.a));
    // A fresh client (a resumed run) loads it as its model's first request.
    const fresh = await connect(url);
    await fresh.loadState(path);
    expect((await fresh.forwardBackward(rlDatums(), 'importance_sampling')).logprobs).toEqual(cont.logprobs);
    await expect(fresh.loadState('tinker://nope/weights/missing')).rejects.toThrow(/no such checkpoint/);
    remote.close();
    fresh.close();
  });

  it('reports bad requests, failed futures and auth failures clearly, and never shows the key', async () => {
    await expect(connect(url, { baseModel: 'Qwen/Qwen3-8B' })).rejects.toThrow(/base_model 'Qwen\/Qwen3-8B' is not served here; this server serves 'base'/);
    const remote = await connect(url);
    const bad = rlDatums();
    bad[0]!.targetTokens[3] = 99_999;
    const err = await remote.forwardBackward(bad, 'importance_sampling').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TinkerRequestError);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/datum 0: targetTokens\[3\] = 99999 is not a token id/);
    // Client-side checks fail before anything is sent.
    await expect(remote.forwardBackward([{ ...rlDatums()[0]!, advantages: undefined }], 'ppo')).rejects.toThrow(/datum 0: ppo needs logprobs and advantages/);
    await expect(remote.saveState('bad name')).rejects.toThrow(/name 'bad name'/);
    remote.close();

    const { server: locked, url: lockedUrl } = await startServer(checkpoint, { apiKey: 'tml-right' });
    const secret = 'tml-wrong-secret-123';
    process.env['SLEUTH_TEST_TINKER_KEY'] = secret;
    try {
      const e = await createTinkerBackend({ baseUrl: lockedUrl, baseModel: 'base', loraRank: 8, apiKeyEnv: 'SLEUTH_TEST_TINKER_KEY', http: FAST, log: () => {} }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(TinkerAuthError);
      expect((e as Error).message).toMatch(/HTTP 401.*authentication failed/);
      expect((e as Error).message).not.toContain(secret);
      delete process.env['SLEUTH_TEST_TINKER_KEY'];
      await expect(createTinkerBackend({ baseUrl: lockedUrl, baseModel: 'base', loraRank: 8, apiKeyEnv: 'SLEUTH_TEST_TINKER_KEY' })).rejects.toThrow(/no API key: set SLEUTH_TEST_TINKER_KEY/);
      const saved = process.env['TINKER_API_KEY'];
      delete process.env['TINKER_API_KEY'];
      await expect(createTinkerBackend({ baseUrl: 'https://tinker.thinkingmachines.dev/services/tinker-prod', baseModel: 'openai/gpt-oss-20b', loraRank: 32 })).rejects.toThrow(/set TINKER_API_KEY/);
      if (saved !== undefined) process.env['TINKER_API_KEY'] = saved;
      await expect(createTinkerBackend({ baseUrl: 'ftp://x', baseModel: 'b', loraRank: 8 })).rejects.toThrow(/--base-url 'ftp:\/\/x' must be http/);
    } finally {
      delete process.env['SLEUTH_TEST_TINKER_KEY'];
      await locked.close();
    }
  });

  it('sends a session heartbeat until closed', async () => {
    const beats = () => server.requestCounts.get('session_heartbeat') ?? 0;
    const before = beats();
    const remote = await connect(url, { http: { ...FAST, heartbeatMs: 20 } });
    // Wait for two beats (however slow the machine); no timing is asserted.
    while (beats() < before + 2) await new Promise((r) => setTimeout(r, 10));
    remote.close();
    await new Promise((r) => setTimeout(r, 300));
    const after = beats();
    await new Promise((r) => setTimeout(r, 300));
    expect(beats()).toBe(after);
  });
});

describe('SkyRL dialect', () => {
  it("reproduces the hosted sum by scaling advantages (reduction 'sum'), and differs without it", async () => {
    const { server: sky, url: skyUrl } = await startServer(checkpoint, { flavor: 'skyrl' });
    try {
      const direct = directBackend(checkpoint);
      const remote = await connect(skyUrl);
      expect(remote.flavor).toBe('skyrl');
      for (let step = 0; step < 2; step++) {
        const a = direct.forwardBackwardSync(rlDatums(), 'importance_sampling');
        const b = await remote.forwardBackward(rlDatums(), 'importance_sampling');
        b.logprobs.forEach((row, i) => row.forEach((lp, t) => expect(lp).toBeCloseTo(a.logprobs[i]![t]!, 4)));
        expect(b.loss).toBeCloseTo(a.loss, 4);
        direct.optimStepSync(ADAM);
        await remote.optimStep(ADAM);
      }
      const served = sky.models.get(remote.modelId)!.backend.model.params.a;
      const ref = direct.model.params.a;
      let maxDiff = 0, moved = 0;
      const base = directBackend(checkpoint).model.params.a;
      for (let i = 0; i < ref.length; i++) {
        maxDiff = Math.max(maxDiff, Math.abs(served[i]! - ref[i]!));
        moved = Math.max(moved, Math.abs(ref[i]! - base[i]!));
      }
      expect(moved).toBeGreaterThan(1e-3);
      expect(maxDiff).toBeLessThan(moved * 1e-2);

      // reduction 'server': SkyRL's own token-mean, sequence-mean objective: a different update.
      const native = await connect(skyUrl, { reduction: 'server' });
      await native.forwardBackward(rlDatums(), 'importance_sampling');
      await native.optimStep({ ...ADAM, eps: 1e-3 });
      const hosted = await connect(skyUrl);
      await hosted.forwardBackward(rlDatums(), 'importance_sampling');
      await hosted.optimStep({ ...ADAM, eps: 1e-3 });
      const p1 = sky.models.get(native.modelId)!.backend.model.params.a, p2 = sky.models.get(hosted.modelId)!.backend.model.params.a;
      let diff = 0;
      for (let i = 0; i < p1.length; i++) diff = Math.max(diff, Math.abs(p1[i]! - p2[i]!));
      expect(diff).toBeGreaterThan(1e-6);

      // SkyRL-shaped paths, 400 {detail} failures, and cross_entropy under 'sum' refused.
      const s = await remote.saveWeightsForSampler('sky');
      expect(s.modelPath).toBe(`tinker://${remote.modelId}/sky`);
      expect((await s.sample([5, 40], { maxTokens: 3, temperature: 1, seed: 1 }))[0]!.logprobs).toHaveLength((await s.sample([5, 40], { maxTokens: 3, temperature: 1, seed: 1 }))[0]!.tokens.length);
      const bad = rlDatums();
      bad[1]!.inputTokens[0] = 77_777;
      await expect(remote.forwardBackward(bad, 'importance_sampling')).rejects.toThrow(/forward_backward failed: .*inputTokens\[0\] = 77777/);
      await expect(remote.forwardBackward(rlDatums(), 'cross_entropy')).rejects.toThrow(/reduction 'server' for cross_entropy/);
      for (const b of [remote, native, hosted]) b.close();
    } finally {
      await sky.close();
    }
  });
});
