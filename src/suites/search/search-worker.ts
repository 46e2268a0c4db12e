/**
 * One worker of a SearchWorkers: opens the index itself and answers search and grep requests.
 * An InputError (bad query or pattern) goes back as such, so the environment can show it to the model.
 */
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { DamagedIndexError, isInputError } from '../../errors.js';
import { grep, touchPages } from '../../search/grep/index.js';
import { openIndex, type SharedIndexBytes } from '../../search/open.js';

export interface SearchWorkerRequest {
  id: number;
  op: 'search' | 'grep';
  text: string;
  k?: number;
  timeLimitMs?: number;
}

/** A DamagedIndexError's fields, which a thread boundary would otherwise reduce to a message. */
export type DamageReport = { dir: string; file: string; what: string };
/** ms: time the worker spent on the request (not counting the wait in its queue). */
export type SearchWorkerReply = { id: number; ms: number; value: unknown } | { id: number; ms: number; error: string; input: boolean; damaged?: DamageReport };

/** What a DamagedIndexError was, to send across; undefined for any other error. */
export function damageReport(err: unknown): DamageReport | undefined {
  return err instanceof DamagedIndexError ? { dir: err.dir, file: err.file, what: err.what } : undefined;
}

/** What a worker sends once it is ready, or could not open its index. */
export type SearchWorkerStart = { ready: true } | { failed: string; damaged?: DamageReport };

const { indexDir, snippetChars, preload, shared } = workerData as { indexDir: string; snippetChars?: number; preload?: boolean; shared?: SharedIndexBytes };
const port = parentPort!;
try {
  serve(await open());
} catch (err) {
  // Said in a message (the worker then ends): an uncaught error would reach the pool as a bare
  // Error, and the damaged file's name with it.
  const damaged = damageReport(err);
  port.postMessage({ failed: err instanceof Error ? err.message : String(err), ...(damaged ? { damaged } : {}) } satisfies SearchWorkerStart);
}

/** Open the index, and read what a long run will read anyway (preload). */
async function open() {
  const index = await openIndex(indexDir, { ...(snippetChars === undefined ? {} : { snippetChars }), ...(shared ? { shared } : {}) });
  // The grep prefilter, loaded here (as index.grep would on its first call) so it can be preloaded.
  const grepIndex = index.grepPrefilter();
  if (preload) {
    // Search workers serve a long run: read the postings, and every chunk text and the grep prefilter unless
    // they come shared (read once for all the workers), now rather than page by page
    // inside the first thousands of calls (greps touch texts all over the corpus, searches the
    // postings of every word an agent thinks of).
    index.store.loadAll();
    if (!shared) {
      // Read a byte of every memory page they fill: the first read of a page costs a fault (measured
      // 20-50 us per 4 KiB page on the 2-core VM, 5x a warm grep's scan), which a long run pays once
      // anyway. Reading the files alone does not do it here: without the touch loop, greps took 40%
      // longer (2.8 -> 4.2-5.0 ms a call). Shared bytes were faulted in by the thread that read them.
      let checksum = 0;
      for (let doc = 0; doc < index.store.size; doc++) checksum += touchPages(index.store.textBytes(doc));
      checksum += grepIndex?.touch() ?? 0;
      if (Number.isNaN(checksum)) throw new Error('unreachable');
    }
    index.loadAllPostings();
  }
  return { index, grepIndex };
}

/** Answer requests until the pool ends this worker. */
function serve({ index, grepIndex }: Awaited<ReturnType<typeof open>>): void {
  port.on('message', (req: SearchWorkerRequest) => {
    let reply: SearchWorkerReply;
    const started = performance.now();
    try {
      const value = req.op === 'search' ? index.search(req.text, req.k) : grep(index.store, grepIndex, req.text, { ...(req.k !== undefined ? { k: req.k } : {}), ...(req.timeLimitMs !== undefined ? { timeLimitMs: req.timeLimitMs } : {}) });
      reply = { id: req.id, ms: performance.now() - started, value };
    } catch (err) {
      const damaged = damageReport(err);
      reply = { id: req.id, ms: performance.now() - started, error: err instanceof Error ? err.message : String(err), input: isInputError(err), ...(damaged ? { damaged } : {}) };
    }
    port.postMessage(reply);
  });
  port.postMessage({ ready: true } satisfies SearchWorkerStart);
}
