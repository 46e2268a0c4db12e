import { isInputError } from '../errors.js';
import type { SearchIndex } from '../search/open.js';
import type { SegmentedIndex } from '../search/segments.js';
import type { Query } from './queries.js';
import type { RankedHits } from './trec-run.js';

export interface BatchResult {
  ranked: RankedHits[];
  /** Queries BM25 cannot search (no searchable words), with the reason: they get no results. */
  unsearchable: { id: string; reason: string }[];
}

/**
 * BM25 top-k for every query, in this process: no snippets are made (searchDocs), so a batch runs
 * at the index's own speed. A query without searchable words gets no results (trec_eval then
 * scores it 0 when it is judged) and is reported, rather than stopping the batch.
 */
export function searchBatch(index: SearchIndex | SegmentedIndex, queries: Query[], k: number): BatchResult {
  const ranked: RankedHits[] = [];
  const unsearchable: BatchResult['unsearchable'] = [];
  for (const q of queries) {
    let docs;
    try {
      docs = index.searchDocs(q.text, k);
    } catch (err) {
      if (!isInputError(err)) throw err;
      unsearchable.push({ id: q.id, reason: err.message });
      continue;
    }
    ranked.push({ qid: q.id, query: q.text, hits: docs.map(({ doc, score }) => ({ id: index.store.id(doc), title: index.store.title(doc), score })) });
  }
  return { ranked, unsearchable };
}
