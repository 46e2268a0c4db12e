import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Chunk } from './chunk.js';
import { readChunks } from './read.js';

/**
 * The embedded default corpus that ships in the repository: the HotpotQA dev-500 and MuSiQue-100
 * paragraphs and the HotpotQA train-100 corpus, deduplicated, ids = contentChunkId(title, text)
 * of each paragraph as published, sorted by id, HTML character references decoded (`&amp;` is `&`). Built by scripts/build-embedded-corpus.ts; attribution in data/embedded/ATTRIBUTION.md.
 */
export function packageRoot(): string {
  // Works from src/ (tests run TypeScript) and from dist/src/ (the built CLI).
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'sleuth') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the sleuth package root above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

export function embeddedCorpusPath(): string {
  return join(packageRoot(), 'data', 'embedded', 'corpus.jsonl.gz');
}

/** The embedded corpus's chunks, in file order. */
export function embeddedChunks(): AsyncGenerator<Chunk> {
  return readChunks(embeddedCorpusPath(), 'jsonl');
}
