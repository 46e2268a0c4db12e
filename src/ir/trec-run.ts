import { InputError } from '../errors.js';
import { readTextFile } from '../corpus/text-file.js';
import { parseJsonRecord } from '../json-depth.js';

/** A ranked list per query: document id -> retrieval score (ranks come from the scores, as in trec_eval). */
export type Run = Map<string, Map<string, number>>;

/** One query's hits, in rank order. */
export interface RankedHits {
  qid: string;
  query: string;
  hits: { id: string; title: string; score: number }[];
}

/** A score as trec_eval reads it back exactly (atof of JavaScript's shortest round-trip form). */
function scoreText(score: number): string {
  return String(score);
}

/** TREC run lines, `QID Q0 DOCNO RANK SCORE RUNID`, for one query's hits. */
export function trecRunLines(ranked: RankedHits, runId: string): string {
  // The columns are separated by white space, so an id holding some cannot be written.
  for (const id of [ranked.qid, ...ranked.hits.map((h) => h.id)]) {
    if (/\s/u.test(id)) throw new InputError(`id ${JSON.stringify(id)} contains white space, which a TREC run cannot hold; use --format jsonl`);
  }
  return ranked.hits.map((h, i) => `${ranked.qid} Q0 ${h.id} ${i + 1} ${scoreText(h.score)} ${runId}\n`).join('');
}

/** One JSONL line: {qid, query, hits: [{id, title, score}]}. */
export function jsonlRunLine(ranked: RankedHits): string {
  return JSON.stringify(ranked) + '\n';
}

/**
 * Read a run: TREC's six columns (`QID ITER DOCNO RANK SIM RUNID`; only QID, DOCNO and SIM are
 * used, as trec_eval uses them) or the JSONL that `sleuth search --queries --format jsonl` writes.
 * A document listed twice for one query is an error, as in trec_eval.
 */
export function readRun(path: string): Run {
  const text = readTextFile(path);
  const run: Run = new Map();
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/u, '');
    if (line.trim() === '') return;
    const where = `${path} line ${i + 1}`;
    if (line.trimStart().startsWith('{')) {
      jsonRunLine(line, where, run);
      return;
    }
    const fields = line.trim().split(/\s+/u);
    if (fields.length !== 6) throw new InputError(`${where}: expected 'QID Q0 DOCNO RANK SCORE RUNID', got ${fields.length} fields`);
    const score = Number(fields[4]);
    if (!Number.isFinite(score)) throw new InputError(`${where}: score '${fields[4]}' is not a number`);
    const [qid, , doc] = fields as [string, string, string];
    let hits = run.get(qid);
    if (!hits) run.set(qid, (hits = new Map()));
    if (hits.has(doc)) throw new InputError(`${where}: document '${doc}' is listed twice for query '${qid}'`);
    hits.set(doc, score);
  });
  if (run.size === 0) throw new InputError(`${path}: no results (empty run)`);
  return run;
}

function jsonRunLine(line: string, where: string, run: Run): void {
  const value = parseJsonRecord(line, where);
  const rec = value as Partial<RankedHits> | null;
  if (typeof rec?.qid !== 'string' || !Array.isArray(rec.hits)) throw new InputError(`${where}: expected {"qid": "...", "hits": [{"id", "score"}]}`);
  const hits = new Map<string, number>();
  run.set(rec.qid, hits);
  rec.hits.forEach((h: unknown, rank) => {
    const hit = h as { id?: unknown; score?: unknown } | null;
    if (typeof hit?.id !== 'string' || typeof hit.score !== 'number') throw new InputError(`${where}: hits[${rank}] needs a string "id" and a number "score"`);
    if (hits.has(hit.id)) throw new InputError(`${where}: document '${hit.id}' is listed twice for query '${rec.qid}'`);
    hits.set(hit.id, hit.score);
  });
}
