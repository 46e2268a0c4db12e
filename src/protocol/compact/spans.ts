import { Analyzer } from '../../search/analyzer.js';

/**
 * Candidate spans of a hit's text: the names, titles and numbers in it that a follow-up search
 * could be about. The entity that bridges one hop of a multi-hop question to the next (a person, a
 * company, a film, a year) is in the text of the hit that answers the first hop, rarely in its
 * first 40 characters and never in the question; the compact format shows a hit's candidates as
 * numbered references (references.ts) so that a small model can point at one instead of copying
 * it, and a script or a teacher can choose among the same candidates the model sees.
 *
 * A candidate is one of:
 *   - a quoted phrase ("Kiss and Tell") of one to eight words;
 *   - a run of capitalised words (Shirley Temple, University of Southern California), joined by
 *     lower-case connectors (of, the, de, van, ...) where a capitalised word follows; stopwords at
 *     either end are cut ("The", "In", "He"), and a single word that opens a sentence is no name
 *     ("Although", "Players");
 *   - a number of three or more digits (a year: 1945), with a month before it when there is one.
 *
 * A candidate is kept when it has a keyword that neither the question nor the hit's title has (it
 * brings something new to search with), once per episode. Candidates are ranked by how close they
 * stand to a word of the question in the text (then by position): the bridge is what the text says
 * of the question's subject ("... published by the American Psychological Association"). Measured
 * on the MuSiQue train split, top hit: span 1 is the bridge for 23.8% of questions ranked this way,
 * 20.1% ranked by position; a follow-up of span 1 finds hop 2's gold for 33.0% against 28.1%.
 */

const ANALYZER = new Analyzer();

/** Lower-case words that may join the capitalised words of one name: "Bank of America". */
const CONNECTORS = new Set(['of', 'the', 'de', 'del', 'der', 'den', 'di', 'da', 'do', 'du', 'la', 'le', 'van', 'von', 'y', '&']);

const MONTHS = new Set(['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']);

/** Most words in one candidate (a longer run is cut to its first words). */
export const MAX_SPAN_WORDS = 6;

interface Word {
  text: string;
  start: number;
  end: number;
}

/** The words of a text with their offsets, punctuation at either end trimmed (a word is kept if anything is left). */
function words(text: string): Word[] {
  const out: Word[] = [];
  for (const m of text.matchAll(/\S+/gu)) {
    const raw = m[0];
    // An ellipsis opens a snippet cut mid-text ("…America Corporation"): it is not part of the word.
    const lead = /^[("'“‘[…]+/u.exec(raw)?.[0].length ?? 0;
    const trail = /[)"'”’\],.;:!?]+$/u.exec(raw.slice(lead))?.[0].length ?? 0;
    const word = raw.slice(lead, raw.length - trail);
    if (word) out.push({ text: word, start: m.index + lead, end: m.index + lead + word.length });
  }
  return out;
}

const capitalised = (w: string) => /^\p{Lu}/u.test(w);
const isNumber = (w: string) => /^\d{3,}(s)?$/u.test(w);
const isStopword = (w: string) => ANALYZER.term(w) === null;

/**
 * Whether the text between two words of a run is only white space: a comma or a full stop ends a
 * name, except the full stop of an initial ("G. Stanley Hall").
 */
function joined(text: string, a: Word, b: Word): boolean {
  const gap = text.slice(a.end, b.start);
  return /^\s+$/u.test(gap) || (/^\p{Lu}$/u.test(a.text) && /^\.\s+$/u.test(gap));
}

/** Every candidate of a text in order of position (before filtering): quoted phrases, capitalised runs, numbers. */
export function rawSpans(text: string): { text: string; start: number }[] {
  const found: { text: string; start: number; end: number }[] = [];
  for (const m of text.matchAll(/["“]([^"“”]{2,80})["”]/gu)) {
    const inner = m[1]!.trim();
    const n = inner.split(/\s+/u).length;
    if (n >= 1 && n <= 8) found.push({ text: inner, start: m.index + 1, end: m.index + 1 + m[1]!.length });
  }
  const ws = words(text);
  for (let i = 0; i < ws.length; ) {
    const w = ws[i]!;
    if (isNumber(w.text)) {
      const month = i > 0 && MONTHS.has(ws[i - 1]!.text) && joined(text, ws[i - 1]!, w) ? ws[i - 1]! : undefined;
      found.push({ text: text.slice((month ?? w).start, w.end), start: (month ?? w).start, end: w.end });
      i++;
      continue;
    }
    if (!capitalised(w.text) || MONTHS.has(w.text)) {
      i++;
      continue;
    }
    // A run: capitalised words, and connectors that a capitalised word follows, with nothing but spaces between.
    let j = i;
    while (j + 1 < ws.length && joined(text, ws[j]!, ws[j + 1]!)) {
      const next = ws[j + 1]!;
      if (capitalised(next.text) && !isNumber(next.text)) j++;
      else if (CONNECTORS.has(next.text) && j + 2 < ws.length && capitalised(ws[j + 2]!.text) && joined(text, next, ws[j + 2]!)) j += 2;
      else break;
    }
    let from = i, to = j;
    while (from <= to && isStopword(ws[from]!.text)) from++;
    while (to >= from && (isStopword(ws[to]!.text) || CONNECTORS.has(ws[to]!.text))) to--;
    to = Math.min(to, from + MAX_SPAN_WORDS - 1);
    // One capitalised word opening a sentence (or the text) is capitalised for that reason alone.
    const opensSentence = (k: number) => k === 0 || /[.!?]["')\]]?\s+$/u.test(text.slice(ws[k - 1]!.start, ws[k]!.start));
    if (from <= to && !(from === to && opensSentence(from))) found.push({ text: text.slice(ws[from]!.start, ws[to]!.end), start: ws[from]!.start, end: ws[to]!.end });
    i = j + 1;
  }
  // A capitalised run inside a quoted phrase is the phrase's: keep the longer one.
  const kept = found.filter((s, i) => !found.some((o, j) => o !== s && o.start <= s.start && o.end >= s.end && (o.end - o.start > s.end - s.start || j < i)));
  return kept.sort((a, b) => a.start - b.start).map(({ text: t, start }) => ({ text: t, start }));
}

/**
 * A hit's candidate spans (at most `max`), nearest a question word first: those with a keyword
 * that the question and the hit's title lack, and not shown before in the episode (`seen`, which
 * gets the kept candidates, lower-cased).
 */
export function candidateSpans(text: string, o: { question: ReadonlySet<string>; title: string; seen: Set<string>; max: number }): string[] {
  const known = new Set([...o.question, ...ANALYZER.terms(o.title)]);
  const asked: [number, number][] = [];
  ANALYZER.forEachTerm(text, (term, start, end) => {
    if (o.question.has(term)) asked.push([start, end]);
  });
  const distance = (s: { text: string; start: number }) => {
    const end = s.start + s.text.length;
    return Math.min(Infinity, ...asked.filter(([a, b]) => b <= s.start || a >= end).map(([a, b]) => (b <= s.start ? s.start - b : a - end)));
  };
  const ranked = rawSpans(text)
    .map((s) => ({ ...s, d: distance(s) }))
    .sort((a, b) => a.d - b.d || a.start - b.start);
  const out: string[] = [];
  for (const s of ranked) {
    if (out.length >= o.max) break;
    const key = s.text.toLowerCase();
    if (o.seen.has(key)) continue;
    const terms = ANALYZER.terms(s.text);
    if (!terms.some((t) => !known.has(t))) continue;
    o.seen.add(key);
    out.push(s.text);
  }
  return out;
}
