import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalBackend, type LocalBackend } from '../../src/backend/local/backend.js';
import { wasmAvailable } from '../../src/backend/local/tensor-math.js';
import type { Datum } from '../../src/backend/types.js';
import { trainBpe, type BpeTokenizer } from '../../src/protocol/compact/bpe.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';

export const TEXTS = [
  'The quick brown fox jumps over the lazy dog.',
  'A search agent reads the corpus, curates the chunks that hold the evidence, and finishes.',
  'Paris is the capital of France; Berlin is the capital of Germany.',
  'bm25_search finds chunks by keywords; grep_corpus scans with a regular expression.',
];

/** Build dist/wasm/kernels.wasm if a plain `vitest run` comes before `npm run build`. */
export function ensureWasm(): void {
  if (wasmAvailable()) return;
  const r = spawnSync(process.execPath, ['scripts/build-wasm.mjs'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build-wasm failed: ${r.stderr}`);
}

export function tinyTokenizer(vocab = 320): BpeTokenizer {
  return trainBpe(TEXTS, vocab, [...SPECIALS]);
}

export function tinyBackend(tok = tinyTokenizer(), config = { context: 64, dModel: 16, nLayers: 2, nHeads: 2 }, seed = 7): LocalBackend {
  return createLocalBackend({ tokenizer: tok, config, seed, dir: mkdtempSync(join(tmpdir(), 'sleuth-local-')) });
}

export function datumFor(tokens: number[], extra: Partial<Datum> = {}): Datum {
  return { inputTokens: tokens.slice(0, -1), targetTokens: tokens.slice(1), weights: tokens.slice(1).map(() => 1), ...extra };
}

export const ADAM = { learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 };
