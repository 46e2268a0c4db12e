import { Analyzer } from '../../search/analyzer.js';
import type { ToolExchange } from '../../agent/types.js';
import { SEARCH_TOOL } from './tools.js';

/**
 * What the search suite's scripted agents read and write: the question as BM25 keywords, and the
 * hits of the search and grep results they are handed back. One module, so the single-hop and the
 * multi-hop scripts read results the same way (and neither imports the other).
 */

const ANALYZER = new Analyzer();

/**
 * The query as BM25 reads it: the words the default analyzer keeps (no stopwords, no punctuation),
 * as written and in order. Searching it finds what searching the whole question finds, and a small
 * model imitating a teacher that writes it has about half as much to copy.
 */
export function keywordQuery(query: string): string {
  // Each term once, as the local model's references number them, so a teacher's query is "1-".
  const words: string[] = [];
  const terms = new Set<string>();
  ANALYZER.forEachTerm(query, (term, start, end) => {
    if (!terms.has(term)) words.push(query.slice(start, end));
    terms.add(term);
  });
  return words.length ? words.join(' ') : query;
}

/** A hit of a search or grep result as the environment returned it. */
export interface ShownHit {
  id: string;
  title: string;
  snippet: string;
}

/** The hits of each successful search or grep call, in call order. */
export function hitLists(results: ToolExchange[]): ShownHit[][] {
  const lists: ShownHit[][] = [];
  for (const r of results) {
    if (r.result.outcome !== 'ok' || (r.call.name !== SEARCH_TOOL.bm25_search && r.call.name !== SEARCH_TOOL.grep_corpus)) continue;
    const value = JSON.parse(r.result.content) as { hits?: { id: string; title?: string; snippet?: string }[] };
    lists.push((value.hits ?? []).map((h) => ({ id: h.id, title: h.title ?? '', snippet: h.snippet ?? '' })));
  }
  return lists;
}
