import { readTextFile } from '../corpus/text-file.js';
import { InputError } from '../errors.js';

/** Relevance judgements: query id -> document id -> grade (0 judged not relevant; negative: in the pool, unjudged). */
export type Qrels = Map<string, Map<string, number>>;

/** BEIR's qrels files start with this header line (query-id, corpus-id, score). */
const BEIR_HEADER = /^query-id\tcorpus-id\tscore$/u;

/**
 * Read qrels in either layout: TREC's `QID ITER DOCNO REL` (white-space separated, ITER ignored)
 * or BEIR's tab-separated `query-id corpus-id score` with its header line. A document judged twice
 * for one query is an error, as it is for trec_eval (form_res_rels.c: "duplicate docs").
 */
export function readQrels(path: string): Qrels {
  const qrels: Qrels = new Map();
  const lines = readTextFile(path).split('\n');
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/u, '');
    if (line.trim() === '' || (i === 0 && BEIR_HEADER.test(line))) return;
    const where = `${path} line ${i + 1}`;
    const fields = line.includes('\t') ? line.split('\t').map((f) => f.trim()) : line.trim().split(/\s+/u);
    let qid: string, doc: string, grade: string;
    if (fields.length === 4) [qid, , doc, grade] = fields as [string, string, string, string];
    else if (fields.length === 3) [qid, doc, grade] = fields as [string, string, string];
    else throw new InputError(`${where}: expected 'QID ITER DOCNO REL' (TREC) or 'query-id<TAB>corpus-id<TAB>score' (BEIR), got ${fields.length} fields`);
    const rel = Number(grade);
    if (!Number.isInteger(rel)) throw new InputError(`${where}: relevance '${grade}' is not a whole number`);
    addJudgement(qrels, qid, doc, rel, where);
  });
  if (qrels.size === 0) throw new InputError(`${path}: no judgements (empty qrels)`);
  return qrels;
}

function addJudgement(qrels: Qrels, qid: string, doc: string, rel: number, where: string): void {
  let judged = qrels.get(qid);
  if (!judged) qrels.set(qid, (judged = new Map()));
  if (judged.has(doc)) throw new InputError(`${where}: document '${doc}' is judged twice for query '${qid}'`);
  judged.set(doc, rel);
}
