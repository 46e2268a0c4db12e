/**
 * Fits the fitted corpus (fitted.ts) to real text, and shows how well it matches.
 *
 *   node dist/bench/corpora/fit.js [--profiles embedded,manpages] [--man-root DIR] [--rounds 3]
 *                                  [--params bench/corpora/fitted-params.json] [--stats bench/results/corpus-stats.json]
 *
 * For each real corpus (the embedded Wikipedia paragraphs with the embedded questions as queries;
 * the man pages with their descriptions as queries, manpages.ts):
 * 1. reads it through sleuth's Analyzer and takes what the model copies: the head's words and
 *    counts, the tail's mass, the stopwords' share, the lengths of passages, articles and queries;
 * 2. fits the four parameters the model cannot copy, one at a time, each by bisection on the
 *    statistic it drives most (stats.ts), for --rounds rounds, generating a corpus of the real one's
 *    size each time: the tail's exponent on the vocabulary, the topic share on burstiness, the
 *    share of query terms taken from their passage on query co-occurrence (pair lift), the query
 *    terms' preference for the passage's rarer terms on query-term df;
 * 3. measures the real corpus, the fitted one and the old synthetic corpora (iid, topical) at the
 *    real size and at an eighth of it, from their text, the same way.
 * Writes the profiles into --params (a profile not fitted in this run stays as it was) and the
 * statistics into --stats (rows keyed by corpus, profile and size; other rows kept), and prints the
 * table. A corpus that is not on this machine (no man pages) is skipped with the reason.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Chunk } from '../../src/corpus/chunk.js';
import { embeddedChunks } from '../../src/corpus/embedded.js';
import { Analyzer } from '../../src/search/index.js';
import { badFlag, benchArgs, wholeFlag } from '../args.js';
import { loadNow, machineOf } from '../measure.js';
import { embeddedQuestions, synthQueries, synthSource } from '../synth.js';
import { FittedModel, type FittedParams, type FittedProfile } from './fitted.js';
import { DEFAULT_MAN_ROOT, manPassages, manQueries } from './manpages.js';
import { StatsAccumulator, TermNumbers, textStats, type CorpusStats } from './stats.js';

/** A term in the head: it occurs this often or more in the real corpus. */
const HEAD_MIN_COUNT = 5;
/** Stopwords kept in a profile (the most frequent; the rest are rare). */
const STOPWORDS_KEPT = 200;
/** Fixed parts of the topic model (fitted.ts): words per article topic, and the most common terms, which topics leave to the background. */
const TOPIC_SIZE = 64;
const TOPIC_MIN_RANK = 10;
/** Queries generated for the fit and the table (the real corpora have 600 and 1,000). */
const QUERIES = 1000;

interface RealCorpus {
  name: string;
  describe: string;
  chunks: () => Iterable<Chunk> | AsyncIterable<Chunk>;
  /** The article a chunk belongs to (its page, its title). */
  article: (c: Chunk) => string;
  queries: () => string[];
}

function realCorpora(manRoot: string): Record<string, RealCorpus> {
  const analyzer = new Analyzer();
  return {
    embedded: {
      name: 'embedded',
      describe: 'the embedded corpus (HotpotQA and MuSiQue Wikipedia paragraphs), its questions as queries',
      chunks: () => embeddedChunks(),
      article: (c) => c.title,
      queries: () => embeddedQuestions(),
    },
    manpages: {
      name: 'manpages',
      describe: `the English man pages under ${manRoot === DEFAULT_MAN_ROOT ? 'the default man root' : 'the given man root'} in passages of 150 words, their descriptions as queries`,
      chunks: () => manPassages(manRoot),
      article: (c) => c.id.slice(0, c.id.lastIndexOf('#')),
      queries: () => manQueries(manRoot, (s) => analyzer.terms(s).length),
    },
  };
}

function quantiles(xs: number[]): number[] {
  const s = Float64Array.from(xs).sort();
  return Array.from({ length: 101 }, (_, i) => s[Math.min(s.length - 1, Math.floor((i / 100) * s.length))]!);
}

/** What a real corpus gives the model directly, and its statistics. */
async function readReal(corpus: RealCorpus): Promise<{ profile: FittedProfile; stats: CorpusStats; chunks: number }> {
  const analyzer = new Analyzer();
  const numbers = new TermNumbers();
  const queries = corpus.queries();
  const acc = new StatsAccumulator(queries.map((q) => analyzer.terms(q).map((t) => numbers.id(t))));
  const surfaces = new Map<string, Map<string, number>>();
  const counts = new Map<string, number>();
  const stopCounts = new Map<string, number>();
  const passageTerms: number[] = [];
  const articles = new Map<string, number>();
  let words = 0;
  let stops = 0;
  for await (const c of corpus.chunks()) {
    const terms: number[] = [];
    analyzer.forEachWord(`${c.title} ${c.text}`, (word) => {
      words++;
      const term = analyzer.term(word);
      if (term === null) {
        stops++;
        const w = word.toLowerCase();
        stopCounts.set(w, (stopCounts.get(w) ?? 0) + 1);
        return;
      }
      terms.push(numbers.id(term));
      counts.set(term, (counts.get(term) ?? 0) + 1);
      let s = surfaces.get(term);
      if (!s) surfaces.set(term, (s = new Map()));
      s.set(word, (s.get(word) ?? 0) + 1);
    });
    acc.addChunk(terms);
    passageTerms.push(terms.length);
    const a = corpus.article(c);
    articles.set(a, (articles.get(a) ?? 0) + 1);
  }
  const byCount = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const head = byCount.filter(([, n]) => n >= HEAD_MIN_COUNT);
  const total = byCount.reduce((s, [, n]) => s + n, 0);
  const headTotal = head.reduce((s, [, n]) => s + n, 0);
  // A term's word: the way it is most often written (ties: the first in sort order).
  const wordOf = (term: string) => [...surfaces.get(term)!].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
  const stopList = [...stopCounts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, STOPWORDS_KEPT);
  const queryLengths: number[] = [];
  for (const q of queries) {
    const n = new Set(analyzer.terms(q)).size;
    if (n === 0) continue;
    while (queryLengths.length < n) queryLengths.push(0);
    queryLengths[n - 1]!++;
  }
  const stats = acc.result();
  const profile: FittedProfile = {
    source: corpus.describe,
    head: { words: head.map(([t]) => wordOf(t)), counts: head.map(([, n]) => n) },
    tail: { mass: (total - headTotal) / total, exponent: 1.5 },
    stopwords: { share: stops / words, words: stopList.map(([w]) => w), counts: stopList.map(([, n]) => n) },
    passageTerms: quantiles(passageTerms),
    articlePassages: quantiles([...articles.values()]),
    topic: { size: TOPIC_SIZE, share: 0.2, minRank: TOPIC_MIN_RANK },
    queries: { lengths: queryLengths, fromPassage: 0.8, selectivity: 0.5 },
  };
  return { profile, stats, chunks: stats.chunks };
}

/** The statistics of the fitted corpus's first n passages and its queries, from the term ranks. */
function rankStats(profile: FittedProfile, n: number): CorpusStats {
  const model = new FittedModel(profile);
  const acc = new StatsAccumulator(model.rankQueries(n, QUERIES, 1));
  for (const p of model.rankPassages(n, 1)) {
    const terms = new Int32Array(p.title.length + p.text.length);
    terms.set(p.title);
    terms.set(p.text, p.title.length);
    acc.addChunk(terms);
  }
  return acc.result();
}

/**
 * Bisection of a parameter between lo and hi so that stat(param) meets target; `rising` says
 * whether the statistic grows with the parameter. Returns the last midpoint.
 */
function bisect(lo: number, hi: number, steps: number, rising: boolean, measure: (x: number) => number, target: number, integer = false): number {
  let x = (lo + hi) / 2;
  for (let i = 0; i < steps; i++) {
    x = integer ? Math.round((lo + hi) / 2) : (lo + hi) / 2;
    const v = measure(x);
    if (v < target === rising) lo = x;
    else hi = x;
    if (integer && hi - lo <= 1) break;
  }
  return x;
}

function fitProfile(profile: FittedProfile, real: CorpusStats, n: number, rounds: number, log: (s: string) => void): FittedProfile {
  const p: FittedProfile = structuredClone(profile);
  const show = (s: CorpusStats) => `V ${s.vocabulary} (real ${real.vocabulary}), beta ${s.heaps_beta.toFixed(3)} (${real.heaps_beta.toFixed(3)}), burstiness ${s.burstiness.toFixed(3)} (${real.burstiness.toFixed(3)}), lift ${s.query_pair_lift.toFixed(2)} (${real.query_pair_lift.toFixed(2)}), query-term df ${(100 * s.query_df_median).toFixed(2)}% (${(100 * real.query_df_median).toFixed(2)}%)`;
  // The topic share can be at most the mass of the ranks topics draw from (less a margin).
  const total = p.head.counts.reduce((s, c) => s + c, 0);
  const below = p.head.counts.slice(0, p.topic.minRank).reduce((s, c) => s + c, 0);
  const topicCeiling = () => Math.min(0.95, (1 - below / total) * (1 - p.tail.mass) + (p.topic.tail ? p.tail.mass : 0) - 0.01);
  // Topics draw from the tail too unless that keeps the vocabulary from growing to the real one's.
  p.topic.tail = true;
  for (let round = 0; round < rounds; round++) {
    p.tail.exponent = bisect(1.05, 4, 12, false, (x) => rankStats({ ...p, tail: { ...p.tail, exponent: x } }, n).vocabulary, real.vocabulary);
    p.topic.share = bisect(0, topicCeiling(), 10, false, (x) => rankStats({ ...p, topic: { ...p.topic, share: x } }, n).burstiness, real.burstiness);
    p.queries.fromPassage = bisect(0, 1, 10, true, (x) => rankStats({ ...p, queries: { ...p.queries, fromPassage: x } }, n).query_pair_lift, real.query_pair_lift);
    p.queries.selectivity = bisect(0, 2, 10, false, (x) => rankStats({ ...p, queries: { ...p.queries, selectivity: x } }, n).query_df_median, real.query_df_median);
    const vocabulary = rankStats(p, n).vocabulary;
    // Judged after two rounds: the topic share fitted after the exponent moves the vocabulary.
    if (p.topic.tail && round >= 1 && Math.abs(vocabulary - real.vocabulary) > 0.05 * real.vocabulary) {
      log(`  round ${round + 1}: vocabulary ${vocabulary} with topics drawing from the tail, real ${real.vocabulary}: topics leave the tail to the background from now on`);
      p.topic.tail = false;
      p.topic.share = Math.min(p.topic.share, topicCeiling());
      rounds++;
      continue;
    }
    log(`  round ${round + 1}: tail exponent ${p.tail.exponent.toFixed(3)}, topic share ${p.topic.share.toFixed(3)}, from passage ${p.queries.fromPassage.toFixed(3)}, query selectivity ${p.queries.selectivity.toFixed(3)}; ${show(rankStats(p, n))}`);
  }
  const round4 = (x: number) => Number(x.toFixed(4));
  p.tail.exponent = round4(p.tail.exponent);
  p.topic.share = round4(p.topic.share);
  p.queries.selectivity = round4(p.queries.selectivity);
  p.queries.fromPassage = round4(p.queries.fromPassage);
  p.tail.mass = Number(p.tail.mass.toFixed(6));
  p.stopwords.share = round4(p.stopwords.share);
  return p;
}

export interface StatsRow extends CorpusStats {
  corpus: string;
  /** The real corpus this row is compared with (the profile fitted to it). */
  against: string;
  date: string;
}

async function firstN<T>(it: Iterable<T> | AsyncIterable<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) {
    if (out.length >= n) break;
    out.push(x);
  }
  return out;
}

const fmt = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : '-');
export function statsTable(rows: StatsRow[]): string {
  const head = '| against | corpus | chunks | terms | vocabulary | Heaps β | Zipf head | Zipf tail | burstiness | query terms | query-term df (median) | (p90) | postings/query ÷ N | query pair lift |';
  const lines = rows.map((r) => `| ${r.against} | ${r.corpus} | ${r.chunks.toLocaleString('en-US')} | ${r.terms.toLocaleString('en-US')} | ${r.vocabulary.toLocaleString('en-US')} | ${fmt(r.heaps_beta, 3)} | ${fmt(r.zipf_head, 3)} | ${fmt(r.zipf_tail, 3)} | ${fmt(r.burstiness, 3)} | ${fmt(r.query_terms, 2)} | ${fmt(100 * r.query_df_median, 2)}% | ${fmt(100 * r.query_df_p90, 1)}% | ${fmt(r.query_postings_median, 3)} | ${fmt(r.query_pair_lift, 2)} |`);
  return [head, head.replace(/[^|]+/g, (c) => '-'.repeat(Math.max(3, c.length))), ...lines].join('\n');
}

async function main(): Promise<void> {
  const { values } = benchArgs(
    { profiles: { type: 'string' }, 'man-root': { type: 'string' }, rounds: { type: 'string' }, params: { type: 'string' }, stats: { type: 'string' } },
    `usage: node dist/bench/corpora/fit.js [--profiles embedded,manpages] [--man-root DIR] [--rounds N]
                                  [--params FILE] [--stats FILE]

Fits the fitted corpus's profiles to the real corpora (--profiles, default both; manpages reads
--man-root, default ${DEFAULT_MAN_ROOT}) in --rounds rounds (default 3), writes them into --params
(default bench/corpora/fitted-params.json) and the comparison of real, fitted, topical and iid
text into --stats (default bench/results/corpus-stats.json), and prints the table.`,
  );
  const manRoot = values['man-root'] ?? DEFAULT_MAN_ROOT;
  const corpora = realCorpora(manRoot);
  const names = (values.profiles ?? 'embedded,manpages').split(',').filter(Boolean);
  for (const n of names) if (!(n in corpora)) badFlag(`--profiles: unknown corpus '${n}' (known: ${Object.keys(corpora).join(', ')})`);
  const rounds = values.rounds === undefined ? 3 : wholeFlag(values, 'rounds', 1);
  const paramsPath = values.params ?? join('bench', 'corpora', 'fitted-params.json');
  const statsPath = values.stats ?? join('bench', 'results', 'corpus-stats.json');
  const params: FittedParams = existsSync(paramsPath) ? (JSON.parse(readFileSync(paramsPath, 'utf8')) as FittedParams) : { note: '', profiles: {} };
  const loadAtStart = loadNow();
  const date = new Date().toISOString();
  const rows: StatsRow[] = [];
  const log = (s: string) => process.stderr.write(`${s}\n`);
  for (const name of names) {
    const corpus = corpora[name]!;
    if (name === 'manpages' && !existsSync(manRoot)) {
      log(`manpages: skipped, ${manRoot} does not exist (install man pages, or pass --man-root)`);
      continue;
    }
    log(`${name}: reading ${corpus.describe}`);
    const real = await readReal(corpus);
    log(`  ${real.chunks.toLocaleString('en-US')} chunks, ${real.stats.terms.toLocaleString('en-US')} terms, head ${real.profile.head.words.length.toLocaleString('en-US')} terms; fitting`);
    const profile = fitProfile(real.profile, real.stats, real.chunks, rounds, log);
    params.profiles[name] = profile;
    // The table: real, fitted, topical and iid text, at the real size and an eighth of it.
    const model = new FittedModel(profile);
    const queries = corpus.queries();
    for (const n of [real.chunks, Math.round(real.chunks / 8)]) {
      log(`  measuring at ${n.toLocaleString('en-US')} chunks`);
      const add = (corpusName: string, s: CorpusStats) => rows.push({ corpus: corpusName, against: name, date, ...s });
      add('real', n === real.chunks ? real.stats : await textStats(await firstN(corpus.chunks(), n), queries));
      add('fitted', await textStats(model.passages(n, 1), model.queries(n, QUERIES, 1)));
      add('topical', await textStats(await synthSource('topical', n, 1), await synthQueries('topical', 1)));
      add('iid', await textStats(await synthSource('iid', n, 1), await synthQueries('iid', 1)));
    }
  }
  params.note = `Fitted by bench/corpora/fit.ts (${rounds} rounds); see bench/corpora/fitted.ts for the model and docs/search-benchmarks.md for the fit.`;
  mkdirSync(dirname(paramsPath), { recursive: true });
  writeFileSync(`${paramsPath}.tmp`, JSON.stringify(params) + '\n');
  renameSync(`${paramsPath}.tmp`, paramsPath);
  // Rows of corpora not measured in this run stay.
  const previous = existsSync(statsPath) ? (JSON.parse(readFileSync(statsPath, 'utf8')) as { rows?: StatsRow[] } & Record<string, unknown>) : {};
  const same = (a: StatsRow, b: StatsRow) => a.corpus === b.corpus && a.against === b.against && a.chunks === b.chunks;
  const all = [...(previous.rows ?? []).filter((r) => !rows.some((x) => same(x, r))), ...rows];
  mkdirSync(dirname(statsPath), { recursive: true });
  writeFileSync(`${statsPath}.tmp`, JSON.stringify({ ...previous, machine: machineOf(loadAtStart), rows: all }, null, 2) + '\n');
  renameSync(`${statsPath}.tmp`, statsPath);
  console.log(statsTable(rows));
  console.log(`\nwrote ${paramsPath} and ${statsPath}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
