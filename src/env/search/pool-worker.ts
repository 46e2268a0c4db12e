/**
 * One worker of a SearchPool: opens the index itself and answers search and grep requests.
 * An InputError (bad query or pattern) goes back as such, so the environment can show it to the model.
 */
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { isInputError } from '../../errors.js';
import { openIndex } from '../../search/open.js';

export interface PoolRequest {
  id: number;
  op: 'search' | 'grep';
  text: string;
  k?: number;
  timeLimitMs?: number;
}

/** ms: time the worker spent on the request (not counting the wait in its queue). */
export type PoolReply = { id: number; ms: number; value: unknown } | { id: number; ms: number; error: string; input: boolean };

const { indexDir, snippetChars } = workerData as { indexDir: string; snippetChars?: number };
const index = await openIndex(indexDir, snippetChars === undefined ? {} : { snippetChars });
const port = parentPort!;
port.on('message', (req: PoolRequest) => {
  let reply: PoolReply;
  const started = performance.now();
  try {
    const value = req.op === 'search' ? index.search(req.text, req.k) : index.grep(req.text, { ...(req.k !== undefined ? { k: req.k } : {}), ...(req.timeLimitMs !== undefined ? { timeLimitMs: req.timeLimitMs } : {}) });
    reply = { id: req.id, ms: performance.now() - started, value };
  } catch (err) {
    reply = { id: req.id, ms: performance.now() - started, error: err instanceof Error ? err.message : String(err), input: isInputError(err) };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true });
