/**
 * A worker thread that writes the chunk texts and builds the grep prefilter (TextSide) while the
 * main thread builds the BM25 postings (build.ts): the two share nothing but the texts, so on two
 * cores they run side by side. workerData: {dir, shardBytes, wasm}. Messages in: {texts, first}
 * batches in document order, then {finish} or {abort}. Messages out: 'ack' per batch (the
 * builder's backpressure), {shards} when finished, 'closed' after an abort, or {error}.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { TextSide, type ShardInfo } from './text-side.js';

export type ToTextWorker = { texts: string[]; first: number } | { finish: true } | { abort: true };
export type FromTextWorker = 'ack' | 'closed' | { shards: ShardInfo[] } | { error: string };
export interface TextWorkerData {
  dir: string;
  shardBytes: number;
  /** Split words with the WebAssembly loop (when built). */
  wasm: boolean;
}

const port = parentPort;
if (port) {
  const { dir, shardBytes, wasm } = workerData as TextWorkerData;
  const side = new TextSide(dir, shardBytes, wasm);
  const reply = (msg: FromTextWorker) => port.postMessage(msg);
  port.on('message', (msg: ToTextWorker) => {
    try {
      if ('texts' in msg) {
        msg.texts.forEach((text, i) => side.add(msg.first + i, text));
        reply('ack');
      } else if ('finish' in msg) {
        reply({ shards: side.finish() });
      } else {
        side.close();
        reply('closed');
      }
    } catch (err) {
      side.close();
      reply({ error: (err as Error).stack ?? String(err) });
    }
  });
}
