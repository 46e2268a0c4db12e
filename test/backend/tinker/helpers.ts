import { spawnSync, type ChildProcessByStdio, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Readable } from 'node:stream';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalBackend, type LocalBackend } from '../../../src/backend/local/backend.js';
import { wasmAvailable } from '../../../src/backend/local/tensor-math.js';
import { createTinkerBackend, type TinkerBackend, type TinkerBackendOptions } from '../../../src/backend/tinker/index.js';
import { TinkerServer, type FaultRule } from '../../../src/tinker-server/index.js';
import type { Datum } from '../../../src/backend/types.js';
import { trainBpe } from '../../../src/protocol/compact/bpe.js';
import { SPECIALS } from '../../../src/protocol/compact/renderer.js';

const TEXTS = [
  'The quick brown fox jumps over the lazy dog.',
  'A search agent reads the corpus, curates the chunks that hold the evidence, and finishes.',
  'Paris is the capital of France; Berlin is the capital of Germany.',
];

export function ensureWasm(): void {
  if (wasmAvailable()) return;
  const r = spawnSync(process.execPath, ['scripts/build-wasm.mjs'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build-wasm failed: ${r.stderr}`);
}

export function tempDir(prefix = 'sleuth-tinker-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A tiny local model saved as a sampler checkpoint: the base model the server serves. */
export async function tinyCheckpoint(): Promise<string> {
  ensureWasm();
  const tok = trainBpe(TEXTS, 300, [...SPECIALS]);
  const b = createLocalBackend({ tokenizer: tok, config: { context: 48, dModel: 16, nLayers: 1, nHeads: 2 }, seed: 3, dir: tempDir() });
  return (await b.saveWeightsForSampler('tiny')).modelPath;
}

/** The same base model, driven directly (the reference the HTTP path must reproduce). */
export function directBackend(checkpoint: string): LocalBackend {
  // The server returns every position's logprob (the Tinker API), so its path is 'all-rows'.
  return createLocalBackend({ checkpoint, dir: tempDir(), trainRows: 'all-rows' });
}

export async function startServer(checkpoint: string, o: { flavor?: 'tinker' | 'skyrl'; faults?: FaultRule[]; apiKey?: string; pollTimeoutMs?: number } = {}): Promise<{ server: TinkerServer; url: string }> {
  const server = new TinkerServer({ checkpoint, dir: tempDir(), pollTimeoutMs: o.pollTimeoutMs ?? 200, ...o });
  const port = await server.listen(0);
  return { server, url: `http://127.0.0.1:${port}` };
}

/** Fast back-off for tests; the retry rules are the production ones. */
export const FAST = { backoffScale: 0.01, billingRetryMs: 20, heartbeatMs: 0, maxRetries: 6 };

export function connect(url: string, extra: Partial<TinkerBackendOptions> = {}): Promise<TinkerBackend> {
  return createTinkerBackend({ baseUrl: url, baseModel: 'base', loraRank: 8, log: () => {}, ...extra, http: { ...FAST, ...extra.http } });
}

/** Three RL datums over fixed token ids (ids < 300), with a masked prompt. */
export function rlDatums(): Datum[] {
  const seqs = [
    [5, 40, 41, 42, 43, 44, 45, 46, 47, 48],
    [7, 60, 61, 62, 63, 64, 65],
    [9, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110],
  ];
  return seqs.map((tokens, i) => {
    const n = tokens.length - 1;
    const weights = Array.from({ length: n }, (_, t) => (t < 2 ? 0 : 1));
    return {
      inputTokens: tokens.slice(0, -1),
      targetTokens: tokens.slice(1),
      weights,
      logprobs: weights.map((w, t) => (w ? -5.5 - 0.01 * t : 0)),
      advantages: weights.map((w) => (w ? [0.5, -0.25, 0.1][i]! : 0)),
    };
  });
}

export const ADAM = { learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.01, gradClipNorm: 0 };

/**
 * The URL `sleuth serve-tinker` prints once it listens; rejects if the process exits first (with
 * what it wrote to stderr so far).
 */
export function listeningUrl(child: ChildProcessWithoutNullStreams | ChildProcessByStdio<null, Readable, Readable>): Promise<string> {
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  return new Promise<string>((ok, fail) => {
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) ok(m[1]!);
    });
    child.once('exit', (code) => fail(new Error(`serve-tinker exited with ${code}: ${stderr}`)));
  });
}

