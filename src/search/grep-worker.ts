/**
 * A worker thread that stores the chunk texts and builds the grep prefilter (TextSide) while the
 * main thread builds the postings (build.ts): on two cores they run side by side.
 * workerData: {dir, wasm, ring, shardBytes, compress}. Messages in, in document order: {texts, first}
 * (strings), or {utf8, ends, units, first}: the texts' UTF-8 back to back, text i ending at ends[i]
 * and units[i] UTF-16 code units long, either in slot `slot` of the shared ring or as bytes of their
 * own; then {finish} or {abort}. Messages out: 'ack' per batch (the builder's backpressure, and the
 * ring slot free again), {done: shards} when the texts and grep.bin are written, 'closed' after an
 * abort, or {error}.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { TextSide, type ShardInfo } from './text-side.js';

export type Utf8Batch = { utf8: { slot: number } | { bytes: Uint8Array }; ends: Uint32Array; units: Uint32Array; first: number };
export type ToTextWorker = { texts: string[]; first: number } | Utf8Batch | { finish: true } | { abort: true };
export type FromTextWorker = 'ack' | { done: ShardInfo[] } | 'closed' | { error: string };
export interface TextWorkerData {
  dir: string;
  /** Split words with the WebAssembly loop (when built). */
  wasm: boolean;
  /** The ring of shared batch buffers ({utf8: {slot}} batches), `slots` of `slotBytes` each. */
  ring: { buffer: SharedArrayBuffer; slots: number; slotBytes: number };
  /** Largest text shard file. */
  shardBytes: number;
  /** Store the texts compressed (compressed-texts.ts). */
  compress: boolean;
}

const port = parentPort;
if (port) {
  const { dir, wasm, ring, shardBytes, compress } = workerData as TextWorkerData;
  const side = new TextSide(dir, shardBytes, wasm, compress);
  const reply = (msg: FromTextWorker) => port.postMessage(msg);
  port.on('message', (msg: ToTextWorker) => {
    try {
      if ('texts' in msg) {
        msg.texts.forEach((text, i) => side.addText(msg.first + i, text));
        reply('ack');
      } else if ('utf8' in msg) {
        const bytes = 'slot' in msg.utf8 ? new Uint8Array(ring.buffer, msg.utf8.slot * ring.slotBytes, ring.slotBytes) : msg.utf8.bytes;
        let start = 0;
        msg.ends.forEach((end, i) => {
          side.addUtf8(msg.first + i, bytes.subarray(start, end), msg.units[i]!);
          start = end;
        });
        reply('ack');
      } else if ('finish' in msg) {
        reply({ done: side.finish() });
      } else {
        side.close();
        reply('closed');
      }
    } catch (err) {
      reply({ error: (err as Error).stack ?? String(err) });
    }
  });
}
