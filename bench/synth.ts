/**
 * Deterministic synthetic corpora for the search benchmark: chunks of ~150 words drawn from the
 * word distribution of the embedded corpus (whitespace-separated words as they appear, so
 * punctuation, case and numbers look like real text), and the embedded questions as queries.
 * Writes JSONL so that any other engine can be measured on exactly the same chunks and queries:
 *
 *   node dist/bench/synth.js --chunks 100000 --out corpus.jsonl [--queries queries.jsonl] [--seed 1]
 */
import { createWriteStream, existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import type { Chunk } from '../src/corpus/chunk.js';
import { embeddedChunks, packageRoot } from '../src/corpus/embedded.js';
import { isInputError } from '../src/errors.js';
import { buildIndex, openIndex } from '../src/search/index.js';

/** mulberry32: a small seeded PRNG. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface WordDistribution {
  words: string[];
  /** Cumulative probabilities, same order as words (most frequent first, ties by word). */
  cdf: Float64Array;
}

export async function embeddedWordDistribution(): Promise<WordDistribution> {
  const counts = new Map<string, number>();
  for await (const c of embeddedChunks()) for (const w of c.text.split(/\s+/)) if (w) counts.set(w, (counts.get(w) ?? 0) + 1);
  const entries = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const total = entries.reduce((s, [, n]) => s + n, 0);
  const cdf = new Float64Array(entries.length);
  let acc = 0;
  entries.forEach(([, n], i) => (cdf[i] = acc += n / total));
  return { words: entries.map(([w]) => w), cdf };
}

function sample(d: WordDistribution, r: number): string {
  let lo = 0;
  let hi = d.cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (d.cdf[mid]! < r) lo = mid + 1;
    else hi = mid;
  }
  return d.words[lo]!;
}

/** n chunks: a 2-4 word title and 120-180 words of text each; the same seed gives the same chunks. */
export function* synthChunks(n: number, d: WordDistribution, seed = 1): Generator<Chunk> {
  const r = rng(seed);
  const words = (count: number) => {
    const out = new Array<string>(count);
    for (let i = 0; i < count; i++) out[i] = sample(d, r());
    return out.join(' ');
  };
  for (let i = 0; i < n; i++) {
    const title = words(2 + Math.floor(r() * 3));
    yield { id: `syn${String(i).padStart(8, '0')}`, title, text: words(120 + Math.floor(r() * 61)) };
  }
}

/** The embedded task set's questions (HotpotQA dev-500 and MuSiQue-100), in file order. */
export function embeddedQuestions(): string[] {
  const raw = gunzipSync(readFileSync(join(packageRoot(), 'data', 'embedded', 'tasks.jsonl.gz'))).toString('utf8');
  return raw.split('\n').filter((l) => l.trim()).map((l) => (JSON.parse(l) as { query: string }).query);
}

async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
  const tmp = `${path}.tmp`;
  const out = createWriteStream(tmp);
  let batch = '';
  for (const line of lines) {
    batch += line + '\n';
    if (batch.length > 1 << 20) {
      if (!out.write(batch)) await new Promise<void>((r) => out.once('drain', () => r()));
      batch = '';
    }
  }
  out.write(batch);
  await new Promise<void>((res, rej) => out.end((err?: Error | null) => (err ? rej(err) : res())));
  renameSync(tmp, path);
}

/** Write n synthetic chunks as JSONL ({id, title, text} per line). */
export async function writeSynthCorpus(path: string, n: number, seed = 1): Promise<void> {
  const d = await embeddedWordDistribution();
  await writeLines(path, (function* () {
    for (const c of synthChunks(n, d, seed)) yield JSON.stringify(c);
  })());
}

/** Write the benchmark queries as JSONL ({query} per line). */
export async function writeQueries(path: string): Promise<void> {
  await writeLines(path, embeddedQuestions().map((query) => JSON.stringify({ query })));
}

/**
 * The index of `chunks` synthetic chunks (seed 1) in .sleuth/bench/env-synth-N, built on first use
 * (and again when its format is stale): what bench:env and bench:serve-search measure over.
 */
export async function synthIndex(chunks: number): Promise<string> {
  const dir = join('.sleuth', 'bench', `env-synth-${chunks}`);
  if (existsSync(join(dir, 'manifest.json'))) {
    try {
      const index = await openIndex(dir);
      // The grep index is loaded on first use: load it now, so that an old format shows here.
      index.grep('bench', { k: 1 });
      // Opened only to check it: the bench opens it again, over shared memory.
      index.close();
      return dir;
    } catch (err) {
      if (!isInputError(err)) throw err;
      console.error(`rebuilding ${dir}: ${err.message}`);
    }
  }
  console.error(`building the index of ${chunks.toLocaleString()} synthetic chunks into ${dir} (once)...`);
  const started = performance.now();
  const words = await embeddedWordDistribution();
  await buildIndex((async function* () { yield* synthChunks(chunks, words, 1); })(), dir, { source: `bench/synth.ts ${chunks} chunks, seed 1` });
  console.error(`built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return dir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { chunks: { type: 'string' }, out: { type: 'string' }, queries: { type: 'string' }, seed: { type: 'string' } } });
  if (!values.out || !values.chunks) {
    console.error('usage: node dist/bench/synth.js --chunks N --out corpus.jsonl [--queries queries.jsonl] [--seed S]');
    process.exit(2);
  }
  await writeSynthCorpus(values.out, Number(values.chunks), Number(values.seed ?? 1));
  if (values.queries) await writeQueries(values.queries);
  console.log(`wrote ${values.chunks} chunks to ${values.out}${values.queries ? ` and the queries to ${values.queries}` : ''}`);
}
