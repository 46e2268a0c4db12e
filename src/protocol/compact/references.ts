import { Analyzer } from '../../search/analyzer.js';
import { candidateSpans } from './spans.js';

/**
 * References: short numbers the small local model writes instead of text it would have to copy.
 * The compact renderer numbers the question's keywords in the user message
 * (`words: 1 Corliss 2 Archer 3 Kiss 4 Tell`) and, with id aliases, every hit it shows
 * (`3 Kiss and Tell (1945 film): snippet`). A search or grep call may then name
 *
 *   q: question words, as one number, a list of numbers, or a string of numbers and spans: "1-4,7";
 *      a span without an end runs to the last word: "1-" is the whole question
 *   t: a shown hit (or a list of them), standing for its title
 *   h: a shown hit's text (the snippet the environment returned with it): a hit number for all of
 *      it, or "HIT:SPAN" for some of its words, counted from 1 by white space ("2:5-7" is words
 *      5 to 7 of hit 2's text), or a list of these. The bridge entity of a multi-hop question is
 *      in the text of the hop before it, not in its title or the question.
 *
 *   bm25_search {"q":"1-"}             → {"query":"Corliss Archer Kiss Tell"}
 *   bm25_search {"q":"1-2"}            → {"query":"Corliss Archer"}
 *   bm25_search {"t":3,"q":"2,4"}      → {"query":"Kiss and Tell (1945 film) Archer Tell"}
 *   grep_corpus {"t":3}                → {"pattern":"Kiss\\s+and\\s+Tell\\s+\\(1945\\s+film\\)"}
 *   grep_corpus {"q":"1-2"}            → {"pattern":"(?i)Corliss\\s+Archer"}
 *   bm25_search {"h":"2:5-7","q":"1-2"} → {"query":"Shirley Temple Black Corliss Archer"}
 *   bm25_search {"h":2,"q":"1-"}       → {"query":"<hit 2's text> Corliss Archer Kiss Tell"}
 *
 *   s: a candidate span of a shown hit's text (spans.ts), numbered across the episode as the hits
 *      are, shown on the hit's line (`2 Journal of Psychotherapy Integration [4-6]: 7 American
 *      Psychological Association; 8 1993`): one number, a list, or a string of spans. Without q, a
 *      search adds the question words that the span's hit lacks (its title and text): what is left
 *      to ask of the bridge entity, the next hop's words. With q, exactly those words.
 *
 *   bm25_search {"s":7}                → {"query":"American Psychological Association first president"}
 *   bm25_search {"s":7,"q":"1-"}       → {"query":"American Psychological Association <every question word>"}
 *   grep_corpus {"s":7}                → {"pattern":"American\\s+Psychological\\s+Association"}
 *   curate {"s":7}                     → the shown hits whose title or text holds span 7
 *   curate {"top":"5,3"}               → the top 5 hits of the first search or grep, the top 3 of
 *                                        each later one (the last number stands for the rest);
 *                                        one number is the top of every result list
 *
 * Hit numbers in curate and drop take the same string form: curate {"ids":"1-3,7"}. Every hit line
 * ends its title with the numbers of the question words the title contains (`3 Kiss and Tell
 * (1945 film) [3-4]: snippet`), as a search engine highlights matched terms.
 *
 * The renderer expands references before the environment sees the call, so rollouts, rewards and
 * the explorer hold the real query. A reference to a word or hit that does not exist is not run:
 * the model gets an error naming it. Teachers' calls are written the other way round (compress):
 * a query made of a shown title and question words is written as references.
 */

const ANALYZER = new Analyzer();

/**
 * The tools whose calls take references: a keyword search (its `query`) and a regex scan (its
 * `pattern`), named as the search suite's tools.ts declares them. The compact format is below the
 * suites, so it cannot read their table; test/suites/search-tools.test.ts checks these against it.
 */
export const REFERENCE_TOOLS = { search: 'bm25_search', scan: 'grep_corpus', curate: 'curate' } as const;

/**
 * The QA environment's tools (suites/qa/env.ts): a search that takes a query as bm25_search does,
 * and an answer that may name a shown span (`s`) or a shown hit's title (`t`) instead of writing it:
 *
 *   answer {"s":7}                     → {"answer":"American Psychological Association"}
 *   answer {"t":2}                     → {"answer":"<hit 2's title>"}
 *
 * The small model can point where it cannot spell a name; the answer is expanded before it is
 * scored, so rewards and the explorer see the text.
 */
export const ANSWER_TOOLS = { search: 'search', answer: 'answer' } as const;

/** Whether a tool's calls may carry references (and a prompt with such a tool gets numbered question words). */
export function takesReferences(name: string): boolean {
  return name === REFERENCE_TOOLS.search || name === REFERENCE_TOOLS.scan || name === ANSWER_TOOLS.search;
}

/** A tool whose query is built from references as bm25_search's is. */
function isQuerySearch(name: string): boolean {
  return name === REFERENCE_TOOLS.search || name === ANSWER_TOOLS.search;
}

/** Most words of the question that get numbers (the rest can still be written out). */
export const MAX_QUESTION_WORDS = 40;

type Args = Record<string, unknown>;

export type Expansion = { ok: true; arguments: unknown } | { ok: false; error: string };

/** A Python regex matching text literally: metacharacters escaped, white space as \s+ (first `words` words). */
export function literalPattern(text: string, words = 8): string {
  return text
    .split(/\s+/u)
    .filter(Boolean)
    .slice(0, words)
    .map((w) => w.replace(/[\\^$.|?*+()[\]{}]/gu, '\\$&'))
    .join('\\s+');
}

/**
 * Numbers and spans as the shortest string: [1,2,3,4,7] → "1-4,7". With `last`, a span of two or
 * more that ends at it is written open: [1,2,3,4,5] with last 5 → "1-".
 */
export function spanString(numbers: readonly number[], last?: number): string {
  const parts: string[] = [];
  for (let i = 0; i < numbers.length; ) {
    let j = i;
    while (j + 1 < numbers.length && numbers[j + 1] === numbers[j]! + 1) j++;
    parts.push(j > i ? `${numbers[i]}-${numbers[j] === last ? '' : numbers[j]}` : String(numbers[i]));
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * The numbers a model wrote as one number, a list of numbers, or a string of numbers and spans
 * ("1-4,7"; "3-" runs to `last`), each from 1 to `last`; or the first item that is not one.
 */
export function readSpans(value: unknown, last: number): { ok: true; numbers: number[] } | { ok: false; item: unknown } {
  const items = Array.isArray(value) ? value : typeof value === 'number' ? [value] : typeof value === 'string' ? value.split(',') : [value];
  const numbers: number[] = [];
  for (const item of items) {
    const m = typeof item === 'number' ? [String(item), String(item)] : typeof item === 'string' ? /^\s*(\d+)\s*(?:-\s*(\d*)\s*)?$/u.exec(item)?.slice(1) : undefined;
    if (!m) return { ok: false, item };
    const from = Number(m[0]), to = m[1] === undefined ? from : m[1] === '' ? last : Number(m[1]);
    if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to > last || from > to) return { ok: false, item };
    for (let i = from; i <= to; i++) numbers.push(i);
  }
  return numbers.length ? { ok: true, numbers } : { ok: false, item: value };
}

/** A candidate span shown in an episode: its text and the hit (alias) whose text it came from. */
export interface ShownSpan {
  text: string;
  hit: number;
}

/** One episode's references: the question's numbered words, the titles and texts of the hits shown, and their spans. */
export class EpisodeReferences {
  /** The question's keywords as written, numbered from 1; their analyzed terms beside them. */
  readonly words: string[] = [];
  private readonly terms: string[] = [];
  /** The same terms as a set (what a hit's candidate spans must bring beyond). */
  private termSet = new Set<string>();
  private readonly titles = new Map<number, string>();
  /** Each shown hit's text as the environment returned it, split into words by white space. */
  private readonly texts = new Map<number, string[]>();
  /** The candidate spans shown, numbered from 1 (spans[n - 1] is span n). */
  readonly spans: ShownSpan[] = [];
  /** Lower-cased spans shown so far (a span is shown once per episode). */
  private readonly spanKeys = new Set<string>();
  /** Each search or grep result's hits (aliases) in rank order, in the order the results came. */
  readonly lists: number[][] = [];

  /** Number the question's keywords (the words BM25 keeps), each distinct term once, in order. */
  setQuestion(question: string): void {
    this.words.length = 0;
    this.terms.length = 0;
    ANALYZER.forEachTerm(question, (term, start, end) => {
      if (this.terms.length < MAX_QUESTION_WORDS && !this.terms.includes(term)) {
        this.terms.push(term);
        this.words.push(question.slice(start, end));
      }
    });
    this.termSet = new Set(this.terms);
  }

  /** The line the user message ends with: `words: 1 Corliss 2 Archer ...` (empty without words). */
  wordsLine(): string {
    return this.words.length ? `words: ${this.words.map((w, i) => `${i + 1} ${w}`).join(' ')}` : '';
  }

  noteTitle(alias: number, title: string): void {
    if (title) this.titles.set(alias, title);
  }

  /** The text of a hit when it is first shown (a later search's snippet of it does not replace it). */
  noteText(alias: number, text: string): void {
    const words = text.split(/\s+/u).filter(Boolean);
    if (words.length && !this.texts.has(alias)) this.texts.set(alias, words);
  }

  /**
   * Number a newly shown hit's candidate spans (at most `max`) and return them as the hit line's
   * tail, `7 American Psychological Association; 8 1993` ('' when it has none).
   */
  noteSpans(alias: number, title: string, text: string, max: number): string {
    const found = candidateSpans(text, { question: this.termSet, title, seen: this.spanKeys, max });
    const first = this.spans.length + 1;
    for (const t of found) this.spans.push({ text: t, hit: alias });
    return found.map((t, i) => `${first + i} ${t}`).join('; ');
  }

  /** Note one search or grep result's hits (aliases), in rank order: what curate {"top": ...} counts in. */
  noteList(aliases: number[]): void {
    this.lists.push(aliases);
  }

  /** The hits (aliases) of curate {"top": k}: the top k_i of result list i (one k: of every list). */
  topHits(top: unknown): { ok: true; hits: number[] } | { ok: false; error: string } {
    const ks = typeof top === 'number' ? [top] : typeof top === 'string' ? top.split(',').map((x) => (/^\s*\d+\s*$/u.test(x) ? Number(x) : NaN)) : Array.isArray(top) ? top.map((x) => (typeof x === 'number' ? x : NaN)) : [NaN];
    if (!ks.length || ks.some((k) => !Number.isInteger(k) || k < 0) || ks.length > Math.max(1, this.lists.length)) {
      return { ok: false, error: `top: ${JSON.stringify(top)} is not a number of hits per result list (${this.lists.length} result lists shown; write one number for every list, or one per list, the last for the rest: "5,3")` };
    }
    return { ok: true, hits: this.topOf(ks) };
  }

  /** The hits of the top ks[i] of list i, the last number standing for every later list. */
  private topOf(ks: readonly number[]): number[] {
    const hits = new Set<number>();
    this.lists.forEach((list, i) => list.slice(0, ks[Math.min(i, ks.length - 1)]).forEach((a) => hits.add(a)));
    return [...hits].sort((a, b) => a - b);
  }

  /**
   * How curate {"top": ...} writes a set of hits (aliases), if it can, in the simplest form that
   * names exactly that set: one number for every list ("3"), else one for the first list and one
   * for every later list ("5,3"), smallest numbers first; else one per list, each the longest
   * prefix of its list inside the set. A teacher's "top 5 of the question, top 3 of each follow-up"
   * is then "5,3" in every episode, whatever the lists share.
   */
  topCovering(aliases: readonly number[]): string | undefined {
    if (!this.lists.length) return undefined;
    const want = [...new Set(aliases)].sort((a, b) => a - b).join(',');
    const longest = Math.max(...this.lists.map((l) => l.length));
    const names = (ks: number[]) => this.topOf(ks).join(',') === want;
    for (let k = 1; k <= longest; k++) if (names([k])) return String(k);
    if (this.lists.length > 1) for (let a = 0; a <= longest; a++) for (let b = 0; b <= longest; b++) if (names([a, b])) return `${a},${b}`;
    const inSet = new Set(aliases);
    const ks = this.lists.map((list) => {
      let k = 0;
      while (k < list.length && inSet.has(list[k]!)) k++;
      return k;
    });
    return names(ks) ? ks.join(',') : undefined;
  }

  /** The numbered question words (as written) that a shown hit's title and text lack, in order. */
  missingWords(alias: number): number[] {
    const have = new Set(ANALYZER.terms(this.hitText(alias)));
    return this.terms.flatMap((t, i) => (have.has(t) ? [] : [i + 1]));
  }

  /** The shown hits (aliases, ascending) whose title or text holds span n's text, ignoring case. */
  hitsWithSpan(n: number): number[] {
    const span = this.spans[n - 1];
    if (!span) return [];
    const needle = span.text.toLowerCase();
    const hits = new Set([...this.titles.keys(), ...this.texts.keys()]);
    return [...hits].filter((a) => this.hitText(a).toLowerCase().includes(needle)).sort((a, b) => a - b);
  }

  /** A shown hit's title and text as one string (what spans are found in and words checked against). */
  private hitText(alias: number): string {
    return `${this.titles.get(alias) ?? ''} ${(this.texts.get(alias) ?? []).join(' ')}`;
  }

  /** The smallest span n whose hitsWithSpan is exactly `aliases` (in any order), if any: how curate {"s":n} is written. */
  spanCovering(aliases: readonly number[]): number | undefined {
    const want = [...new Set(aliases)].sort((a, b) => a - b).join(',');
    for (let n = 1; n <= this.spans.length; n++) if (this.hitsWithSpan(n).join(',') === want) return n;
    return undefined;
  }

  /**
   * curate {"s": spans} and {"top": k} as hit numbers: the shown hits that hold any of the spans,
   * and the top k of each result list; or why a reference is wrong. Arguments without either are
   * returned as they are.
   */
  expandCurate(args: unknown): Expansion {
    if (!isObject(args) || !('s' in args || 'top' in args)) return { ok: true, arguments: args };
    const { s, top, ...rest } = args;
    const hits: number[] = [];
    if (s !== undefined) {
      const read = readSpans(s, this.spans.length);
      if (!read.ok) return { ok: false, error: this.badSpan(read.item) };
      hits.push(...read.numbers.flatMap((n) => this.hitsWithSpan(n)));
    }
    if (top !== undefined) {
      const t = this.topHits(top);
      if (!t.ok) return t;
      hits.push(...t.hits);
    }
    const given = rest.ids === undefined ? [] : Array.isArray(rest.ids) ? rest.ids : [rest.ids];
    const named = [...new Set(hits)].sort((a, b) => a - b);
    return { ok: true, arguments: { ...rest, ids: [...given, ...named.filter((h) => !given.includes(h))] } };
  }

  private badSpan(item: unknown): string {
    return `s: ${JSON.stringify(item)} is not a shown span (spans are numbered ${this.spans.length ? `1 to ${this.spans.length}` : 'from 1, and none is shown yet'})`;
  }

  /** The numbers of the question words a text contains, in order, as a span string ('' for none). */
  matchedWords(text: string): string {
    const found = new Set<number>();
    ANALYZER.forEachTerm(text, (term) => {
      const n = this.terms.indexOf(term);
      if (n >= 0) found.add(n + 1);
    });
    return spanString([...found].sort((a, b) => a - b));
  }

  /** The call's arguments with every reference replaced by its text, or why a reference is wrong. */
  expand(name: string, args: unknown): Expansion {
    if (!isObject(args) || !('q' in args || 't' in args || 'h' in args || 's' in args)) return { ok: true, arguments: args };
    if (name === ANSWER_TOOLS.answer) return this.expandAnswer(args);
    if (!takesReferences(name)) return { ok: false, error: `${name} takes no q, t, h or s references (only ${REFERENCE_TOOLS.search} and ${REFERENCE_TOOLS.scan} do; ${REFERENCE_TOOLS.curate} takes s)` };
    const { q, t, h, s, ...rest } = args;
    const titles = t === undefined ? { ok: true as const, texts: [] } : this.titleTexts(t);
    if (!titles.ok) return titles;
    const spans = h === undefined ? { ok: true as const, texts: [] } : this.hitTexts(h);
    if (!spans.ok) return spans;
    const named = s === undefined ? { ok: true as const, numbers: [] } : readSpans(s, this.spans.length);
    if (!named.ok) return { ok: false, error: this.badSpan(named.item) };
    const spanTexts = named.numbers.map((n) => this.spans[n - 1]!.text);
    // A span without q brings the question words its hit lacks: what is left to ask of it.
    const implicit = q === undefined && named.numbers.length > 0 && isQuerySearch(name);
    const words = implicit ? { ok: true as const, texts: this.missingWords(this.spans[named.numbers[0]! - 1]!.hit).map((i) => this.words[i - 1]!) } : q === undefined ? { ok: true as const, texts: [] } : this.wordTexts(q);
    if (!words.ok) return words;
    if (isQuerySearch(name)) {
      const query = [typeof rest.query === 'string' ? rest.query : '', ...titles.texts, ...spans.texts, ...spanTexts, ...words.texts].filter(Boolean).join(' ');
      return { ok: true, arguments: { ...rest, query } };
    }
    // grep: one literal phrase: a title, words of a hit's text or a span (as written), or a span of question words (any case).
    const literal = [...titles.texts, ...spans.texts, ...spanTexts];
    if (literal.length + (words.texts.length ? 1 : 0) !== 1) return { ok: false, error: `${REFERENCE_TOOLS.scan} takes one reference: t (one hit), h (one hit text), s (one span) or q (question words)` };
    const pattern = literal.length ? literalPattern(literal[0]!, 12) : `(?i)${literalPattern(words.texts.join(' '), 12)}`;
    return { ok: true, arguments: { ...rest, pattern } };
  }

  /** answer {"s": n} or {"t": n} as {"answer": text}: exactly one reference, and nothing else to answer with. */
  private expandAnswer(args: Args): Expansion {
    const { s, t, ...rest } = args;
    const given = [s, t, rest.answer].filter((v) => v !== undefined).length;
    if (given !== 1 || 'q' in rest || 'h' in rest) return { ok: false, error: `${ANSWER_TOOLS.answer} takes one of: answer (the text), s (one shown span) or t (one shown hit's title)` };
    if (s !== undefined) {
      const read = readSpans(s, this.spans.length);
      if (!read.ok || read.numbers.length !== 1) return { ok: false, error: this.badSpan(read.ok ? s : read.item) };
      return { ok: true, arguments: { ...rest, answer: this.spans[read.numbers[0]! - 1]!.text } };
    }
    const title = this.titleTexts(t);
    if (!title.ok) return title;
    if (title.texts.length !== 1) return { ok: false, error: `t: ${JSON.stringify(t)}: an answer names one hit` };
    return { ok: true, arguments: { ...rest, answer: title.texts[0]! } };
  }

  /**
   * A teacher's call as the model should write it: a search for a shown title and/or question
   * words becomes t and q; a grep for a shown title's literal pattern becomes t; an answer that is
   * a shown span or title becomes s or t. Anything else is written as is. expand(compress(call))
   * searches for the same BM25 terms as the call, and answers the same text.
   */
  compress(name: string, args: unknown): unknown {
    if (!isObject(args)) return args;
    if (name === ANSWER_TOOLS.answer && typeof args.answer === 'string' && Object.keys(args).length === 1) {
      const n = this.spans.findIndex((sp) => sp.text === args.answer);
      if (n >= 0) return { s: n + 1 };
      for (const [alias, title] of this.titles) if (title === args.answer) return { t: alias };
      return args;
    }
    if (name === REFERENCE_TOOLS.scan && typeof args.pattern === 'string') {
      for (const [alias, title] of this.titles) if (literalPattern(title, 12) === args.pattern) return { ...withoutKey(args, 'pattern'), t: alias };
      const n = this.spans.findIndex((sp) => literalPattern(sp.text, 12) === args.pattern);
      return n >= 0 ? { ...withoutKey(args, 'pattern'), s: n + 1 } : args;
    }
    if (!isQuerySearch(name) || typeof args.query !== 'string') return args;
    let rest = args.query.trim();
    // The longest shown span the query starts with: a span is one number (s), where the same
    // words as a run of its hit's text would be "HIT:A-B".
    let span: number | undefined;
    this.spans.forEach((sp, i) => {
      if ((rest === sp.text || rest.startsWith(`${sp.text} `)) && (span === undefined || sp.text.length > this.spans[span - 1]!.text.length)) span = i + 1;
    });
    if (span !== undefined) rest = rest.slice(this.spans[span - 1]!.text.length).trim();
    // Words of a shown hit's text the query starts with: all of it (h: N), or the longest run (h: "N:A-B").
    const h = span === undefined ? this.textPrefix(rest) : undefined;
    if (h !== undefined) rest = rest.slice(h.length).trim();
    let t: number | undefined;
    // The longest shown title the query starts with.
    for (const [alias, title] of span === undefined ? this.titles : []) {
      if ((rest === title || rest.startsWith(`${title} `)) && (t === undefined || title.length > this.titles.get(t)!.length)) t = alias;
    }
    if (t !== undefined) rest = rest.slice(this.titles.get(t)!.length).trim();
    const numbers: number[] = [];
    let representable = true;
    ANALYZER.forEachTerm(rest, (term) => {
      const n = this.terms.indexOf(term);
      if (n < 0) representable = false;
      else numbers.push(n + 1);
    });
    if (!representable || (t === undefined && h === undefined && span === undefined && numbers.length === 0)) return args;
    // A query that repeats a word is not exactly a set of numbered words: keep it as written.
    if (new Set(numbers).size !== numbers.length) return args;
    const out: Args = withoutKey(args, 'query');
    if (t !== undefined) out.t = t;
    if (h !== undefined) out.h = h.ref;
    if (span !== undefined) {
      out.s = span;
      // s alone stands for the span and the words its hit lacks; other words are written as q.
      const implicit = this.missingWords(this.spans[span - 1]!.hit);
      if (numbers.join(',') !== implicit.join(',')) {
        if (!numbers.length) return args;
        out.q = spanString(numbers, this.terms.length);
      }
      return out;
    }
    if (numbers.length) out.q = spanString(numbers, this.terms.length);
    return out;
  }

  /**
   * The reference to the words of a shown hit's text that `query` starts with (followed by the end
   * or a space): the whole text as the hit's number, else the longest run of two or more words as
   * "HIT:A-B"; the first hit wins a tie. Undefined when no text starts the query.
   */
  private textPrefix(query: string): { ref: number | string; length: number } | undefined {
    let best: { ref: number | string; length: number; words: number } | undefined;
    const qWords = query.split(/\s+/u).filter(Boolean);
    for (const [alias, words] of this.texts) {
      const whole = words.join(' ');
      if (query === whole || query.startsWith(`${whole} `)) {
        if (!best || words.length > best.words || typeof best.ref !== 'number') best = { ref: alias, length: whole.length, words: words.length };
        continue;
      }
      for (let from = 0; from < words.length; from++) {
        let n = 0;
        while (n < qWords.length && from + n < words.length && words[from + n] === qWords[n]) n++;
        if (n >= 2 && (!best || (typeof best.ref !== 'number' && n > best.words))) {
          best = { ref: `${alias}:${from + 1}-${from + n}`, length: qWords.slice(0, n).join(' ').length, words: n };
        }
      }
    }
    // The run is measured in the query's own spacing: only a query written with single spaces is cut exactly.
    return best && query.slice(0, best.length).split(/\s+/u).length === best.words ? { ref: best.ref, length: best.length } : undefined;
  }

  private hitTexts(h: unknown): { ok: true; texts: string[] } | { ok: false; error: string } {
    const refs = Array.isArray(h) ? h : [h];
    const texts: string[] = [];
    for (const r of refs) {
      const m = typeof r === 'number' ? [String(r), undefined] : typeof r === 'string' ? /^\s*(\d+)\s*(?::\s*(.+))?$/u.exec(r)?.slice(1) : undefined;
      const words = m && Number.isInteger(Number(m[0])) ? this.texts.get(Number(m[0])) : undefined;
      if (!m || words === undefined) return { ok: false, error: `h: ${JSON.stringify(r)} is not a shown hit's text (write a hit number, or HIT:WORDS such as "2:5-7"; hits with text are ${spanString([...this.texts.keys()].sort((a, b) => a - b)) || 'none yet'})` };
      if (m[1] === undefined) {
        texts.push(words.join(' '));
        continue;
      }
      const read = readSpans(m[1], words.length);
      if (!read.ok) return { ok: false, error: `h: ${JSON.stringify(r)}: ${JSON.stringify(read.item)} is not a word of hit ${m[0]}'s text (its words are numbered 1 to ${words.length})` };
      texts.push(read.numbers.map((i) => words[i - 1]!).join(' '));
    }
    return { ok: true, texts };
  }

  private titleTexts(t: unknown): { ok: true; texts: string[] } | { ok: false; error: string } {
    const refs = Array.isArray(t) ? t : [t];
    const texts: string[] = [];
    for (const r of refs) {
      const n = typeof r === 'number' ? r : typeof r === 'string' && /^\s*\d+\s*$/u.test(r) ? Number(r) : NaN;
      const title = Number.isInteger(n) ? this.titles.get(n) : undefined;
      if (title === undefined) return { ok: false, error: `t: ${JSON.stringify(r)} is not a hit shown in this episode (hits are numbered 1 to ${this.titles.size})` };
      texts.push(title);
    }
    return { ok: true, texts };
  }

  private wordTexts(q: unknown): { ok: true; texts: string[] } | { ok: false; error: string } {
    const n = this.words.length;
    const read = readSpans(q, n);
    if (!read.ok) return { ok: false, error: `q: ${JSON.stringify(read.item)} is not a question word (words are numbered 1 to ${n})` };
    return { ok: true, texts: read.numbers.map((i) => this.words[i - 1]!) };
  }
}

function isObject(v: unknown): v is Args {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function withoutKey(args: Args, key: string): Args {
  const { [key]: _dropped, ...rest } = args;
  return rest;
}
