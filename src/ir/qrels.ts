import { readTextFile } from '../tasks/records.js';
import type { Task } from '../tasks/task.js';
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

/**
 * Qrels of a task set's tasks: the graded judgements a BEIR import keeps in `meta.qrels`, or else
 * every chunk id of every fact at grade 1 (any of a fact's chunks supports it).
 */
export function qrelsOfTasks(tasks: Task[]): Qrels {
  const qrels: Qrels = new Map();
  for (const task of tasks) {
    const graded = gradedJudgements(task);
    const judged = new Map<string, number>(graded ?? task.facts.flatMap((f) => f.chunkIds.map((id) => [id, 1] as const)));
    qrels.set(task.id, judged);
  }
  return qrels;
}

/** The `meta.qrels` of a task imported from BEIR ({doc id: grade}), if it has them. */
export function gradedJudgements(task: Task): [string, number][] | undefined {
  const raw = task.meta?.['qrels'];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const out: [string, number][] = [];
  for (const [doc, grade] of Object.entries(raw)) {
    if (typeof grade !== 'number' || !Number.isInteger(grade)) throw new InputError(`task '${task.id}': meta.qrels['${doc}'] must be a whole number, got ${JSON.stringify(grade)}`);
    out.push([doc, grade]);
  }
  return out;
}
