import { parentPort, workerData } from 'node:worker_threads';
import { accumulateGradients } from './gradients.js';
import { Model, type ModelConfig } from './model.js';
import type { WorkerReply, WorkerRequest } from './gradient-workers.js';

/** A gradient worker: loads the weights it is sent, runs its datums, returns loss, logprobs and gradient. */
const { config, kernels } = workerData as { config: ModelConfig; kernels: 'auto' | 'wasm-simd' | 'js' };
const model = new Model(config, { training: true, kernels });

parentPort!.on('message', (req: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    model.params.a.set(req.params);
    model.zeroGrads();
    const part = accumulateGradients(model, req.datums, req.lossFn, req.config, true, req.trainRows);
    part.grads = model.grads!.a.slice();
    reply = { id: req.id, part };
    parentPort!.postMessage(reply, [part.grads.buffer as ArrayBuffer]);
  } catch (err) {
    reply = { id: req.id, error: (err as Error).message };
    parentPort!.postMessage(reply);
  }
});
