import { z } from 'zod';
import { porter2 } from './porter2.js';
import { ENGLISH_STOPWORDS } from './stopwords.js';
import { scanWords } from './tokenize.js';

/**
 * How text becomes terms. Recorded in the index manifest so that queries are analyzed exactly as
 * the documents were; an index built with another configuration is read with that configuration.
 */
export const AnalyzerConfig = z.object({
  /** Fold to lower case (Unicode-aware). */
  lowercase: z.boolean().default(true),
  /** 'english' = the built-in list, 'none' = keep every word, or an explicit list (lower case). */
  stopwords: z.union([z.literal('english'), z.literal('none'), z.array(z.string())]).default('english'),
  /** 'porter2' = Snowball English, 'none' = keep surface forms. */
  stemmer: z.enum(['porter2', 'none']).default('porter2'),
  /** Tokens shorter than this (in code points) are dropped. */
  minTokenLength: z.number().int().min(1).default(1),
  /** Tokens longer than this are dropped (base64 blobs, hashes, tables flattened to one "word"). */
  maxTokenLength: z.number().int().min(1).default(64),
});
export type AnalyzerConfig = z.infer<typeof AnalyzerConfig>;
export type AnalyzerOptions = z.input<typeof AnalyzerConfig>;

/**
 * Words are split by scanWords (src/search/tokenize.ts): runs of letters, combining marks and
 * digits, joined by apostrophes ("o'neill", "kiss's") so that Porter2's possessive step sees them.
 * Curly apostrophes are folded to ASCII before a word is analyzed.
 */
const CURLY_ALL = /[\u2019\u02bc]/gu;

export interface TokenSpan {
  term: string;
  /** UTF-16 offsets into the original string. */
  start: number;
  end: number;
}

export class Analyzer {
  readonly config: AnalyzerConfig;
  private readonly stop: ReadonlySet<string>;
  /** Surface form (already lower-cased) -> term, or null for a dropped word. Bounded by vocabulary. */
  private readonly cache = new Map<string, string | null>();

  constructor(options: AnalyzerOptions = {}) {
    this.config = AnalyzerConfig.parse(options);
    const sw = this.config.stopwords;
    this.stop = new Set(sw === 'english' ? ENGLISH_STOPWORDS : sw === 'none' ? [] : sw);
  }

  /** The term a surface word (as it appears in the text) maps to, or null when it is dropped. */
  term(word: string): string | null {
    let t = this.cache.get(word);
    if (t !== undefined) return t;
    t = this.analyzeWord(this.config.lowercase ? word.toLowerCase() : word);
    // The cache is a speed-up only; cap it so a corpus of unique numbers cannot grow it without bound.
    if (this.cache.size < 4_000_000) this.cache.set(word, t);
    return t;
  }

  private analyzeWord(word: string): string | null {
    if (word.includes('\u2019') || word.includes('\u02bc')) word = word.replace(CURLY_ALL, "'");
    const len = [...word].length;
    if (len < this.config.minTokenLength || len > this.config.maxTokenLength) return null;
    if (this.stop.has(word)) return null;
    // Possessive forms of stopwords ("it's") are stopwords too.
    if (word.includes("'") && this.stop.has(word.slice(0, word.indexOf("'")))) return null;
    if (this.config.stemmer === 'porter2') {
      const stem = porter2(word);
      return stem.length > 0 ? stem : null;
    }
    return word;
  }

  /**
   * Calls fn with each word of the text as it appears (before lower-casing) and its UTF-16 span.
   * term(word) maps a word to its term; the indexer caches that per distinct word.
   */
  forEachWord(text: string, fn: (word: string, start: number, end: number) => void): void {
    scanWords(text, (start, end) => fn(text.slice(start, end), start, end));
  }

  /** Calls fn with each term (stopwords dropped) and its UTF-16 span in the text, in order. */
  forEachTerm(text: string, fn: (term: string, start: number, end: number) => void): void {
    this.forEachWord(text, (word, start, end) => {
      const t = this.term(word);
      if (t !== null) fn(t, start, end);
    });
  }

  /** Terms of a text in order, stopwords removed. */
  terms(text: string): string[] {
    const out: string[] = [];
    this.forEachTerm(text, (t) => out.push(t));
    return out;
  }

  /** Terms with their offsets in the text, for snippets. */
  spans(text: string): TokenSpan[] {
    const out: TokenSpan[] = [];
    this.forEachTerm(text, (term, start, end) => out.push({ term, start, end }));
    return out;
  }
}
