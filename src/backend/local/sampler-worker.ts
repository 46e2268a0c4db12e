import { parentPort, workerData } from 'node:worker_threads';
import { BpeTokenizer, type BpeData } from '../../protocol/compact/bpe.js';
import { DecodeEngine } from './batch.js';
import type { ModelConfig } from './model.js';
import type { DecodeReply, DecodeRequest } from './batch-sampler.js';

/** A decoding worker: one DecodeEngine; requests carry the weights' version (and the weights when new to this worker). */
const { config, tokenizer, kernels, slots } = workerData as { config: ModelConfig; tokenizer: BpeData; kernels: 'auto' | 'wasm-simd' | 'js'; slots: number };
const engine = new DecodeEngine(config, new BpeTokenizer(tokenizer), kernels, slots);
const weights = new Map<number, Float32Array>();

parentPort!.on('message', (req: DecodeRequest) => {
  if (req.params) {
    // Only the newest versions are asked for again; older ones are dropped once a newer one arrives.
    for (const v of weights.keys()) if (v < req.version - 1) weights.delete(v);
    weights.set(req.version, req.params);
  }
  const params = weights.get(req.version);
  if (!params) {
    parentPort!.postMessage({ id: req.id, error: `weights of version ${req.version} were never sent` } satisfies DecodeReply);
    return;
  }
  engine.submit({ version: req.version, params, prompt: req.prompt, sampling: req.sampling, numSamples: req.numSamples }).then(
    (sequences) => parentPort!.postMessage({ id: req.id, sequences, rowsRun: engine.rowsRun } satisfies DecodeReply),
    (err: Error) => parentPort!.postMessage({ id: req.id, error: err.message } satisfies DecodeReply),
  );
});
