import type { Chunk } from '../src/corpus/chunk.js';
import type { GrepOptions, GrepResult, SearchHit } from '../src/search/types.js';
import type { SearchBackend } from '../src/suites/search/env.js';

/**
 * A least-recently-used cache in front of a SearchBackend. In GRPO the rollouts of one group
 * share a query and often open with the same search, so identical calls are common; a cached
 * call (or one already in flight) costs nothing. Failed calls and grep calls that hit the time
 * cap are not kept, so a result never depends on what ran before it.
 */
export class CachedBackend implements SearchBackend {
  private readonly entries = new Map<string, Promise<unknown>>();
  hits = 0;
  misses = 0;

  constructor(
    private readonly backend: SearchBackend,
    private readonly capacity = 4096,
  ) {}

  search(query: string, k?: number): Promise<SearchHit[]> {
    return this.cached(`s\0${k ?? ''}\0${query}`, () => this.backend.search(query, k), () => true) as Promise<SearchHit[]>;
  }

  grep(pattern: string, options: GrepOptions = {}): Promise<GrepResult> {
    return this.cached(`g\0${options.k ?? ''}\0${options.timeLimitMs ?? ''}\0${pattern}`, () => this.backend.grep(pattern, options), (r) => !(r as GrepResult).timedOut) as Promise<GrepResult>;
  }

  read(id: string): Chunk | undefined {
    return this.backend.read(id);
  }

  has(id: string): boolean {
    return this.backend.has(id);
  }

  private cached(key: string, run: () => unknown, keep: (value: unknown) => boolean): Promise<unknown> {
    const found = this.entries.get(key);
    if (found) {
      this.hits += 1;
      // Re-insert: Map order is recency order, oldest first.
      this.entries.delete(key);
      this.entries.set(key, found);
      return found;
    }
    this.misses += 1;
    const promise = (async () => run())();
    this.entries.set(key, promise);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    promise.then(
      (value) => {
        if (!keep(value) && this.entries.get(key) === promise) this.entries.delete(key);
      },
      () => {
        if (this.entries.get(key) === promise) this.entries.delete(key);
      },
    );
    return promise;
  }
}
