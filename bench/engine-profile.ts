/**
 * Where a BM25 query's time goes: the same queries through this engine's exhaustive loop, its
 * pruned loop and its per-query choice ('auto'), and optionally through another build of sleuth
 * (the engine before, --baseline-dist, on its own index of the same corpus, --baseline-index),
 * query by query in turn so that load from other processes hits each alike. Every top k is
 * compared to the bit with the exhaustive loop's (and the baseline's).
 *
 *   node dist/bench/engine-profile.js --index DIR --corpus KIND --chunks N [--k 10] [--reps 3]
 *       [--baseline-dist DIR --baseline-index DIR] [--out FILE]
 *
 * The index is one built by bench:scale --keep (the queries are the corpus's, bench/corpora/kinds.ts).
 * Each segment of it is scored on its own, with its own idfs. Per query class (terms; postings of
 * its terms) it prints the mean milliseconds per query of each engine, the best of --reps runs of
 * each query, and the postings the WebAssembly loops scored; --out also holds every query's numbers.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bm25Scorer, openSearcher, SegmentedIndex, type ScoredDoc } from '../src/search/index.js';
import { MAX_SEGMENT_DOCS } from '../src/search/scoring-memory.js';
import { badFlag, benchArgs, wholeFlag } from './args.js';
import { guardLoad, LOAD_FLAG } from './load.js';
import { corpusQueries, isCorpusKind } from './corpora/kinds.js';
import { now, round } from './measure.js';

interface Scorer {
  topK(termIds: readonly number[], k: number): ScoredDoc[];
  df(termId: number): number;
}
interface Segment {
  scorer: Scorer;
  analyze(query: string): { termIds: number[] };
}

const { values } = benchArgs(
  {
    index: { type: 'string' }, corpus: { type: 'string' }, chunks: { type: 'string' }, k: { type: 'string' }, reps: { type: 'string' },
    'baseline-dist': { type: 'string' }, 'baseline-index': { type: 'string' }, out: { type: 'string' }, ...LOAD_FLAG,
  },
  'usage: node dist/bench/engine-profile.js --index DIR --corpus KIND --chunks N [--k 10] [--reps 3] [--baseline-dist DIR --baseline-index DIR] [--out FILE] [--allow-loaded]',
);
const guard = guardLoad('bench engine-profile', values['allow-loaded']);
if (!values.index || !values.corpus || !values.chunks) badFlag('--index, --corpus and --chunks are required');
if (!isCorpusKind(values.corpus)) badFlag(`--corpus: unknown corpus '${values.corpus}'`);
if ((values['baseline-dist'] === undefined) !== (values['baseline-index'] === undefined)) badFlag('--baseline-dist and --baseline-index go together');
const k = values.k === undefined ? 10 : wholeFlag(values, 'k', 1);
const reps = values.reps === undefined ? 3 : wholeFlag(values, 'reps', 1);
const queries = await corpusQueries(values.corpus, wholeFlag(values, 'chunks', 1));

function segmentsOf(ix: { segments?: readonly Segment[] } | Segment): readonly Segment[] {
  return ix instanceof SegmentedIndex || 'segments' in ix ? (ix as { segments: readonly Segment[] }).segments : [ix as Segment];
}
const ours = segmentsOf((await openSearcher(values.index)) as unknown as Segment);
let theirs: readonly Segment[] | undefined;
if (values['baseline-dist']) {
  const mod = (await import(pathToFileURL(resolve(values['baseline-dist'], 'dist', 'src', 'search', 'index.js')).href)) as { openSearcher(dir: string): Promise<unknown> };
  theirs = segmentsOf((await mod.openSearcher(values['baseline-index']!)) as Segment);
  if (theirs.length !== ours.length) badFlag(`--baseline-index has ${theirs.length} segments, --index ${ours.length}: build both from the same corpus and size`);
}

const engines = ['exhaustive', 'pruned', 'auto'] as const;
type Engine = (typeof engines)[number] | 'baseline';
interface Row {
  terms: number;
  postings: number;
  /** Its terms' document frequencies, ascending. */
  dfs: number[];
  ms: Record<Engine, number>;
  scored: Record<Engine, number>;
}
const rows: Row[] = [];
let mismatches = 0;
const bestOf = (run: () => ScoredDoc[]): [number, ScoredDoc[]] => {
  let best = Infinity;
  let out: ScoredDoc[] = [];
  for (let r = 0; r < reps; r++) {
    const t = now();
    out = run();
    best = Math.min(best, now() - t);
  }
  return [best, out];
};
const same = (a: ScoredDoc[], b: ScoredDoc[]) => a.length === b.length && a.every((h, i) => h.doc === b[i]!.doc && Object.is(h.score, b[i]!.score));

for (let s = 0; s < ours.length; s++) {
  const seg = ours[s]!;
  const base = seg.scorer as Bm25Scorer;
  const scorers = Object.fromEntries(engines.map((e) => [e, new Bm25Scorer(base.p, MAX_SEGMENT_DOCS, true, e)])) as Record<(typeof engines)[number], Bm25Scorer>;
  const memory = base.p.memory;
  if (!memory) badFlag('the index scores without WebAssembly (bm25.wasm not built?): run npm run build');
  // Warm-up: every term's postings read, every loop compiled.
  for (const q of queries) for (const e of engines) scorers[e].topK(seg.analyze(q).termIds, k);
  for (const q of queries) {
    const ids = seg.analyze(q).termIds;
    if (ids.length === 0) continue;
    const row: Row = { terms: ids.length, postings: ids.reduce((n, t) => n + base.df(t), 0), dfs: ids.map((t) => base.df(t)).sort((a, b) => a - b), ms: {} as Row['ms'], scored: {} as Row['scored'] };
    const results: Partial<Record<Engine, ScoredDoc[]>> = {};
    if (theirs) {
      const other = theirs[s]!;
      const theirIds = other.analyze(q).termIds;
      [row.ms.baseline, results.baseline] = bestOf(() => other.scorer.topK(theirIds, k));
      row.scored.baseline = theirIds.reduce((n, t) => n + other.scorer.df(t), 0);
    }
    for (const e of engines) {
      memory.postingsScored(true);
      [row.ms[e], results[e]] = bestOf(() => scorers[e].topK(ids, k));
      row.scored[e] = memory.postingsScored(true) / reps;
    }
    for (const e of ['pruned', 'auto', 'baseline'] as const) if (results[e] && !same(results[e], results.exhaustive!)) mismatches++;
    rows.push(row);
  }
}

/** Query classes: by terms, and by postings (decades). */
const classes: [string, (r: Row) => boolean][] = [
  ['all', () => true],
  ...[1, 2, 3, 4].map((n): [string, (r: Row) => boolean] => [`${n} term${n > 1 ? 's' : ''}`, (r) => r.terms === n]),
  ['5+ terms', (r) => r.terms >= 5],
  ...[0, 3, 4, 5, 6].map((e, i, all): [string, (r: Row) => boolean] => {
    const lo = i === 0 ? 0 : 10 ** e;
    const hi = i + 1 < all.length ? 10 ** all[i + 1]! : Infinity;
    return [`postings ${lo}-${hi === Infinity ? '' : hi}`, (r) => r.postings >= lo && r.postings < hi];
  }),
];
const shown: Engine[] = theirs ? ['baseline', ...engines] : [...engines];
const table = classes
  .map(([name, test]) => {
    const rs = rows.filter(test);
    if (rs.length === 0) return undefined;
    const mean = (f: (r: Row) => number) => rs.reduce((n, r) => n + f(r), 0) / rs.length;
    return {
      class: name, queries: rs.length, mean_postings: Math.round(mean((r) => r.postings)),
      ms: Object.fromEntries(shown.map((e) => [e, round(mean((r) => r.ms[e]), 4)])),
      scored: Object.fromEntries(shown.map((e) => [e, Math.round(mean((r) => r.scored[e]))])),
    };
  })
  .filter((x) => x !== undefined);
for (const t of table) process.stdout.write(`${t.class.padEnd(22)} ${String(t.queries).padStart(5)} q  ${String(t.mean_postings).padStart(9)} postings  ${shown.map((e) => `${e} ${t.ms[e]!.toFixed(3)} ms (${t.scored[e]})`).join('  ')}\n`);
process.stdout.write(`${mismatches} top-${k} lists differ from the exhaustive loop's\n`);
if (values.out) writeFileSync(values.out, JSON.stringify({ corpus: values.corpus, chunks: Number(values.chunks), k, reps, mismatches, ...guard.fields(), classes: table, queries: rows }, null, 2) + '\n');
if (mismatches > 0) process.exitCode = 1;
