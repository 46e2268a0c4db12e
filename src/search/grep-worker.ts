/**
 * A worker thread that builds the grep prefilter while the main thread builds the BM25 postings
 * (build.ts): the two read the same chunk texts and share nothing else, so on two cores they run
 * side by side. Messages in: {texts, first} batches in document order, then {write: dir}.
 * Messages out: 'ack' per batch (the builder's backpressure), 'done' after writing, or
 * {error} when anything failed.
 */
import { parentPort } from 'node:worker_threads';
import { GrepIndexBuilder } from './grep/builder.js';

export type ToGrepWorker = { texts: string[]; first: number } | { write: string };
export type FromGrepWorker = 'ack' | 'done' | { error: string };

const port = parentPort;
if (port) {
  const builder = new GrepIndexBuilder();
  port.on('message', (msg: ToGrepWorker) => {
    try {
      if ('texts' in msg) {
        msg.texts.forEach((text, i) => builder.add(msg.first + i, text));
        port.postMessage('ack' satisfies FromGrepWorker);
      } else {
        builder.write(msg.write);
        port.postMessage('done' satisfies FromGrepWorker);
      }
    } catch (err) {
      port.postMessage({ error: (err as Error).stack ?? String(err) } satisfies FromGrepWorker);
    }
  });
}
