/**
 * Deterministic synthetic corpora for the search benchmark, of two kinds:
 *
 * - 'iid': chunks of ~150 words each drawn independently from the word distribution of the
 *   embedded corpus (whitespace-separated words as they appear, so punctuation, case and numbers
 *   look like real text), with the embedded questions as queries. No chunk is about anything.
 * - 'topical': every embedded chunk is a topic (its title and text words, with their counts). A
 *   synthetic chunk has a main topic and a second one; each word comes from the main topic with
 *   probability 0.45, from the second with 0.10, and from the whole corpus's distribution (the
 *   background) otherwise. Its title is the main topic's title. Queries are drawn from the same
 *   topics (topicalQueries), so every query has documents about it, and words co-occur as in
 *   real text: a topic's rare words come together.
 *
 * Writes JSONL so that any other engine can be measured on exactly the same chunks and queries:
 *
 *   node dist/bench/synth.js --chunks 100000 --out corpus.jsonl [--kind iid|topical] [--queries queries.jsonl] [--seed 1]
 */
import { createWriteStream, existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import type { Chunk } from '../src/corpus/chunk.js';
import { embeddedChunks, packageRoot } from '../src/corpus/embedded.js';
import { isInputError } from '../src/errors.js';
import { Analyzer, buildIndex, openIndex } from '../src/search/index.js';

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
  /**
   * guide[g]: the first word whose cdf reaches g / GUIDE_CELLS (a guide table: sample() searches
   * only between guide[g] and guide[g + 1], and finds what a search of the whole cdf finds).
   */
  guide: Uint32Array;
}

const GUIDE_CELLS = 1 << 16;

function guideTable(cdf: Float64Array): Uint32Array {
  const guide = new Uint32Array(GUIDE_CELLS + 1);
  let i = 0;
  for (let g = 0; g <= GUIDE_CELLS; g++) {
    while (i < cdf.length - 1 && cdf[i]! < g / GUIDE_CELLS) i++;
    guide[g] = i;
  }
  return guide;
}

export async function embeddedWordDistribution(): Promise<WordDistribution> {
  const counts = new Map<string, number>();
  for await (const c of embeddedChunks()) for (const w of c.text.split(/\s+/)) if (w) counts.set(w, (counts.get(w) ?? 0) + 1);
  const entries = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const total = entries.reduce((s, [, n]) => s + n, 0);
  const cdf = new Float64Array(entries.length);
  let acc = 0;
  entries.forEach(([, n], i) => (cdf[i] = acc += n / total));
  return { words: entries.map(([w]) => w), cdf, guide: guideTable(cdf) };
}

/** The first word whose cdf reaches r (r in [0, 1)). */
function sample(d: WordDistribution, r: number): string {
  const g = Math.floor(r * GUIDE_CELLS);
  let lo = d.guide[g]!;
  let hi = d.guide[g + 1]!;
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

/** A topic of the topical corpus: one embedded chunk's title and its title and text words (repeats kept). */
export interface Topic {
  title: string;
  words: string[];
}

/** Every embedded chunk as a topic, in corpus order. */
export async function embeddedTopics(): Promise<Topic[]> {
  const topics: Topic[] = [];
  for await (const c of embeddedChunks()) topics.push({ title: c.title, words: `${c.title} ${c.text}`.split(/\s+/).filter(Boolean) });
  return topics;
}

/** Probability that a word of a topical chunk is drawn from its main topic, and from its second one. */
export const MAIN_TOPIC_SHARE = 0.45;
export const SECOND_TOPIC_SHARE = 0.1;

/**
 * n topical chunks (see the file comment): a title and 120-180 words of text each; the same
 * topics, background and seed give the same chunks.
 */
export function* topicalChunks(n: number, topics: readonly Topic[], background: WordDistribution, seed = 1): Generator<Chunk> {
  const r = rng(seed);
  const T = topics.length;
  const main = MAIN_TOPIC_SHARE;
  const both = MAIN_TOPIC_SHARE + SECOND_TOPIC_SHARE;
  for (let i = 0; i < n; i++) {
    const first = topics[Math.floor(r() * T)]!;
    const second = topics[Math.floor(r() * T)]!;
    const count = 120 + Math.floor(r() * 61);
    const out = new Array<string>(count);
    for (let j = 0; j < count; j++) {
      const u = r();
      const from = u < main ? first.words : u < both ? second.words : undefined;
      out[j] = from ? from[Math.floor(r() * from.length)]! : sample(background, r());
    }
    yield { id: `top${String(i).padStart(8, '0')}`, title: first.title, text: out.join(' ') };
  }
}

/**
 * `count` queries of the topical corpus: each from a topic picked at random, 2-5 distinct words of
 * it that are searchable (not stopwords or punctuation for `searchable`), drawn by their count in
 * the topic, so that the documents of that topic are the relevant ones.
 */
export function topicalQueries(topics: readonly Topic[], count: number, searchable: (word: string) => boolean, seed = 1): string[] {
  const r = rng(seed ^ 0x5eed);
  const queries: string[] = [];
  while (queries.length < count) {
    const words = topics[Math.floor(r() * topics.length)]!.words.filter(searchable);
    if (words.length === 0) continue;
    const want = 2 + Math.floor(r() * 4);
    const picked = new Set<string>();
    // At most 4x as many draws as words wanted: a topic with fewer distinct words gives a shorter query.
    for (let tries = 0; picked.size < want && tries < 4 * want; tries++) picked.add(words[Math.floor(r() * words.length)]!);
    queries.push([...picked].join(' '));
  }
  return queries;
}

/** The embedded task set's questions (HotpotQA dev-500 and MuSiQue-100), in file order. */
export function embeddedQuestions(): string[] {
  const raw = gunzipSync(readFileSync(join(packageRoot(), 'data', 'embedded', 'tasks.jsonl.gz'))).toString('utf8');
  return raw.split('\n').filter((l) => l.trim()).map((l) => (JSON.parse(l) as { query: string }).query);
}

export async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
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

export type SynthKind = 'iid' | 'topical';
export const SYNTH_KINDS: readonly SynthKind[] = ['iid', 'topical'];
/** Queries of the topical corpus (the i.i.d. one uses the embedded questions). */
export const TOPICAL_QUERIES = 1000;

/** n synthetic chunks of a kind, streamed; the same kind, n and seed give the same chunks. */
export async function synthSource(kind: SynthKind, n: number, seed = 1): Promise<Iterable<Chunk>> {
  const background = await embeddedWordDistribution();
  return kind === 'iid' ? synthChunks(n, background, seed) : topicalChunks(n, await embeddedTopics(), background, seed);
}

/** The queries of a corpus kind: the embedded questions, or TOPICAL_QUERIES drawn from the topics. */
export async function synthQueries(kind: SynthKind, seed = 1): Promise<string[]> {
  if (kind === 'iid') return embeddedQuestions();
  const analyzer = new Analyzer();
  return topicalQueries(await embeddedTopics(), TOPICAL_QUERIES, (w) => analyzer.terms(w).length > 0, seed);
}

/** Write n synthetic chunks of a kind as JSONL ({id, title, text} per line). */
export async function writeSynthCorpus(path: string, n: number, seed = 1, kind: SynthKind = 'iid'): Promise<void> {
  const chunks = await synthSource(kind, n, seed);
  await writeLines(path, (function* () {
    for (const c of chunks) yield JSON.stringify(c);
  })());
}

/** Write the benchmark queries of a corpus kind as JSONL ({query} per line). */
export async function writeQueries(path: string, kind: SynthKind = 'iid', seed = 1): Promise<void> {
  await writeLines(path, (await synthQueries(kind, seed)).map((query) => JSON.stringify({ query })));
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
  const { values } = parseArgs({ options: { chunks: { type: 'string' }, out: { type: 'string' }, queries: { type: 'string' }, seed: { type: 'string' }, kind: { type: 'string' } } });
  const kind = (values.kind ?? 'iid') as SynthKind;
  if (!values.out || !values.chunks || !SYNTH_KINDS.includes(kind)) {
    console.error('usage: node dist/bench/synth.js --chunks N --out corpus.jsonl [--kind iid|topical] [--queries queries.jsonl] [--seed S]');
    process.exit(2);
  }
  const seed = Number(values.seed ?? 1);
  await writeSynthCorpus(values.out, Number(values.chunks), seed, kind);
  if (values.queries) await writeQueries(values.queries, kind, seed);
  console.log(`wrote ${values.chunks} chunks to ${values.out}${values.queries ? ` and the queries to ${values.queries}` : ''}`);
}
