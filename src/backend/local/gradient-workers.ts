import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Datum, LossConfig, LossFn } from '../types.js';
import type { GradientPart, TrainRows } from './gradients.js';
import type { ModelConfig } from './model.js';

/** The compiled worker script; absent when running from TypeScript sources (tests), so no workers then. */
function workerFile(): string | null {
  const url = new URL('./gradient-worker.js', import.meta.url);
  const path = fileURLToPath(url);
  return existsSync(path) ? path : null;
}

/**
 * Gradient threads: up to 2 (the cores of this project's machine), for every model size. Copying
 * the weights and adding a worker's gradient costs about a millisecond for the 0.28M model against
 * seconds of forward and backward: a demo-shaped batch (48 rollouts of 660 tokens) took 2.44 s of
 * CPU on one thread and 2.67 s on two, so with a second core free the step's training takes about
 * half the wall time. (A limit of 600k parameters stood here while a GRPO batch, chained by its
 * shared system prompt, came back as one shard: two threads never ran, so they never paid.)
 */
export function defaultThreads(): number {
  if (!workerFile()) return 1;
  return Math.min(2, availableParallelism());
}

export interface WorkerRequest {
  id: number;
  params: Float32Array;
  datums: Datum[];
  lossFn: LossFn;
  config: LossConfig;
  trainRows: TrainRows;
}

export type WorkerReply = { id: number; part: GradientPart } | { id: number; error: string };

/** Worker threads that each hold a copy of the model and return the gradient of their datums. */
export class GradientWorkers {
  private readonly workers: Worker[];
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (p: GradientPart) => void; reject: (e: Error) => void }>();

  constructor(config: ModelConfig, count: number, kernels: 'auto' | 'wasm-simd' | 'js') {
    const file = workerFile();
    if (!file) throw new Error('worker threads need the compiled backend (npm run build)');
    this.workers = Array.from({ length: count }, () => {
      const w = new Worker(file, { workerData: { config, kernels } });
      w.on('message', (msg: WorkerReply) => {
        const p = this.waiting.get(msg.id);
        if (!p) return;
        this.waiting.delete(msg.id);
        if ('error' in msg) p.reject(new Error(`gradient worker: ${msg.error}`));
        else p.resolve(msg.part);
      });
      w.on('error', (err) => {
        for (const p of this.waiting.values()) p.reject(err);
        this.waiting.clear();
      });
      // Idle workers must not keep a finished command alive; run() refs them while they work. (After
      // the listeners: adding a 'message' listener refs the worker's port again.)
      w.unref();
      return w;
    });
  }

  get count(): number {
    return this.workers.length;
  }

  async run(params: Float32Array, shards: Datum[][], lossFn: LossFn, config: LossConfig, trainRows: TrainRows): Promise<GradientPart[]> {
    // Ref'd while they work: an await on an unref'd worker alone would let the process exit mid-step.
    const busy = this.workers.slice(0, shards.length);
    for (const w of busy) w.ref();
    try {
      return await Promise.all(
        shards.map(
          (datums, i) =>
            new Promise<GradientPart>((resolve, reject) => {
              const id = this.next++;
              this.waiting.set(id, { resolve, reject });
              const req: WorkerRequest = { id, params: params.slice(), datums, lossFn, config, trainRows };
              this.workers[i]!.postMessage(req, [req.params.buffer as ArrayBuffer]);
            }),
        ),
      );
    } finally {
      for (const w of busy) w.unref();
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
