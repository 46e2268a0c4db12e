import { beforeAll, describe, expect, it } from 'vitest';
import { TinkerRequestError } from '../../../src/backend/tinker/index.js';
import { parseFaults } from '../../../src/tinker-server/index.js';
import { ADAM, connect, directBackend, rlDatums, startServer, tinyCheckpoint } from './helpers.js';

/**
 * sleuth's Tinker client against SkyRL tx as it really behaves (its 0.3.0 request models and
 * handlers), replayed by `serve-tinker --flavor skyrl`: 422 for cispo, 409 "already exists" for a
 * save whose name is taken (a retried save included), prompt_logprobs without the first token,
 * loss_fn_config and grad_clip_norm ignored.
 */

let checkpoint: string;
beforeAll(async () => {
  checkpoint = await tinyCheckpoint();
});

describe('sleuth client vs SkyRL behaviour', () => {
  it('cispo: a 422 names the loss, and the model keeps working', async () => {
    const { server, url } = await startServer(checkpoint, { flavor: 'skyrl' });
    try {
      const remote = await connect(url);
      const e = await remote.forwardBackward(rlDatums(), 'cispo').catch((x: unknown) => x);
      expect(e).toBeInstanceOf(TinkerRequestError);
      expect((e as Error).message).toMatch(/does not accept loss_fn 'cispo' \(.*HTTP 422.*\); SkyRL tx 0\.3\.0 has no cispo/);
      const r = await remote.forwardBackward(rlDatums(), 'importance_sampling');
      expect(r.logprobs).toHaveLength(3);
      expect((await remote.optimStep(ADAM)).metrics['step']).toBe(1);
      remote.close();
    } finally {
      await server.close();
    }
  });

  it('a retried save answered 409 is the first attempt having saved; a name reused is an error', async () => {
    const { server, url } = await startServer(checkpoint, { flavor: 'skyrl', faults: parseFaults('save_weights:1=lose,save_weights_for_sampler:1=lose') });
    try {
      const remote = await connect(url);
      await remote.forwardBackward(rlDatums(), 'importance_sampling');
      await remote.optimStep(ADAM);
      // The first save ran and its reply was lost; the retry got 409 "already exists".
      const path = await remote.saveState('ckpt');
      expect(path).toBe(`tinker://${remote.modelId}/weights/ckpt`);
      expect(server.requestCounts.get('save_weights')).toBe(2);
      const sampler = await remote.saveWeightsForSampler('samp');
      expect(sampler.modelPath).toBe(`tinker://${remote.modelId}/samp`);
      const [seq] = await sampler.sample([5, 40], { maxTokens: 3, temperature: 1, seed: 2 });
      expect(seq!.logprobs).toHaveLength(seq!.tokens.length);
      // The saved weights are the trained ones: a fresh model loads them and agrees.
      const loaded = await connect(url);
      await loaded.loadState(path);
      const a = await remote.forwardBackward(rlDatums(), 'importance_sampling');
      const b = await loaded.forwardBackward(rlDatums(), 'importance_sampling');
      expect(b.logprobs).toEqual(a.logprobs);
      // Saving under a used name again is not a retry: an error naming the clash.
      await expect(remote.saveState('ckpt')).rejects.toThrow(/a checkpoint named 'ckpt' already exists on the server/);
      for (const r of [remote, loaded]) r.close();
    } finally {
      await server.close();
    }
  });

  it('prompt_logprobs of prompt_len - 1 values (no leading null) give the same compute_logprobs as hosted', async () => {
    const { server: sky, url: skyUrl } = await startServer(checkpoint, { flavor: 'skyrl' });
    const { server: hosted, url: hostedUrl } = await startServer(checkpoint);
    try {
      const tokens = [5, 40, 41, 42, 43];
      const raw = await fetch(`${skyUrl}/api/v1/asample`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k' }, body: JSON.stringify({ base_model: 'base', prompt: { chunks: [{ type: 'encoded_text', tokens }] }, sampling_params: { max_tokens: 1 }, prompt_logprobs: true }) });
      const future = (await raw.json()) as { request_id: string };
      let res = await fetch(`${skyUrl}/api/v1/retrieve_future`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k' }, body: JSON.stringify({ request_id: future.request_id }) });
      while (res.status === 408) res = await fetch(`${skyUrl}/api/v1/retrieve_future`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k' }, body: JSON.stringify({ request_id: future.request_id }) });
      expect(((await res.json()) as { prompt_logprobs: number[] }).prompt_logprobs).toHaveLength(tokens.length - 1);
      const fromSky = await (await connect(skyUrl)).samplerFor('base').computeLogprobs(tokens);
      const fromHosted = await (await connect(hostedUrl)).samplerFor('base').computeLogprobs(tokens);
      expect(fromSky).toEqual(fromHosted);
      expect(fromSky[0]).toBeNull();
      expect(fromSky.slice(1)).toEqual((await directBackend(checkpoint).samplerInMemory().computeLogprobs(tokens)).slice(1));
    } finally {
      await sky.close();
      await hosted.close();
    }
  });

  it('refuses clip thresholds and gradient clipping that SkyRL would silently ignore', async () => {
    const { server, url } = await startServer(checkpoint, { flavor: 'skyrl' });
    try {
      const remote = await connect(url);
      await expect(remote.forwardBackward(rlDatums(), 'ppo', { clipLowThreshold: 0.9, clipHighThreshold: 1.1 })).rejects.toThrow(/SkyRL ignores loss_fn_config/);
      await expect(remote.optimStep({ ...ADAM, gradClipNorm: 1 })).rejects.toThrow(/SkyRL ignores adam_params\.grad_clip_norm/);
      // Nothing was sent: the model's first request still runs.
      expect((await remote.forwardBackward(rlDatums(), 'ppo')).logprobs).toHaveLength(3);
      remote.close();
    } finally {
      await server.close();
    }
  });
});
