import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateRun, parseMeasures, rankDocuments } from '../../src/ir/measures.js';
import { readQrels } from '../../src/ir/qrels.js';
import { readRun } from '../../src/ir/trec-run.js';

const BIN = resolve('bin/sleuth.js');
const BEIR = resolve('test/fixtures/beir-mini');
const IR = resolve('test/fixtures/ir');
const home = mkdtempSync(join(tmpdir(), 'sleuth-ir-eval-'));
const sleuth = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: home, encoding: 'utf8', env: { ...process.env, SLEUTH_HOME: join(home, '.sleuth') } });
const lines = (text: string) => text.trim().split('\n');
/** `ir-eval` prints `MEASURE all VALUE` lines: the means by measure. */
const means = (stdout: string) => Object.fromEntries(lines(stdout).filter((l) => !l.startsWith('queries')).map((l) => l.split(/\s+/u)).map(([m, , v]) => [m!, Number(v)]));

describe('BEIR import, batch search and ir-eval', () => {
  let imported: ReturnType<typeof sleuth>;
  beforeAll(() => {
    imported = sleuth('tasks', 'import', '--format', 'beir', BEIR, '--name', 'mini');
  });

  it('imports a BEIR folder, runs its queries in one process and scores the run as trec_eval does, ties included', () => {
    expect(imported.status, imported.stderr).toBe(0);
    // q5 has no qrels (no task); q1-q4 judged in test.tsv, q6 in dev.tsv.
    expect(imported.stdout).toContain('task set mini: dev 1, test 4; corpus 7 chunks');
    // corpus.jsonl's `_id` is the chunk id; d07's empty title is derived from its text.
    const d07 = JSON.parse(sleuth('read', '--index', join(home, '.sleuth', 'tasks', 'mini', 'index'), '--json', 'd07').stdout);
    expect(d07).toMatchObject({ id: 'd07', title: 'lumen marsh nectar', text: 'lumen marsh nectar' });

    const run = join(home, 'run.trec');
    const searched = sleuth('search', '--index', join(home, '.sleuth', 'tasks', 'mini', 'index'), '--queries', join(BEIR, 'queries.jsonl'), '--out', run);
    expect(searched.status, searched.stderr).toBe(0);
    expect(searched.stderr).toContain("1 queries have no results, e.g. 'q4'");
    const rows = lines(readFileSync(run, 'utf8')).map((l) => l.split(' '));
    expect(rows.every((r) => r.length === 6 && r[1] === 'Q0' && r[5] === 'sleuth-bm25')).toBe(true);
    // d02 and d03 have the same text, so the same score for 'alpha' and for 'copper': a tie.
    const q1 = rows.filter((r) => r[0] === 'q1');
    expect(q1.map((r) => r[2])).toEqual(['d01', 'd02', 'd03']);
    expect(q1[1]![4]).toBe(q1[2]![4]);

    const r = sleuth('ir-eval', '--run', run, '--qrels', join(BEIR, 'qrels', 'test.tsv'), '--per-query');
    expect(r.status, r.stderr).toBe(0);
    // By hand. trec_eval breaks the d02/d03 tie by docno descending: d03 ranks above d02.
    //  q1 'alpha': d01 (grade 1), d03 (0), d02 (2); judged relevant: d02=2, d01=1, d04=1 (not retrieved).
    //    DCG@10 = 1/log2(2) + 2/log2(4) = 2; ideal = 2 + 1/log2(3) + 1/log2(4) = 3.1309; nDCG 0.6388.
    //    recall@100 = 2/3; MRR@10 = 1; AP = (1/1 + 2/3) / 3 = 0.5556.
    //  q2 'copper': d03 (0), d02 (1): nDCG = (1/log2(3)) / 1 = 0.6309; recall 1; MRR 1/2; AP 1/2.
    //  q3 'fjord' retrieves d04, judged d06 only: all 0. q4 'the of' has no searchable words: no
    //  results, and as a judged query it scores 0 (trec_eval -c).
    // Broken ascending instead, the tie would give q1 nDCG 0.7224 and q2 MRR 1.
    const perQuery = (q: string, m: string) => Number(lines(r.stdout).find((l) => l.startsWith(`${m} `) && l.split(/\s+/u)[1] === q)!.split(/\s+/u)[2]);
    expect(perQuery('q1', 'ndcg@10')).toBe(0.6388);
    expect(perQuery('q2', 'ndcg@10')).toBe(0.6309);
    expect(perQuery('q2', 'mrr@10')).toBe(0.5);
    // trec_eval 10.0 built from source, on this run and test.tsv as TREC qrels, measured:
    //   trec_eval -c -m ndcg_cut.10 -m recall.100 -m map  -> ndcg_cut_10 0.3174, recall_100 0.4167, map 0.2639
    //   trec_eval -c -M 10 -m recip_rank                  -> recip_rank 0.3750
    const hand = { ndcg: (2 / (2 + 1 / Math.log2(3) + 0.5) + 1 / Math.log2(3)) / 4, recall: (2 / 3 + 1) / 4, map: ((1 + 2 / 3) / 3 + 0.5) / 4, mrr: (1 + 0.5) / 4 };
    expect(means(r.stdout)).toEqual({ 'ndcg@10': 0.3174, 'recall@100': 0.4167, map: 0.2639, 'mrr@10': 0.375 });
    expect(hand.ndcg.toFixed(4)).toBe('0.3174');
    expect(hand.recall.toFixed(4)).toBe('0.4167');
    expect(hand.map.toFixed(4)).toBe('0.2639');
    expect(hand.mrr.toFixed(4)).toBe('0.3750');
    expect(r.stdout).toContain('1 judged queries not in the run scored 0; 2 run queries without judgements ignored');

    // The task set's own graded judgements give the same numbers, and so does the JSONL run.
    const fromTasks = sleuth('ir-eval', '--run', run, '--tasks', 'mini', '--split', 'test');
    expect(fromTasks.status, fromTasks.stderr).toBe(0);
    expect(means(fromTasks.stdout)).toEqual(means(r.stdout));
    const jsonl = join(home, 'run.jsonl');
    expect(sleuth('search', '--index', join(home, '.sleuth', 'tasks', 'mini', 'index'), '--queries', join(BEIR, 'queries.jsonl'), '--format', 'jsonl', '--out', jsonl).status).toBe(0);
    expect(JSON.parse(lines(readFileSync(jsonl, 'utf8'))[0]!)).toMatchObject({ qid: 'q1', query: 'alpha', hits: [{ id: 'd01', title: 'Note' }, { id: 'd02' }, { id: 'd03' }] });
    expect(means(sleuth('ir-eval', '--run', jsonl, '--qrels', join(BEIR, 'qrels', 'test.tsv')).stdout)).toEqual(means(r.stdout));
    // Averaged over the judged queries the run has (trec_eval without -c): q4 left out.
    expect(means(sleuth('ir-eval', '--run', run, '--qrels', join(BEIR, 'qrels', 'test.tsv'), '--only-run-queries').stdout)['mrr@10']).toBe(0.5);
  });

  it('keeps a file it did not write and names bad input in one line, exit 2', () => {
    const mine = join(home, 'notes.txt');
    writeFileSync(mine, 'my notes\n');
    const r = sleuth('search', '--index', join(home, '.sleuth', 'tasks', 'mini', 'index'), '--queries', join(BEIR, 'queries.jsonl'), '--out', mine);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('the file exists (pass --force to replace it)');
    expect(readFileSync(mine, 'utf8')).toBe('my notes\n');

    const badQrels = join(home, 'bad.qrels');
    writeFileSync(badQrels, 'q1 0 d1 1\nq1 0 d2 maybe\n');
    const bad = sleuth('ir-eval', '--run', join(IR, 'run.txt'), '--qrels', badQrels);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim()).toBe(`sleuth ir-eval: ${badQrels} line 2: relevance 'maybe' is not a whole number`);
    const noBeir = sleuth('tasks', 'import', '--format', 'beir', IR, '--name', 'nope');
    expect(noBeir.status).toBe(2);
    expect(noBeir.stderr).toContain('no corpus.jsonl');
    expect(sleuth('ir-eval', '--run', join(IR, 'run.txt'), '--qrels', join(IR, 'qrels.txt'), '--metrics', 'ndcg').stderr).toContain("'ndcg' needs a cutoff");
  });
});

describe('IR measures against trec_eval', () => {
  // test/fixtures/ir: 16 judged queries, grades 0-3, scores at one decimal (many ties), ids whose
  // string order differs from their number order (d9 > d10), a judged query absent from the run
  // (q13), one with nothing relevant (q20), a run query without judgements (q99). Every number
  // below was measured with trec_eval 10.0 built from github.com/usnistgov/trec_eval:
  //   trec_eval -c -m ndcg_cut.5,10,20 -m recall.5,10,100 -m map -m map_cut.10 -m P.5,10 qrels.txt run.txt
  //   trec_eval -c -M 10 -m recip_rank ...; -M 3; no -M
  //   trec_eval -m ndcg_cut.10 -m map (qrels without q13: the averaging of trec_eval without -c)
  const run = readRun(join(IR, 'run.txt'));
  const qrels = readQrels(join(IR, 'qrels.txt'));
  const at4 = (values: Record<string, number>) => Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Number(v.toFixed(4))]));

  it('matches trec_eval -c to 4 decimals on every measure', () => {
    const r = evaluateRun(run, qrels, parseMeasures('ndcg@5,ndcg@10,ndcg@20,recall@5,recall@10,recall@100,map,map@10,P@5,P@10,mrr@10,mrr@3,mrr@1000'));
    expect(r.queries).toBe(16);
    expect(at4(r.mean)).toEqual({
      'ndcg@5': 0.1518, 'ndcg@10': 0.1719, 'ndcg@20': 0.2291,
      'recall@5': 0.0884, 'recall@10': 0.1489, 'recall@100': 0.6202,
      map: 0.2135, 'map@10': 0.0673, 'P@5': 0.275, 'P@10': 0.2375,
      'mrr@10': 0.3318, 'mrr@3': 0.2917, 'mrr@1000': 0.3367,
    });
  });

  it('averages over the run queries only when asked, as trec_eval without -c', () => {
    const r = evaluateRun(run, qrels, parseMeasures('ndcg@10,map'), { onlyRunQueries: true });
    expect([r.queries, r.missingFromRun, r.notInQrels]).toEqual([15, 1, 1]);
    expect(at4(r.mean)).toEqual({ 'ndcg@10': 0.1833, map: 0.2277 });
  });

  it('ranks by score, then by docno descending in byte order', () => {
    expect(rankDocuments(new Map([['d10', 1], ['d9', 1], ['d2', 3], ['d100', 1]]))).toEqual(['d2', 'd9', 'd100', 'd10']);
    // U+FF5E sorts below U+1F600 in UTF-8 bytes (strcmp), above it in UTF-16 units.
    expect(rankDocuments(new Map([['\u{ff5e}', 1], ['\u{1f600}', 1]]))).toEqual(['\u{1f600}', '\u{ff5e}']);
  });
});
