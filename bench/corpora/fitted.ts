/**
 * The fitted corpus: a generator of passages whose statistics at scale follow real text's, with
 * its parameters fitted to a real corpus by fit.ts (bench/corpora/fitted-params.json holds one
 * profile per real corpus). The model, per passage:
 *
 * - Terms by rank. The head (the real corpus's terms that occur 5 times or more) keeps the real
 *   frequencies and the real words; past it a power law r^-tailExponent with the real corpus's
 *   remaining mass goes on without end, its words made up (pseudoWord), so the vocabulary keeps
 *   growing with the corpus as real vocabularies do (Heaps) instead of running out.
 * - Articles. Passages come in articles of several (the real corpus's passages per page or title).
 *   Each article has a topic: `topic.size` words drawn from the terms of rank topic.minRank or
 *   more (the tail's only with topic.tail), used with weights 1/(j+1). A passage's term is its article's topic word with probability
 *   topic.share, otherwise drawn from the background, which is the rank distribution with the
 *   topics' share taken out, so that a term's overall frequency stays the real one. Topics are what
 *   make words come together in a passage (burstiness).
 * - Lengths (terms per passage, passages per article) are drawn from the real corpus's quantiles;
 *   stopwords, which the index drops, are put back between terms at the real share, so that the
 *   text reads at the real length and the analyzer has them to drop.
 * - Queries are written from passages, as HotpotQA's questions were (rankQueries).
 *
 * Every draw comes from seeded generators, so the same profile, size and seed give the same bytes;
 * a corpus of n passages is the first n passages of any larger one with the same seed. The
 * passages are made in a stream: 21M of them never sit in memory at once.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Chunk } from '../../src/corpus/chunk.js';
import { rng } from '../synth.js';

/** One fitted profile (fit.ts writes them; see the file comment for what each part drives). */
export interface FittedProfile {
  /** The real corpus it was fitted on, in words. */
  source: string;
  /** The head: real words (as they most often appear) and their counts, most frequent first. */
  head: { words: string[]; counts: number[] };
  /** The share of all terms past the head, and the exponent of the power law they follow. */
  tail: { mass: number; exponent: number };
  /** Stopwords put back: the share of words that are stopwords, and which, with their counts. */
  stopwords: { share: number; words: string[]; counts: number[] };
  /** Quantiles (0%, 1%, ..., 100%) of terms per passage and of passages per article. */
  passageTerms: number[];
  articlePassages: number[];
  /**
   * Article topics: `size` words of rank minRank or more each; a passage's term is one of its
   * article's with probability `share`. With `tail`, topic words come from the tail too (rare words
   * repeat in their article, as names do, so they stay bursty at any size); without, the tail is
   * left to the background (fit.ts turns it off where the vocabulary cannot grow enough with it).
   */
  topic: { size: number; share: number; minRank: number; tail?: boolean };
  /**
   * Terms per query: counts of queries with 1, 2, ... terms; the share of a query's terms taken from
   * its passage (the others are any terms, at their overall frequencies: a question's own wording,
   * or words of another passage it needs); how strongly those prefer the passage's rarer terms.
   */
  queries: { lengths: number[]; fromPassage: number; selectivity: number };
}

export interface FittedParams {
  /** How the profiles were made (fit.ts's command, the date). */
  note: string;
  profiles: Record<string, FittedProfile>;
}

/** The committed parameters: beside this file's source (run from bench/ or built into dist/bench/). */
export const FITTED_PARAMS = [new URL('fitted-params.json', import.meta.url), new URL('../../../bench/corpora/fitted-params.json', import.meta.url)]
  .map((u) => fileURLToPath(u))
  .find((p) => existsSync(p)) ?? 'bench/corpora/fitted-params.json';

export function loadFittedParams(path = FITTED_PARAMS): FittedParams {
  if (!existsSync(path)) throw new Error(`fitted corpus: ${path} does not exist (run node dist/bench/corpora/fit.js to make it)`);
  return JSON.parse(readFileSync(path, 'utf8')) as FittedParams;
}

/** The profile the fitted corpus uses by default: Wikipedia paragraphs, what the RL corpora hold. */
export const DEFAULT_PROFILE = 'embedded';

/** A model of a profile in the committed parameters, with a clear error for an unknown one. */
export function fittedModel(profile = DEFAULT_PROFILE, params = loadFittedParams()): FittedModel {
  const p = params.profiles[profile];
  if (!p) throw new Error(`fitted corpus: no profile '${profile}' in the fitted parameters (known: ${Object.keys(params.profiles).join(', ')})`);
  return new FittedModel(p);
}


/** 32-bit mix of two integers to a uniform number in [0, 1) (a topic's j-th word from the article's seed). */
function hashUniform(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be59b, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

const GUIDE_CELLS = 1 << 16;

/**
 * Draws ranks (0-based) from head weights for ranks 0..H-1 and, with the remaining mass, a power
 * law r^-exponent past the head (continuous inversion, rounded: the discrete law's tail to within
 * rounding).
 */
export class RankSampler {
  private readonly cdf: Float64Array;
  private readonly guide: Uint32Array;
  private readonly headMass: number;

  constructor(headWeights: Float64Array, private readonly tailMass: number, private readonly exponent: number) {
    const total = headWeights.reduce((s, w) => s + w, 0) + tailMass;
    this.cdf = new Float64Array(headWeights.length);
    let acc = 0;
    for (let i = 0; i < headWeights.length; i++) this.cdf[i] = acc += headWeights[i]! / total;
    this.headMass = acc;
    this.guide = new Uint32Array(GUIDE_CELLS + 1);
    let i = 0;
    for (let g = 0; g <= GUIDE_CELLS; g++) {
      while (i < this.cdf.length - 1 && this.cdf[i]! < (g / GUIDE_CELLS) * this.headMass) i++;
      this.guide[g] = i;
    }
  }

  /** The probability of a rank. */
  probability(rank: number): number {
    const H = this.cdf.length;
    if (rank < H) return this.cdf[rank]! - (rank > 0 ? this.cdf[rank - 1]! : 0);
    // The continuous tail's mass between rank - 0.5 and rank + 0.5, past the head.
    const a = this.exponent - 1;
    const tail = 1 - this.headMass;
    return tail * (Math.pow((rank + 0.5) / (H + 0.5), -a) - Math.pow((rank + 1.5) / (H + 0.5), -a));
  }

  /** The rank for a uniform u in [0, 1). */
  sample(u: number): number {
    if (u >= this.headMass && this.tailMass > 0) {
      // Past the head: the power law from rank H (0-based), by inversion of its continuous form.
      const v = (u - this.headMass) / (1 - this.headMass);
      const H = this.cdf.length;
      const x = (H + 0.5) * Math.pow(1 - v, -1 / (this.exponent - 1));
      return Math.min(2 ** 31 - 1, Math.floor(x - 0.5));
    }
    const g = Math.min(GUIDE_CELLS, Math.floor((u / this.headMass) * GUIDE_CELLS));
    let lo = this.guide[g]!;
    let hi = this.guide[Math.min(g + 1, GUIDE_CELLS)]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! <= u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** A made-up word for a rank past the head: consonant-vowel syllables and a last letter Porter2 leaves alone. */
const CONSONANTS = 'bdfghjklmnprstv';
const VOWELS = 'aeiou';
const LAST = 'bkpvxz';
export function pseudoWord(rank: number): string {
  let w = LAST[rank % LAST.length]!;
  let n = Math.floor(rank / LAST.length);
  // At least two syllables, so that no made-up word is a short real one.
  for (let s = 0; s < 2 || n > 0; s++) {
    const syllable = n % (CONSONANTS.length * VOWELS.length);
    w = CONSONANTS[Math.floor(syllable / VOWELS.length)]! + VOWELS[syllable % VOWELS.length]! + w;
    n = Math.floor(n / (CONSONANTS.length * VOWELS.length));
  }
  return w;
}

/** A value drawn from quantiles q[0..100] (linear between them) for a uniform u. */
function fromQuantiles(q: readonly number[], u: number): number {
  const x = u * (q.length - 1);
  const i = Math.floor(x);
  const a = q[i]!;
  const b = q[Math.min(i + 1, q.length - 1)]!;
  return Math.max(1, Math.round(a + (b - a) * (x - i)));
}

/** A passage as term ranks: its title's and its text's. */
export interface RankPassage {
  article: number;
  title: Int32Array;
  text: Int32Array;
}

/** Passages queries are written from: the first ones (a corpus's passages are alike all along). */
export const QUERY_POOL = 20_000;

/** Terms of a title: the article's first two topic words. */
const TITLE_TERMS = 2;
/**
 * A query term taken from its passage is drawn with weight tf^QUERY_TF_POWER * probability^-selectivity:
 * a question names what its passage is about, the terms the passage repeats, more than the words
 * it merely uses. 2 brought the man pages' query-term df (90th percentile 45% -> 19%, real 16.5%)
 * and pair lift (1.09 -> 1.4, real 1.55) near the real ones; the Wikipedia profile's barely move.
 */
const QUERY_TF_POWER = 2;

export class FittedModel {
  /** Every term at its overall frequency (what queries' non-topic terms draw from). */
  readonly overall: RankSampler;
  private readonly background: RankSampler;
  private readonly topical: RankSampler;
  private readonly topicCdf: Float64Array;
  private readonly stopCdf: Float64Array;
  readonly words: string[];

  constructor(readonly profile: FittedProfile) {
    const { head, tail, topic } = profile;
    const H = head.counts.length;
    if (topic.minRank >= H) throw new Error(`fitted profile ${profile.source}: topic.minRank ${topic.minRank} is past the head (${H} words)`);
    const total = head.counts.reduce((s, c) => s + c, 0);
    // Head probabilities scaled to leave the tail its mass.
    const p = Float64Array.from(head.counts, (c) => (c / total) * (1 - tail.mass));
    this.overall = new RankSampler(p, tail.mass, tail.exponent);
    // Topic words come from the head's ranks >= minRank at their overall frequencies, and with
    // topic.tail from the tail too: an article's own rare words (names) that it repeats.
    const topicHead = p.map((w, r) => (r >= topic.minRank ? w : 0));
    const topicTail = topic.tail ? tail.mass : 0;
    const eligible = topicHead.reduce((s, w) => s + w, 0) + topicTail;
    if (topic.share >= eligible) throw new Error(`fitted profile ${profile.source}: topic.share ${topic.share} is not below the mass topics draw from (${eligible.toFixed(3)})`);
    this.topical = new RankSampler(topicHead, topicTail, tail.exponent);
    // The background gives back what topics take: (1 - share) * background + share * topical = overall.
    const keep = (1 - topic.share / eligible) / (1 - topic.share);
    const bgHead = p.map((w, r) => (r >= topic.minRank ? w * keep : w / (1 - topic.share)));
    this.background = new RankSampler(bgHead, topic.tail ? tail.mass * keep : tail.mass / (1 - topic.share), tail.exponent);
    this.topicCdf = cdfOf(Array.from({ length: topic.size }, (_, j) => 1 / (j + 1)));
    this.stopCdf = cdfOf(profile.stopwords.counts);
    this.words = head.words;
  }

  /** The j-th topic word (a rank) of an article. */
  topicWord(articleSeed: number, j: number): number {
    return this.topical.sample(hashUniform(articleSeed, j));
  }

  private topicIndex(u: number): number {
    return searchCdf(this.topicCdf, u);
  }

  /** The word for a rank: the real word in the head, a made-up one past it. */
  word(rank: number): string {
    return rank < this.words.length ? this.words[rank]! : pseudoWord(rank);
  }

  /** Article lengths (passages), in order: the stream both the passages and the queries follow. */
  *articleLengths(seed: number): Generator<number> {
    const r = rng(seed ^ 0xa271c1e5);
    for (;;) yield fromQuantiles(this.profile.articlePassages, r());
  }

  /** The first n passages as term ranks. */
  *rankPassages(n: number, seed = 1): Generator<RankPassage> {
    const r = rng(seed);
    const lengths = this.articleLengths(seed);
    const { share, size } = this.profile.topic;
    let article = -1;
    let left = 0;
    let articleSeed = 0;
    const topic = new Int32Array(size);
    for (let i = 0; i < n; i++) {
      if (left === 0) {
        article++;
        left = lengths.next().value as number;
        articleSeed = Math.imul(article + 1, 0x9e3779b1) ^ seed;
        // -1: not drawn yet (a passage draws only the topic words it uses).
        topic.fill(-1);
      }
      left--;
      const topicWord = (j: number) => (topic[j] !== -1 ? topic[j]! : (topic[j] = this.topicWord(articleSeed, j)));
      const title = new Int32Array(TITLE_TERMS);
      for (let j = 0; j < TITLE_TERMS; j++) title[j] = topicWord(j);
      const count = Math.max(1, fromQuantiles(this.profile.passageTerms, r()) - TITLE_TERMS);
      const text = new Int32Array(count);
      for (let k = 0; k < count; k++) text[k] = r() < share ? topicWord(this.topicIndex(r())) : this.background.sample(r());
      yield { article, title, text };
    }
  }

  /** The first n passages as text, stopwords put back between the terms at the real share. */
  *passages(n: number, seed = 1): Generator<Chunk> {
    const stops = rng(seed ^ 0x570b);
    const { share } = this.profile.stopwords;
    const stopWords = this.profile.stopwords.words;
    let i = 0;
    for (const p of this.rankPassages(n, seed)) {
      const title = Array.from(p.title, (rank) => capitalize(this.word(rank))).join(' ');
      let text = '';
      for (let k = 0; k < p.text.length; k++) {
        // Stopwords before each term: a geometric number, share / (1 - share) on average.
        while (stops() < share) text += stopWords[searchCdf(this.stopCdf, stops())] + ' ';
        text += this.word(p.text[k]!) + (k + 1 < p.text.length ? ' ' : '');
      }
      yield { id: `fit${String(i++).padStart(8, '0')}`, title, text };
    }
  }

  /** A term's overall probability (of all terms), by rank. */
  probability(rank: number): number {
    return this.overall.probability(rank);
  }

  /**
   * `count` queries, each written from a passage of the first min(n, QUERY_POOL) at random, as
   * term ranks: its length from the real queries' lengths; each term, with probability
   * queries.fromPassage, one of the passage's terms not taken yet, drawn with weight
   * tf^QUERY_TF_POWER * probability^-selectivity (a question names what the passage is about and
   * what is particular to it more than its common words), otherwise any term at its overall frequency.
   */
  rankQueries(n: number, count: number, seed = 1): number[][] {
    const pool = Math.min(n, QUERY_POOL);
    const r = rng(seed ^ 0x9e5eed);
    const lengthCdf = cdfOf(this.profile.queries.lengths);
    const wanted = Array.from({ length: count }, () => ({ passage: Math.floor(r() * pool), terms: searchCdf(lengthCdf, r()) + 1 }));
    const byPassage = new Map<number, number[]>();
    wanted.forEach((w, q) => byPassage.set(w.passage, [...(byPassage.get(w.passage) ?? []), q]));
    const out: number[][] = new Array(count);
    const gamma = this.profile.queries.selectivity;
    let i = 0;
    for (const p of this.rankPassages(pool, seed)) {
      for (const q of byPassage.get(i++) ?? []) {
        const tf = new Map<number, number>();
        for (const rank of [...p.title, ...p.text]) tf.set(rank, (tf.get(rank) ?? 0) + 1);
        const distinct = [...tf.keys()];
        const weights = distinct.map((rank) => Math.pow(tf.get(rank)!, QUERY_TF_POWER) * Math.pow(this.probability(rank), -gamma));
        const terms = new Set<number>();
        let left = distinct.length;
        // At most 4x as many draws as terms wanted: a passage may not have enough.
        for (let tries = 0; terms.size < wanted[q]!.terms && tries < 4 * wanted[q]!.terms; tries++) {
          if (r() >= this.profile.queries.fromPassage || left === 0) {
            terms.add(this.overall.sample(r()));
            continue;
          }
          const total = weights.reduce((s, w) => s + w, 0);
          let u = r() * total;
          let k = 0;
          while (k < weights.length - 1 && (u -= weights[k]!) >= 0) k++;
          terms.add(distinct[k]!);
          weights[k] = 0;
          left--;
        }
        out[q] = [...terms];
      }
    }
    return out;
  }

  /** The queries as text. */
  queries(n: number, count: number, seed = 1): string[] {
    return this.rankQueries(n, count, seed).map((q) => q.map((rank) => this.word(rank)).join(' '));
  }
}

function capitalize(w: string): string {
  return w.charAt(0).toUpperCase() + w.slice(1);
}

function cdfOf(weights: readonly number[]): Float64Array {
  const total = weights.reduce((s, w) => s + w, 0);
  const cdf = new Float64Array(weights.length);
  let acc = 0;
  weights.forEach((w, i) => (cdf[i] = acc += w / total));
  cdf[cdf.length - 1] = 1;
  return cdf;
}

/** The first index whose cdf value exceeds u. */
function searchCdf(cdf: Float64Array, u: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cdf[mid]! <= u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
