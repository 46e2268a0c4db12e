import { beforeAll, describe, expect, it } from 'vitest';
import { TinkerBillingError, TinkerServerError } from '../../../src/backend/tinker/index.js';
import { parseFaults } from '../../../src/tinker-server/index.js';
import { ADAM, connect, directBackend, FAST, rlDatums, startServer, tinyCheckpoint } from './helpers.js';

let checkpoint: string;
beforeAll(async () => {
  checkpoint = await tinyCheckpoint();
});

const wireDatums = () =>
  rlDatums().map((d) => ({
    model_input: { chunks: [{ type: 'encoded_text', tokens: d.inputTokens }] },
    loss_fn_inputs: { target_tokens: { data: d.targetTokens, dtype: 'int64' }, weights: { data: d.weights, dtype: 'float32' }, logprobs: { data: d.logprobs, dtype: 'float32' }, advantages: { data: d.advantages, dtype: 'float32' } },
  }));

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const r = await fetch(`${url}/api/v1/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'tml-dummy', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown>, headers: r.headers };
}

describe('injected faults', () => {
  it('survives 429s, 5xx, try_again, a lost reply, a dropped connection, 410, 402 and a bare 400, applying each step once', async () => {
    const faults = parseFaults(
      [
        'retrieve_future:1=try_again', // create_model's first poll: pending
        'forward_backward:1=429@0.05', // retry-after in seconds
        'forward_backward:2=drop', // connection cut before the request is read
        'retrieve_future:3=500',
        'optim_step:1=lose', // carried out, reply lost: the retry must not step twice
        'optim_step:2=503',
        'retrieve_future:5=410', // the optim_step future expired: resubmitted with the same seq_id
        'retrieve_future:7=400', // a bare 400 (a proxy's): retried
        'asample:1=402',
        'asample:2=429@20ms', // retry-after-ms
      ].join(','),
    );
    const { server, url } = await startServer(checkpoint, { faults });
    try {
      const direct = directBackend(checkpoint);
      const remote = await connect(url);
      for (let step = 0; step < 2; step++) {
        const a = direct.forwardBackwardSync(rlDatums(), 'importance_sampling');
        const b = await remote.forwardBackward(rlDatums(), 'importance_sampling');
        expect(b.logprobs).toEqual(a.logprobs);
        direct.optimStepSync(ADAM);
        expect((await remote.optimStep(ADAM)).metrics['step']).toBe(step + 1);
      }
      const served = server.models.get(remote.modelId)!.backend;
      expect(served.step).toBe(2);
      expect(Array.from(served.model.params.a)).toEqual(Array.from(direct.model.params.a));
      const sampler = await remote.saveWeightsForSampler('s');
      const out = await sampler.sample([5, 40, 41], { maxTokens: 4, temperature: 1, seed: 3 });
      expect(out[0]!.logprobs).toHaveLength(out[0]!.tokens.length);
      // Every fault fired: the counts include the retried requests.
      const c = (e: string) => server.requestCounts.get(e) ?? 0;
      expect(c('forward_backward')).toBe(4);
      // Step 1: lost, 503, replayed by its idempotency key, resubmitted after the 410; step 2: once.
      expect(c('optim_step')).toBe(5);
      expect(c('asample')).toBe(3);
      expect(c('retrieve_future')).toBeGreaterThanOrEqual(11);
      remote.close();
    } finally {
      await server.close();
    }
  });

  it('SkyRL dialect: 408 polls, dropped polls and 5xx are survived; a lost training request is not sent twice', async () => {
    const { server, url } = await startServer(checkpoint, { flavor: 'skyrl', faults: parseFaults('retrieve_future:2=try_again,retrieve_future:3=drop,retrieve_future:4=502,optim_step:2=lose') });
    try {
      const remote = await connect(url);
      await remote.forwardBackward(rlDatums(), 'importance_sampling');
      expect((await remote.optimStep(ADAM)).metrics['step']).toBe(1);
      // SkyRL ignores idempotency keys: a retry of the lost optim_step would step twice, so it is an error.
      const lost = await remote.optimStep(ADAM).catch((e: unknown) => e);
      expect(lost).toBeInstanceOf(TinkerServerError);
      expect((lost as Error).message).toMatch(/optim_step: .*not retried: the request may have run, and this server does not honour idempotency keys/);
      expect(server.requestCounts.get('optim_step')).toBe(2);
      expect(server.models.get(remote.modelId)!.backend.step).toBe(2);
      remote.close();
    } finally {
      await server.close();
    }
  });

  it('gives up with a clear error when the server keeps failing or billing stays paused', async () => {
    const { server, url } = await startServer(checkpoint, { faults: parseFaults('optim_step:1=500,optim_step:2=500,optim_step:3=500,asample:1=402,asample:2=402,asample:3=402,asample:4=402') });
    try {
      const remote = await connect(url, { http: { ...FAST, maxRetries: 2, billingMaxPauseMs: 30 } });
      const e = await remote.optimStep(ADAM).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(TinkerServerError);
      expect((e as Error).message).toMatch(/optim_step: HTTP 500: injected fault 500 \(gave up after 3 attempts\)/);
      // That seq_id never reached the server: later requests would wait on it, so they are refused.
      await expect(remote.forwardBackward(rlDatums(), 'importance_sampling')).rejects.toThrow(/an earlier request of model .* could not be submitted \(optim_step seq_id 1/);
      const sampler = remote.samplerFor('base');
      const b = await sampler.sample([5, 40], { maxTokens: 2, temperature: 1 }).catch((x: unknown) => x);
      expect(b).toBeInstanceOf(TinkerBillingError);
      expect((b as Error).message).toMatch(/billing is paused \(HTTP 402\)/);
      remote.close();
    } finally {
      await server.close();
    }
  });

  it('orders a model\'s requests by seq_id, dedups (model_id, seq_id), and replays idempotency keys', async () => {
    const { server, url } = await startServer(checkpoint);
    try {
      const session = await post(url, 'create_session', { tags: [] }, { 'x-idempotency-key': 'k1' });
      const replay = await post(url, 'create_session', { tags: [] }, { 'x-idempotency-key': 'k1' });
      const other = await post(url, 'create_session', { tags: [] }, { 'x-idempotency-key': 'k2' });
      expect(replay.body['session_id']).toBe(session.body['session_id']);
      expect(other.body['session_id']).not.toBe(session.body['session_id']);
      const sid = session.body['session_id'] as string;
      const created = await post(url, 'create_model', { session_id: sid, model_seq_id: 0, base_model: 'base', lora_config: { rank: 4 } });
      const modelId = created.body['model_id'] as string;
      // seq 2 (optim_step) arrives before seq 1 (forward_backward): it waits for it.
      const opt = await post(url, 'optim_step', { model_id: modelId, seq_id: 2, adam_params: { learning_rate: 0.01 } });
      const fb = await post(url, 'forward_backward', { model_id: modelId, seq_id: 1, forward_backward_input: { data: wireDatums(), loss_fn: 'importance_sampling' } });
      const poll = (id: unknown) => post(url, 'retrieve_future', { request_id: id });
      let optResult = await poll(opt.body['request_id']);
      while (optResult.body['type'] === 'try_again') optResult = await poll(opt.body['request_id']);
      expect((optResult.body['metrics'] as Record<string, number>)['datums']).toBe(3);
      expect((await poll(fb.body['request_id'])).body['loss_fn_outputs']).toHaveLength(3);
      // The same (model_id, seq_id) and body: the original result. A different body: 409, not retried.
      const again = await post(url, 'optim_step', { model_id: modelId, seq_id: 2, adam_params: { learning_rate: 0.01 } });
      expect((await poll(again.body['request_id'])).body).toEqual(optResult.body);
      const clash = await post(url, 'optim_step', { model_id: modelId, seq_id: 2, adam_params: { learning_rate: 0.5 } });
      expect(clash.status).toBe(409);
      expect(clash.headers.get('x-should-retry')).toBe('false');
      expect(server.models.get(modelId)!.backend.step).toBe(1);
      // Unknown futures and endpoints are 404s; a missing key is a 401.
      expect((await poll('req_nope')).status).toBe(404);
      expect((await post(url, 'nope', {})).status).toBe(404);
      expect((await fetch(`${url}/api/v1/healthz`)).status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it('enforces the SkyRL dialect: lora_config, max_tokens and stop as a list are required', async () => {
    const { server, url } = await startServer(checkpoint, { flavor: 'skyrl' });
    try {
      const sid = (await post(url, 'create_session', { tags: [] })).body['session_id'];
      const noLora = await post(url, 'create_model', { session_id: sid, model_seq_id: 0, base_model: 'base' });
      expect(noLora.status).toBe(422);
      expect(noLora.body['detail']).toMatch(/lora_config is required/);
      const prompt = { chunks: [{ type: 'encoded_text', tokens: [5, 40] }] };
      const noMax = await post(url, 'asample', { prompt, base_model: 'base', sampling_params: { temperature: 1 } });
      expect(noMax.body['detail']).toMatch(/max_tokens is required/);
      const stopString = await post(url, 'asample', { prompt, base_model: 'base', sampling_params: { max_tokens: 2, stop: '<|end|>' } });
      expect(stopString.body['detail']).toMatch(/stop must be a list/);
      // A pending or failed future: 408 / 400 {detail} rather than try_again / 200 {error}.
      const model = await post(url, 'create_model', { session_id: sid, model_seq_id: 0, base_model: 'base', lora_config: { rank: 4 } });
      expect(model.body['status']).toBe('pending');
      const data = wireDatums();
      data[0]!.model_input.chunks[0]!.tokens[1] = 99_999;
      const bad = await post(url, 'forward_backward', { model_id: model.body['model_id'], seq_id: 1, forward_backward_input: { data, loss_fn: 'importance_sampling' } });
      let failed = await post(url, 'retrieve_future', { request_id: bad.body['request_id'] });
      while (failed.status === 408) failed = await post(url, 'retrieve_future', { request_id: bad.body['request_id'] });
      expect(failed.status).toBe(400);
      expect(failed.body['detail']).toMatch(/datum 0: inputTokens\[1\] = 99999 is not a token id/);
    } finally {
      await server.close();
    }
  });

  it('rejects malformed fault scripts, naming the rule', () => {
    expect(parseFaults('forward_backward:2=429@1.5,optim_step:1=lose,asample:3=503@200ms')).toEqual([
      { endpoint: 'forward_backward', nth: 2, fault: '429', retryAfter: { seconds: 1.5 } },
      { endpoint: 'optim_step', nth: 1, fault: 'lose' },
      { endpoint: 'asample', nth: 3, fault: '503', retryAfter: { ms: 200 } },
    ]);
    expect(() => parseFaults('optim_step=lose', '--faults')).toThrow(/--faults: rule 'optim_step=lose' must look like ENDPOINT:NTH=FAULT/);
    expect(() => parseFaults('optim_step:1=explode')).toThrow(/unknown fault 'explode'/);
    expect(() => parseFaults('optim_step:0=lose')).toThrow(/NTH counts from 1/);
  });
});
