import type { GrepOptions, GrepResult, ChunkStore } from './types.js';

/**
 * The regex grep lives in src/search/grep/ (another module, with its own index files). These are
 * the signatures this index relies on; the module is loaded at build and open time.
 */
export interface GrepBuilderLike {
  add(doc: number, text: string): void;
  write(dir: string): void;
}
export interface GrepModule {
  GrepIndexBuilder: new () => GrepBuilderLike;
  loadGrepIndex(dir: string): unknown;
  grep(store: ChunkStore, index: unknown, pattern: string, options?: GrepOptions): GrepResult;
}

let cached: Promise<GrepModule | undefined> | undefined;

export function loadGrepModule(): Promise<GrepModule | undefined> {
  // A computed specifier keeps the compiler from requiring the module while it is being written.
  const spec = './grep/index.js';
  cached ??= (import(spec) as Promise<GrepModule>).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw err;
  });
  return cached;
}
