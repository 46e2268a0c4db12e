import { Worker } from 'node:worker_threads';
import type { Chunk } from '../../corpus/chunk.js';
import { DamagedIndexError, InputError } from '../../errors.js';
import type { GrepOptions, GrepResult, SearchHit, Searcher } from '../../search/types.js';
import type { SearchBackend } from './env.js';
import { readSharedBytes, type SharedIndexBytes } from '../../search/open.js';
import type { DamageReport, SearchWorkerReply, SearchWorkerRequest, SearchWorkerStart } from './search-worker.js';

/** The DamagedIndexError a worker reported. */
function damagedError(d: DamageReport): DamagedIndexError {
  return new DamagedIndexError(d.dir, d.file, d.what);
}

interface Pending {
  op: SearchWorkerRequest['op'];
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  inFlight: number;
}

/**
 * Requests a worker holds at once: the one it runs and the next, so it never waits for the main
 * thread between two. The rest wait in one shared queue, so a slow grep delays only the request
 * behind it on its worker, and the first free worker takes the next request.
 */
const WORKER_DEPTH = 2;

/**
 * Search and grep in worker threads, each with its own copy of the index, so that many concurrent
 * episodes use every core; read and has stay on the caller's thread (they are lookups). Requests
 * wait in one queue, in arrival order, and go to a worker as it frees up. Runs from the compiled
 * build (dist/), where the worker script exists as JavaScript.
 */
export class SearchWorkers implements SearchBackend {
  private readonly pending = new Map<number, Pending>();
  private readonly queue: SearchWorkerRequest[] = [];
  private nextId = 0;
  /** Time the workers spent on each request, by operation (queue wait excluded), when recording. */
  readonly serviceMs: Record<SearchWorkerRequest['op'], number[]> | undefined;

  private constructor(
    private readonly slots: Slot[],
    private readonly local: Pick<Searcher, 'read' | 'has'>,
    record: boolean,
  ) {
    this.serviceMs = record ? { search: [], grep: [] } : undefined;
    for (const slot of slots) {
      slot.worker.on('message', (reply: SearchWorkerReply) => {
        const p = this.pending.get(reply.id);
        if (!p) return;
        this.pending.delete(reply.id);
        slot.inFlight -= 1;
        this.dispatch();
        this.serviceMs?.[p.op].push(reply.ms);
        if ('error' in reply) p.reject(reply.damaged ? damagedError(reply.damaged) : reply.input ? new InputError(reply.error) : new Error(reply.error));
        else p.resolve(reply.value);
      });
      slot.worker.on('error', (err) => this.failAll(err));
    }
  }

  /**
   * Start `workers` threads over the index in `indexDir`; `local` answers read and has. With
   * `preload` (the default) the chunk texts and the grep prefilter are read into memory shared by
   * every worker (or `shared` is used, when the caller read them: readSharedBytes), and each worker
   * reads the postings, before the workers are ready: seconds and memory up front, spared to the calls
   * of a long run.
   */
  static async open(
    indexDir: string,
    local: Pick<Searcher, 'read' | 'has'>,
    options: { workers: number; snippetChars?: number; recordServiceTimes?: boolean; preload?: boolean; shared?: SharedIndexBytes },
  ): Promise<SearchWorkers> {
    const url = new URL('./search-worker.js', import.meta.url);
    const preload = options.preload ?? true;
    // Preloading, the texts and grep prefilter are read once here into shared memory, which every
    // worker views: one copy of the largest files, not one per worker.
    const shared = options.shared ?? (preload ? readSharedBytes(indexDir) : undefined);
    const slots = await Promise.all(
      Array.from({ length: Math.max(1, options.workers) }, async () => {
        const worker = new Worker(url, { workerData: { indexDir, snippetChars: options.snippetChars, preload, shared } });
        await new Promise<void>((resolve, reject) => {
          const onMessage = (m: SearchWorkerStart) => {
            worker.off('message', onMessage);
            worker.off('error', reject);
            if ('ready' in m) return resolve();
            void worker.terminate();
            reject(m.damaged ? damagedError(m.damaged) : new Error(m.failed));
          };
          worker.on('message', onMessage);
          worker.once('error', reject);
        });
        return { worker, inFlight: 0 };
      }),
    );
    return new SearchWorkers(slots, local, options.recordServiceTimes ?? false);
  }

  get workers(): number {
    return this.slots.length;
  }

  /** Requests waiting for a worker (not counting those the workers hold). */
  get queued(): number {
    return this.queue.length;
  }

  search(query: string, k?: number): Promise<SearchHit[]> {
    return this.send({ op: 'search', text: query, ...(k !== undefined ? { k } : {}) }) as Promise<SearchHit[]>;
  }

  grep(pattern: string, options: GrepOptions = {}): Promise<GrepResult> {
    return this.send({ op: 'grep', text: pattern, ...options }) as Promise<GrepResult>;
  }

  read(id: string): Chunk | undefined {
    return this.local.read(id);
  }

  has(id: string): boolean {
    return this.local.has(id);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
    this.failAll(new Error('search workers closed'));
  }

  private closed = false;

  private send(req: Omit<SearchWorkerRequest, 'id'>): Promise<unknown> {
    // A stopped worker would never answer: refuse instead of waiting forever.
    if (this.closed) return Promise.reject(new Error('search workers closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { op: req.op, resolve, reject });
      this.queue.push({ id, ...req });
      this.dispatch();
    });
  }

  /** Hand queued requests, oldest first, to workers holding fewer than WORKER_DEPTH. */
  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot: Slot | undefined;
      for (const s of this.slots) if (s.inFlight < WORKER_DEPTH && (slot === undefined || s.inFlight < slot.inFlight)) slot = s;
      if (slot === undefined) return;
      slot.inFlight += 1;
      slot.worker.postMessage(this.queue.shift()!);
    }
  }

  private failAll(err: Error): void {
    this.queue.length = 0;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

/**
 * A run's search backend: the index itself, or with `workers` > 0 a SearchWorkers over it. close()
 * stops the workers (which otherwise keep the process alive); for the index it does nothing.
 */
export async function searchBackend(indexDir: string, index: SearchBackend, workers: number): Promise<{ backend: SearchBackend; close: () => Promise<void> }> {
  if (workers <= 0) return { backend: index, close: async () => {} };
  const searchWorkers = await SearchWorkers.open(indexDir, index, { workers });
  return { backend: searchWorkers, close: () => searchWorkers.close() };
}
