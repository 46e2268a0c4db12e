import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeSampleResponse, PROTO_CONTENT_TYPE } from '../../src/tinker-server/proto.js';
import { TinkerServer } from '../../src/tinker-server/index.js';
import { directBackend, rlDatums, startServer, tempDir, tinyCheckpoint } from '../backend/tinker/helpers.js';

/** serve-tinker at the HTTP level: what the official SDK relies on beyond its happy path (sdk.test.ts). */

let checkpoint: string;
beforeAll(async () => {
  checkpoint = await tinyCheckpoint();
});

const KEY = { 'x-api-key': 'tml-test' };

async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, any>; headers: Headers; bytes: Uint8Array }> {
  const init: RequestInit = { method, headers: { ...KEY, ...(body !== undefined && !(body instanceof Uint8Array) ? { 'content-type': 'application/json' } : {}), ...headers } };
  if (body !== undefined) init.body = body instanceof Uint8Array ? body : JSON.stringify(body);
  const r = await fetch(`${url}/api/v1/${path}`, init);
  const bytes = new Uint8Array(await r.arrayBuffer());
  const type = r.headers.get('content-type') ?? '';
  return { status: r.status, json: type.includes('json') && bytes.length ? (JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, any>) : {}, headers: r.headers, bytes };
}

/** Poll a future until it settles (try_again means pending). */
async function settle(url: string, requestId: string, accept?: string): Promise<Awaited<ReturnType<typeof call>>> {
  for (;;) {
    const r = await call(url, 'POST', 'retrieve_future', { request_id: requestId }, accept ? { accept } : {});
    if (r.json['type'] !== 'try_again') return r;
  }
}

async function session(url: string): Promise<{ modelId: string }> {
  const s = await call(url, 'POST', 'create_session', { tags: [], user_metadata: null, sdk_version: 'test' });
  const m = await call(url, 'POST', 'create_model', { session_id: s.json['session_id'], model_seq_id: 0, base_model: 'base', lora_config: { rank: 4 } });
  await settle(url, m.json['request_id']);
  return { modelId: m.json['model_id'] };
}

const wire = () =>
  rlDatums().map((d) => ({
    model_input: { chunks: [{ type: 'encoded_text', tokens: d.inputTokens }] },
    loss_fn_inputs: { target_tokens: { data: d.targetTokens, dtype: 'int64' }, weights: { data: d.weights, dtype: 'float32' } },
  }));

describe('serve-tinker HTTP', () => {
  it('answers a body over the limit with 413 (read to its end, so the client sees the answer), and serves the next request', async () => {
    const server = new TinkerServer({ checkpoint, dir: tempDir(), maxBodyBytes: 1 << 20 });
    const port = await server.listen(0);
    try {
      const big = Buffer.alloc(3 << 20, 0x20);
      const status = await new Promise<{ status: number; body: string }>((ok, fail) => {
        const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/forward_backward', headers: { ...KEY, 'content-type': 'application/json', 'content-length': big.length } }, (res) => {
          let body = '';
          res.on('data', (b: Buffer) => (body += b.toString()));
          res.on('end', () => ok({ status: res.statusCode!, body }));
        });
        req.on('error', fail);
        req.end(big);
      });
      expect(status.status).toBe(413);
      expect(JSON.parse(status.body).detail).toMatch(/over the limit of 1048576 bytes/);
      // A gzip body that is small on the wire but over the limit once decompressed: 413 too.
      const bomb = await call(`http://127.0.0.1:${port}`, 'POST', 'telemetry', gzipSync(big), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      expect(bomb.status).toBe(413);
      expect((await call(`http://127.0.0.1:${port}`, 'GET', 'healthz')).json).toEqual({ status: 'ok' });
    } finally {
      await server.close();
    }
  });

  it('gives 405 for a wrong method, 415 for an unknown content type or encoding, and accepts telemetry and dynamic_config', async () => {
    const { server, url } = await startServer(checkpoint);
    try {
      const get = await call(url, 'GET', 'forward_backward');
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST');
      const text = await call(url, 'POST', 'optim_step', new TextEncoder().encode('{}'), { 'content-type': 'text/plain' });
      expect(text.status).toBe(415);
      expect(text.json['detail']).toMatch(/Content-Type 'text\/plain' is not accepted/);
      const protoElsewhere = await call(url, 'POST', 'optim_step', new Uint8Array([1]), { 'content-type': PROTO_CONTENT_TYPE });
      expect(protoElsewhere.status).toBe(415);
      const br = await call(url, 'POST', 'telemetry', new TextEncoder().encode('{}'), { 'content-type': 'application/json', 'content-encoding': 'br' });
      expect(br.status).toBe(415);
      expect((await call(url, 'POST', 'telemetry', { events: [{ event: 'x' }], platform: 'test', sdk_version: '0', session_id: 's', process_uuid: 'p' })).json).toEqual({ status: 'accepted' });
      expect((await call(url, 'POST', 'telemetry', { events: 'no' })).status).toBe(422);
      expect((await call(url, 'POST', 'client/dynamic_config', { sdk_version: '0' })).json).toEqual({ refresh_interval_sec: 300 });
    } finally {
      await server.close();
    }
  });

  it('validates hyperparameters (finite, in range) with a 400 that names the field, and skips the rejected seq_id', async () => {
    const { server, url } = await startServer(checkpoint);
    try {
      const { modelId } = await session(url);
      const adam = { learning_rate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0, grad_clip_norm: 0 };
      const cases: [Record<string, number>, RegExp][] = [
        [{ learning_rate: 1e308 }, /learning_rate = 1e\+308 is out of range/],
        [{ learning_rate: -1e-3 }, /learning_rate = -0\.001/],
        [{ beta1: 1 }, /beta1 = 1 is out of range \(0 <= beta1 < 1\)/],
        [{ eps: 0 }, /eps = 0/],
        [{ grad_clip_norm: -1 }, /grad_clip_norm/],
      ];
      let seq = 1;
      for (const [bad, message] of cases) {
        const r = await call(url, 'POST', 'optim_step', { model_id: modelId, seq_id: seq++, adam_params: { ...adam, ...bad } });
        expect(r.status).toBe(400);
        expect(r.json['detail']).toMatch(message);
      }
      const fb = await call(url, 'POST', 'forward_backward', { model_id: modelId, seq_id: seq++, forward_backward_input: { data: wire(), loss_fn: 'ppo', loss_fn_config: { clip_low_threshold: 1.5, clip_high_threshold: 1.2 } } });
      expect(fb.status).toBe(400);
      expect(fb.json['detail']).toMatch(/clip_low_threshold must not exceed clip_high_threshold/);
      // Six seq_ids were spent on rejections; the seventh runs (it would wait for ever otherwise).
      const ok = await call(url, 'POST', 'forward_backward', { model_id: modelId, seq_id: seq, forward_backward_input: { data: wire(), loss_fn: 'cross_entropy' } });
      expect(ok.status).toBe(200);
      const done = await settle(url, ok.json['request_id']);
      expect(done.json['loss_fn_outputs']).toHaveLength(3);
      // A repeat of a rejected request gets the same answer, not a future.
      const again = await call(url, 'POST', 'optim_step', { model_id: modelId, seq_id: 1, adam_params: { ...adam, learning_rate: 1e308 } });
      expect(again.status).toBe(400);
      const prompt = { chunks: [{ type: 'encoded_text', tokens: [5, 40] }] };
      for (const [params, message] of [[{ max_tokens: 4, temperature: -1 }, /temperature must be a finite number in \[0, 100\]/], [{ max_tokens: 4, top_p: 0 }, /top_p must be in \(0, 1\]/], [{ max_tokens: 0 }, /max_tokens must be >= 1/]] as const) {
        const r = await call(url, 'POST', 'asample', { prompt, base_model: 'base', sampling_params: params });
        expect(r.status).toBe(400);
        expect(r.json['detail']).toMatch(message);
      }
    } finally {
      await server.close();
    }
  });

  it('keeps answering while a 256-sample request runs, and returns it as protobuf when asked', async () => {
    // Polls answer at once, so "still pending" below is seen while the sampling runs.
    const { server, url } = await startServer(checkpoint, { pollTimeoutMs: 1 });
    try {
      const prompt = { chunks: [{ type: 'encoded_text', tokens: [5, 40] }] };
      const big = await call(url, 'POST', 'asample', { prompt, base_model: 'base', num_samples: 256, sampling_params: { max_tokens: 46, temperature: 1, seed: 1 }, prompt_logprobs: true });
      // healthz is answered while the sampling is still in progress (the sampler yields).
      const health = await call(url, 'GET', 'healthz');
      expect(health.json).toEqual({ status: 'ok' });
      const pending = await call(url, 'POST', 'retrieve_future', { request_id: big.json['request_id'] }, {});
      expect(pending.json['type']).toBe('try_again');
      const done = await settle(url, big.json['request_id'], PROTO_CONTENT_TYPE);
      expect(done.headers.get('content-type')).toBe(PROTO_CONTENT_TYPE);
      const decoded = decodeSampleResponse(done.bytes);
      expect(decoded.sequences).toHaveLength(256);
      expect(decoded.prompt_logprobs?.[0]).toBeNull();
      // The same future as JSON: the same numbers.
      const json = await settle(url, big.json['request_id']);
      expect(decoded.sequences[7]!.tokens).toEqual(json.json['sequences'][7].tokens);
      decoded.sequences[7]!.logprobs.forEach((v, i) => expect(v).toBeCloseTo(json.json['sequences'][7].logprobs[i], 5));
    } finally {
      await server.close();
    }
  });

  it('stops sampling on a string, and runs forward (SDK <= 0.24) without touching the gradient', async () => {
    const { server, url } = await startServer(checkpoint);
    try {
      const { modelId } = await session(url);
      const f = await call(url, 'POST', 'forward', { model_id: modelId, seq_id: 1, forward_input: { data: wire(), loss_fn: 'cross_entropy' } });
      const forward = await settle(url, f.json['request_id']);
      const direct = directBackend(checkpoint).forwardSync(rlDatums(), 'cross_entropy');
      expect(forward.json['loss_fn_outputs'].map((o: any) => o.logprobs.data)).toEqual(direct.logprobs);
      expect(Array.from(server.models.get(modelId)!.backend.model.grads!.a).every((g) => g === 0)).toBe(true);

      const sampler = directBackend(checkpoint).samplerInMemory();
      const [free] = sampler.sampleSync([5, 40], { maxTokens: 10, temperature: 1, seed: 4 });
      const text = sampler.tokenizer.decode(free!.tokens.slice(0, 4));
      const stop = text.slice(-1);
      const k = free!.tokens.findIndex((_, i) => sampler.tokenizer.decode(free!.tokens.slice(0, i + 1)).includes(stop));
      const prompt = { chunks: [{ type: 'encoded_text', tokens: [5, 40] }] };
      const s = await call(url, 'POST', 'asample', { prompt, base_model: 'base', sampling_params: { max_tokens: 10, temperature: 1, seed: 4, stop: [stop] } });
      const out = await settle(url, s.json['request_id']);
      expect(out.json['sequences'][0]).toMatchObject({ tokens: free!.tokens.slice(0, k + 1), stop_reason: 'stop' });
    } finally {
      await server.close();
    }
  });
});
