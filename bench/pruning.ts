/**
 * MaxScore pruning against exhaustive scoring, side by side on one loaded index: the same postings,
 * two scorers, the queries run in alternating rounds (exhaustive, MaxScore, exhaustive, ...) so
 * that load from other processes hits both alike, and every query's top k compared to the bit.
 *
 *   node dist/bench/pruning.js --index DIR --queries FILE --corpus NAME [--rounds 3] [--k 10] [--out bench/results/search.json]
 *
 * Merges {pruning: [{corpus, chunks, k, rounds, exhaustive_qps[], maxscore_qps[], identical}]}
 * into --out (by corpus and k). Top-k document numbers and scores only: no ids or snippets.
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
const exhaustive = new Bm25Scorer(index.scorer.p, MAX_SEGMENT_DOCS, true, false);
const maxScore = new Bm25Scorer(index.scorer.p, MAX_SEGMENT_DOCS, true, true);

// Warm-up: every term's postings read, both code paths compiled; and the exactness check.
let identical = true;
for (const ids of terms) {
  const a = exhaustive.topK(ids, k);
  const b = maxScore.topK(ids, k);
  if (JSON.stringify(a) !== JSON.stringify(b)) identical = false;
}
const rate = (scorer: Bm25Scorer) => {
  const t = now();
  for (const ids of terms) scorer.topK(ids, k);
  return queries.length / ((now() - t) / 1000);
};
const exhaustiveQps: number[] = [];
const maxScoreQps: number[] = [];
for (let r = 0; r < rounds; r++) {
  exhaustiveQps.push(round(rate(exhaustive), 1)!);
  maxScoreQps.push(round(rate(maxScore), 1)!);
  process.stderr.write(`round ${r + 1}: exhaustive ${exhaustiveQps[r]} queries/s, MaxScore ${maxScoreQps[r]}\n`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1]!;
const entry = { corpus: values.corpus, chunks: index.size, k, queries: queries.length, rounds, exhaustive_qps: exhaustiveQps, maxscore_qps: maxScoreQps, speedup: round(median(maxScoreQps) / median(exhaustiveQps), 2), identical };
console.log(JSON.stringify(entry));
const results = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as { pruning?: (typeof entry)[] }) : {};
results.pruning = [...(results.pruning ?? []).filter((p) => p.corpus !== entry.corpus || p.k !== entry.k || p.chunks !== entry.chunks), entry];
writeFileSync(`${out}.tmp`, JSON.stringify(results, null, 2) + '\n');
renameSync(`${out}.tmp`, out);
index.close();
