import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalBackend, type LocalBackend } from '../../src/backend/local/backend.js';
import { wasmAvailable } from '../../src/backend/local/tensor-math.js';
import type { Datum } from '../../src/backend/types.js';
import { trainBpe, type BpeTokenizer } from '../../src/protocol/compact/bpe.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';
import { localRenderer } from '../../src/protocol/compact/local.js';

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

export const SEARCH_TOOL = { type: 'function' as const, function: { name: 'bm25_search', description: 'Keyword search over the corpus.', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } } };
export const SYSTEM = 'Find the evidence.';
export const USER = 'capital of France';
/**
 * The query a client sees when the model searches USER: the local format has the model write its
 * search as references to the question's numbered words, expanded into the words BM25 keeps.
 */
export const SEARCHED = 'capital France';

/** A tiny model trained (cross-entropy on its own turn only) to answer SYSTEM + USER with a bm25_search call; its checkpoint path. */
export async function toolCallingCheckpoint(): Promise<string> {
  ensureWasm();
  const call = { name: 'bm25_search', arguments: { query: USER } };
  const tok = trainBpe([...TEXTS, `${SYSTEM} ${USER} ${JSON.stringify(call)} ${SEARCH_TOOL.function.description}`], 400, [...SPECIALS]);
  // The server renders as the trainer does (the local model's format).
  const r = localRenderer(tok);
  const prompt = r.prompt({ system: SYSTEM, user: USER, tools: [{ name: 'bm25_search', description: SEARCH_TOOL.function.description, parameters: SEARCH_TOOL.function.parameters }] });
  const seq = [...prompt, ...r.encode(r.renderAssistant('', [call]))];
  const b = tinyBackend(tok, { context: 128, dModel: 32, nLayers: 2, nHeads: 2 });
  const datum = { inputTokens: seq.slice(0, -1), targetTokens: seq.slice(1), weights: seq.slice(1).map((_, t) => (t + 1 >= prompt.length ? 1 : 0)) };
  for (let i = 0; i < 120; i++) {
    b.forwardBackwardSync([datum], 'cross_entropy');
    b.optimStepSync({ ...ADAM, learningRate: 1e-2 });
  }
  return (await b.saveWeightsForSampler('served')).modelPath;
}
