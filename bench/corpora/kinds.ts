/**
 * The corpora the search benchmarks run on, by name (--corpus / --corpora):
 *
 * - fitted: the fitted generator (fitted.ts) with the profile fitted to the embedded Wikipedia
 *   paragraphs; its queries are written from its passages. Any size, streamed.
 * - manpages: real text, the installed English man pages in passages (manpages.ts), their one-line
 *   descriptions as queries. As many chunks as the pages make (about 50,000 on Debian 12 with the
 *   usual packages); a larger size asked for is that size.
 * - topical, iid: the earlier synthetic corpora (bench/synth.ts), kept for comparison.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Chunk } from '../../src/corpus/chunk.js';
import { Analyzer } from '../../src/search/index.js';
import { synthQueries, synthSource, writeLines } from '../synth.js';
import { DEFAULT_PROFILE, fittedModel, loadFittedParams } from './fitted.js';
import { DEFAULT_MAN_ROOT, manPassages, manQueries } from './manpages.js';

export type CorpusKind = 'fitted' | 'manpages' | 'topical' | 'iid';
export const CORPUS_KINDS: readonly CorpusKind[] = ['fitted', 'manpages', 'topical', 'iid'];
/** Queries of the fitted corpus. */
export const FITTED_QUERIES = 1000;

export function isCorpusKind(name: string): name is CorpusKind {
  return (CORPUS_KINDS as readonly string[]).includes(name);
}

/**
 * What a corpus file written before must match to be reused: for the fitted corpus, a digest of its
 * profile (a refit changes the text); '' for the others.
 */
export function corpusVersion(kind: CorpusKind): string {
  if (kind !== 'fitted') return '';
  return createHash('sha256').update(JSON.stringify(loadFittedParams().profiles[DEFAULT_PROFILE])).digest('hex').slice(0, 8);
}

/** Why a corpus cannot be made on this machine, or undefined when it can. */
export function corpusMissing(kind: CorpusKind, manRoot = DEFAULT_MAN_ROOT): string | undefined {
  if (kind === 'manpages' && !existsSync(manRoot)) return `no man pages at ${manRoot} (install manpages and the packages whose pages to read, or pass --man-root)`;
  return undefined;
}

/** The first n chunks of a corpus (fewer for manpages when the pages make fewer), streamed; the same kind, n and seed give the same chunks. */
export async function corpusSource(kind: CorpusKind, n: number, seed = 1, manRoot = DEFAULT_MAN_ROOT): Promise<Iterable<Chunk>> {
  if (kind === 'fitted') return fittedModel().passages(n, seed);
  if (kind === 'manpages') return firstN(manPassages(manRoot), n);
  return synthSource(kind, n, seed);
}

function* firstN<T>(it: Iterable<T>, n: number): Generator<T> {
  if (n <= 0) return;
  let i = 0;
  for (const x of it) {
    yield x;
    if (++i >= n) return;
  }
}

/** The queries of a corpus of n chunks (the fitted corpus writes them from its first passages, so they depend on n below QUERY_POOL). */
export async function corpusQueries(kind: CorpusKind, n: number, seed = 1, manRoot = DEFAULT_MAN_ROOT): Promise<string[]> {
  if (kind === 'fitted') return fittedModel().queries(n, FITTED_QUERIES, seed);
  if (kind === 'manpages') {
    const analyzer = new Analyzer();
    return manQueries(manRoot, (s) => analyzer.terms(s).length, seed);
  }
  return synthQueries(kind, seed);
}

/** Write a corpus as JSONL ({id, title, text} per line); returns the chunks written. */
export async function writeCorpus(path: string, kind: CorpusKind, n: number, seed = 1, manRoot = DEFAULT_MAN_ROOT): Promise<number> {
  const chunks = await corpusSource(kind, n, seed, manRoot);
  let count = 0;
  await writeLines(path, (function* () {
    for (const c of chunks) {
      count++;
      yield JSON.stringify(c);
    }
  })());
  return count;
}

/** Write a corpus's queries as JSONL ({query} per line). */
export async function writeCorpusQueries(path: string, kind: CorpusKind, n: number, seed = 1, manRoot = DEFAULT_MAN_ROOT): Promise<void> {
  await writeLines(path, (await corpusQueries(kind, n, seed, manRoot)).map((query) => JSON.stringify({ query })));
}
