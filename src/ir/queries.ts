import { InputError } from '../errors.js';
import { readTextFile } from '../corpus/text-file.js';
import { parseJsonRecord } from '../json-depth.js';

/** One query of a batch search, as read from a queries file. */
export interface Query {
  id: string;
  text: string;
}

const ID_KEYS = ['_id', 'id', 'qid', 'query_id'] as const;
const TEXT_KEYS = ['text', 'query'] as const;
/** A TSV header line, skipped: `id<TAB>text`, `qid<TAB>query`, `query-id<TAB>text`, ... */
const TSV_HEADER = /^(?:_?id|qid|query[-_]id)\t(?:text|query)$/iu;

/**
 * Queries to search, from JSONL (`{"_id", "text"}` as BEIR's queries.jsonl, or `id`/`qid` and
 * `query`) or TSV (`id<TAB>text`, as MS MARCO's queries files). Ids must be unique.
 */
export function readQueries(path: string): Query[] {
  const text = readTextFile(path);
  const lines = text.split('\n');
  const jsonl = /^\s*\{/u.test(lines.find((l) => l.trim() !== '') ?? '');
  const queries: Query[] = [];
  const seen = new Set<string>();
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/u, '');
    if (line.trim() === '') return;
    const where = `${path} line ${i + 1}`;
    let query: Query;
    if (jsonl) query = jsonQuery(line, where);
    else {
      if (i === 0 && TSV_HEADER.test(line)) return;
      const tab = line.indexOf('\t');
      if (tab <= 0) throw new InputError(`${where}: expected 'ID<TAB>TEXT'`);
      query = { id: line.slice(0, tab).trim(), text: line.slice(tab + 1).trim() };
    }
    if (seen.has(query.id)) throw new InputError(`${where}: query id '${query.id}' appears twice`);
    seen.add(query.id);
    queries.push(query);
  });
  if (queries.length === 0) throw new InputError(`${path}: no queries`);
  return queries;
}

function jsonQuery(line: string, where: string): Query {
  const value = parseJsonRecord(line, where);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError(`${where}: expected a JSON object`);
  const rec = value as Record<string, unknown>;
  const idKey = ID_KEYS.find((k) => typeof rec[k] === 'string' || typeof rec[k] === 'number');
  const textKey = TEXT_KEYS.find((k) => typeof rec[k] === 'string');
  if (idKey === undefined) throw new InputError(`${where}: missing the query id (a string field "_id", "id" or "qid")`);
  if (textKey === undefined) throw new InputError(`${where}: missing the query text (a string field "text" or "query")`);
  const id = String(rec[idKey]);
  if (id === '') throw new InputError(`${where}: the query id is empty`);
  return { id, text: rec[textKey] as string };
}
