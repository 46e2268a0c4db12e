/**
 * IR measures exactly as trec_eval 10.0 (github.com/usnistgov/trec_eval) computes them:
 *  - ranking (form_res_rels.c, comp_sim_docno): by score descending, ties broken by docno in
 *    descending strcmp order; the RANK column of a run is ignored. `maxDocs` keeps the first N
 *    after that sort (trec_eval -M N), which is how MRR@k is had from trec_eval (-M k, recip_rank).
 *  - a document is relevant when its grade is >= 1 (relevance_level); ungraded documents (not in
 *    the qrels) count as not relevant.
 *  - ndcg@k (m_ndcg_cut.c): gain = the grade, discount log2(rank + 1), normalised by the ideal
 *    ordering of every judged document of the query.
 *  - recall@k (m_recall.c), map (m_map.c), map@k (m_map_cut.c), P@k (m_P.c, divides by k),
 *    mrr@k (m_recip_rank.c on the first k).
 *  - averages (meas_avg.c): over every query of the qrels, a query the run lacks scoring 0
 *    (trec_eval -c), or with `onlyRunQueries` over the qrels queries the run has.
 */
import { InputError } from '../errors.js';
import type { Qrels } from './qrels.js';
import type { Run } from './trec-run.js';

export type MeasureKind = 'ndcg' | 'recall' | 'map' | 'P' | 'mrr';

export interface Measure {
  kind: MeasureKind;
  /** Cutoff; undefined for map over the whole ranking. */
  k?: number;
  /** As written: `ndcg@10`, `map`. */
  name: string;
}

/** What the issue asks for and BEIR reports first. */
export const DEFAULT_MEASURES = 'ndcg@10,recall@100,map,mrr@10';

/** Parse `ndcg@10,recall@100,map,map@10,P@5,mrr@10`. */
export function parseMeasures(spec: string): Measure[] {
  const out: Measure[] = [];
  for (const raw of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(ndcg|recall|map|p|mrr)(?:@(\d+))?$/iu.exec(raw);
    if (!m) throw new InputError(`--metrics: unknown measure '${raw}' (known: ndcg@K, recall@K, map, map@K, P@K, mrr@K)`);
    const kind = (m[1]!.toLowerCase() === 'p' ? 'P' : m[1]!.toLowerCase()) as MeasureKind;
    const k = m[2] === undefined ? undefined : Number(m[2]);
    if (k !== undefined && k < 1) throw new InputError(`--metrics: '${raw}': the cutoff must be at least 1`);
    if (k === undefined && kind !== 'map') throw new InputError(`--metrics: '${raw}' needs a cutoff, e.g. ${kind}@10`);
    out.push({ kind, ...(k === undefined ? {} : { k }), name: `${kind}${k === undefined ? '' : `@${k}`}` });
  }
  if (out.length === 0) throw new InputError('--metrics: no measures given');
  return out;
}

export interface EvalOptions {
  /** Keep only the first N documents per query after ranking (trec_eval -M). */
  maxDocs?: number;
  /** Average over the qrels queries the run has (trec_eval without -c) instead of all of them. */
  onlyRunQueries?: boolean;
}

export interface EvalResult {
  measures: Measure[];
  /** Mean of each measure, by name. */
  mean: Record<string, number>;
  /** Each evaluated query's values, in qrels order. */
  perQuery: { qid: string; values: Record<string, number> }[];
  /** Queries averaged over; qrels queries the run lacks; run queries without qrels (ignored). */
  queries: number;
  missingFromRun: number;
  notInQrels: number;
}

/** strcmp order (UTF-8 bytes), which is code point order, not JavaScript's UTF-16 order. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (a code point above U+FFFF) sorts after every other UTF-16 unit in code point order.
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    if (sx !== sy) return sx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** One query's ranking as trec_eval forms it: documents by score descending, ties by docno descending. */
export function rankDocuments(scores: Map<string, number>, maxDocs = Infinity): string[] {
  const docs = [...scores.keys()];
  docs.sort((a, b) => scores.get(b)! - scores.get(a)! || compareCodePoints(b, a));
  return docs.length > maxDocs ? docs.slice(0, maxDocs) : docs;
}

/** Values of the measures for one query: `ranked` document ids, `judged` the query's qrels. */
export function queryValues(ranked: string[], judged: Map<string, number>, measures: Measure[]): Record<string, number> {
  const grades = ranked.map((d) => judged.get(d) ?? 0);
  let numRel = 0;
  const positive: number[] = [];
  for (const g of judged.values()) {
    if (g >= 1) numRel++;
    if (g > 0) positive.push(g);
  }
  positive.sort((a, b) => b - a);
  const values: Record<string, number> = {};
  for (const m of measures) values[m.name] = measureValue(m, grades, numRel, positive);
  return values;
}

function measureValue(measure: Measure, grades: number[], numRel: number, idealGains: number[]): number {
  const k = Math.min(measure.k ?? grades.length, grades.length);
  switch (measure.kind) {
    case 'ndcg': {
      let dcg = 0;
      for (let i = 0; i < k; i++) if (grades[i]! > 0) dcg += grades[i]! / Math.log2(i + 2);
      let ideal = 0;
      for (let i = 0; i < Math.min(measure.k!, idealGains.length); i++) ideal += idealGains[i]! / Math.log2(i + 2);
      return ideal > 0 ? dcg / ideal : dcg;
    }
    case 'recall': {
      if (numRel === 0) return 0;
      let found = 0;
      for (let i = 0; i < k; i++) if (grades[i]! >= 1) found++;
      return found / numRel;
    }
    case 'map': {
      if (numRel === 0) return 0;
      let found = 0;
      let sum = 0;
      for (let i = 0; i < k; i++) if (grades[i]! >= 1) sum += ++found / (i + 1);
      return sum / numRel;
    }
    case 'P': {
      let found = 0;
      for (let i = 0; i < k; i++) if (grades[i]! >= 1) found++;
      return found / measure.k!;
    }
    case 'mrr': {
      for (let i = 0; i < k; i++) if (grades[i]! >= 1) return 1 / (i + 1);
      return 0;
    }
  }
}

/** Evaluate a run against qrels: per-query values and their means, as trec_eval -c (see the top). */
export function evaluateRun(run: Run, qrels: Qrels, measures: Measure[], options: EvalOptions = {}): EvalResult {
  const perQuery: EvalResult['perQuery'] = [];
  let missingFromRun = 0;
  const qids = [...qrels.keys()].sort(compareCodePoints);
  for (const qid of qids) {
    const scores = run.get(qid);
    if (!scores) {
      missingFromRun++;
      if (options.onlyRunQueries) continue;
    }
    const ranked = scores ? rankDocuments(scores, options.maxDocs) : [];
    perQuery.push({ qid, values: queryValues(ranked, qrels.get(qid)!, measures) });
  }
  if (perQuery.length === 0) throw new InputError('no query is in both the run and the qrels: check that their query ids match');
  const mean: Record<string, number> = {};
  for (const m of measures) mean[m.name] = perQuery.reduce((s, q) => s + q.values[m.name]!, 0) / perQuery.length;
  let notInQrels = 0;
  for (const qid of run.keys()) if (!qrels.has(qid)) notInQrels++;
  return { measures, mean, perQuery, queries: perQuery.length, missingFromRun, notInQrels };
}
