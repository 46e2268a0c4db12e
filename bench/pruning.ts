/**
 * Block-max MaxScore pruning against exhaustive scoring, side by side on one loaded index: the same
 * postings, two scorers, the queries run in alternating rounds (exhaustive, pruned, exhaustive, ...)
 * so that load from other processes hits both alike, and every query's top k compared to the bit.
 *
 *   node dist/bench/pruning.js --index DIR --queries FILE --corpus NAME [--rounds 3] [--k 10] [--out bench/results/search.json]
 *
 * Merges {pruning: [{corpus, chunks, k, rounds, exhaustive_qps[], maxscore_qps[], *_cpu_qps[],
 * identical}]} into --out (by corpus, size and k). Top-k document numbers and scores only: no ids
 * or snippets. *_cpu_qps: queries per second of this process's CPU time, which a machine shared
 * with other jobs disturbs far less than wall-clock rates (a starved process waits, it does not
 * spend CPU time waiting).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Bm25Scorer, openIndex } from '../src/search/index.js';
import { MAX_SEGMENT_DOCS } from '../src/search/scoring-memory.js';
import { badFlag, benchArgs, wholeFlag } from './args.js';
import { now, round } from './measure.js';

const { values } = benchArgs(
  { index: { type: 'string' }, queries: { type: 'string' }, corpus: { type: 'string' }, rounds: { type: 'string' }, k: { type: 'string' }, out: { type: 'string' } },
  'usage: node dist/bench/pruning.js --index DIR --queries FILE --corpus NAME [--rounds 3] [--k 10] [--out bench/results/search.json]',
);
if (!values.index || !values.queries || !values.corpus) badFlag('--index, --queries and --corpus are required');
const rounds = values.rounds === undefined ? 3 : wholeFlag(values, 'rounds', 1);
const k = values.k === undefined ? 10 : wholeFlag(values, 'k', 1);
const out = values.out ?? 'bench/results/search.json';

const index = await openIndex(values.index);
const queries = readFileSync(values.queries, 'utf8').split('\n').filter((l) => l.trim()).map((l) => (JSON.parse(l) as { query: string }).query);
const terms = queries.map((q) => index.analyze(q).termIds);
const exhaustive = new Bm25Scorer(index.scorer.p, MAX_SEGMENT_DOCS, true, 'exhaustive');
const maxScore = new Bm25Scorer(index.scorer.p, MAX_SEGMENT_DOCS, true, 'pruned');

// Warm-up: every term's postings read, both code paths compiled; and the exactness check.
let identical = true;
for (const ids of terms) {
  const a = exhaustive.topK(ids, k);
  const b = maxScore.topK(ids, k);
  if (JSON.stringify(a) !== JSON.stringify(b)) identical = false;
}
/** Queries per second of wall-clock time and of CPU time, over one pass of every query. */
const rate = (scorer: Bm25Scorer): [number, number] => {
  const t = now();
  const cpu = process.cpuUsage();
  for (const ids of terms) scorer.topK(ids, k);
  const used = process.cpuUsage(cpu);
  return [round(queries.length / ((now() - t) / 1000), 1)!, round(queries.length / ((used.user + used.system) / 1e6), 1)!];
};
const wall = { exhaustive: [] as number[], maxScore: [] as number[] };
const cpu = { exhaustive: [] as number[], maxScore: [] as number[] };
for (let r = 0; r < rounds; r++) {
  for (const [name, scorer] of [['exhaustive', exhaustive], ['maxScore', maxScore]] as const) {
    const [w, c] = rate(scorer);
    wall[name].push(w);
    cpu[name].push(c);
  }
  process.stderr.write(`round ${r + 1}: exhaustive ${wall.exhaustive[r]} queries/s (${cpu.exhaustive[r]} per CPU second), block-max MaxScore ${wall.maxScore[r]} (${cpu.maxScore[r]})\n`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1]!;
const entry = {
  corpus: values.corpus, chunks: index.size, k, queries: queries.length, rounds,
  exhaustive_qps: wall.exhaustive, maxscore_qps: wall.maxScore, exhaustive_cpu_qps: cpu.exhaustive, maxscore_cpu_qps: cpu.maxScore,
  speedup_cpu: round(median(cpu.maxScore) / median(cpu.exhaustive), 2), identical,
};
console.log(JSON.stringify(entry));
const results = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as { pruning?: (typeof entry)[] }) : {};
results.pruning = [...(results.pruning ?? []).filter((p) => p.corpus !== entry.corpus || p.k !== entry.k || p.chunks !== entry.chunks), entry];
writeFileSync(`${out}.tmp`, JSON.stringify(results, null, 2) + '\n');
renameSync(`${out}.tmp`, out);
index.close();
