import { InputError } from '../../errors.js';
import { DEFAULT_MEASURES, evaluateRun, parseMeasures } from '../../ir/measures.js';
import { readQrels } from '../../ir/qrels.js';
import { qrelsOfTasks } from '../../tasks/qrels.js';
import { readRun } from '../../ir/trec-run.js';
import { loadTaskSet } from '../../tasks/registry.js';
import { parseFlags, printJson, type Command } from '../command.js';

const usage = `usage: sleuth ir-eval --run RUN (--qrels QRELS | --tasks SET [--split S]) [--metrics LIST]
                      [--only-run-queries] [--per-query] [--json]

Score a ranked run against relevance judgements, exactly as trec_eval computes the same measures
(ties in score broken by document id, descending, as trec_eval does; the RANK column is ignored).
  --run RUN            a TREC run (QID Q0 DOCNO RANK SCORE RUN_ID), e.g. from \`sleuth search --queries\`,
                       or its --format jsonl output
  --qrels QRELS        TREC qrels (QID 0 DOCNO REL) or BEIR's qrels/*.tsv (query-id, corpus-id, score)
  --tasks SET          or the judgements of a task set: a BEIR import's graded qrels, else every fact
                       chunk at relevance 1; --split picks its split (e.g. test)
  --metrics LIST       comma-separated; ndcg@K, recall@K, map, map@K, P@K, mrr@K
                       (default ${DEFAULT_MEASURES}); trec_eval names: ndcg_cut.K, recall.K, map,
                       map_cut.K, P.K, and recip_rank with -M K
  --only-run-queries   average over the judged queries the run has (trec_eval without -c); by default
                       every judged query counts, one missing from the run scoring 0 (trec_eval -c)
  --per-query          print each query's values too
  --json               print {queries, missingFromRun, notInQrels, mean, perQuery} as JSON`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      run: { type: 'string' },
      qrels: { type: 'string' },
      tasks: { type: 'string' },
      split: { type: 'string' },
      metrics: { type: 'string' },
      'only-run-queries': { type: 'boolean' },
      'per-query': { type: 'boolean' },
      json: { type: 'boolean' },
    }, 'ir-eval');
    if (positionals.length > 0) throw new InputError(`unexpected argument '${positionals[0]}'`);
    if (values.run === undefined) throw new InputError('--run RUN is required');
    if ((values.qrels === undefined) === (values.tasks === undefined)) throw new InputError('give the judgements: --qrels QRELS or --tasks SET (one of them)');
    if (values.split !== undefined && values.tasks === undefined) throw new InputError('--split goes with --tasks SET');
    const measures = parseMeasures(values.metrics ?? DEFAULT_MEASURES);
    const qrels = values.qrels !== undefined ? readQrels(values.qrels) : qrelsOfTasks((await loadTaskSet(values.tasks!, { validate: false })).tasks(values.split));
    const result = evaluateRun(readRun(values.run), qrels, measures, { onlyRunQueries: values['only-run-queries'] ?? false });
    if (values.json) {
      printJson({ queries: result.queries, missingFromRun: result.missingFromRun, notInQrels: result.notInQrels, mean: result.mean, ...(values['per-query'] ? { perQuery: result.perQuery } : {}) });
      return 0;
    }
    const width = Math.max(12, ...measures.map((m) => m.name.length + 2));
    if (values['per-query']) {
      for (const q of result.perQuery) for (const m of measures) console.log(`${m.name.padEnd(width)}${q.qid.padEnd(12)}${q.values[m.name]!.toFixed(4)}`);
    }
    for (const m of measures) console.log(`${m.name.padEnd(width)}${'all'.padEnd(12)}${result.mean[m.name]!.toFixed(4)}`);
    const missing = result.missingFromRun > 0 ? (values['only-run-queries'] ? `; ${result.missingFromRun} judged queries not in the run left out` : `; ${result.missingFromRun} judged queries not in the run scored 0`) : '';
    const ignored = result.notInQrels > 0 ? `; ${result.notInQrels} run queries without judgements ignored` : '';
    console.log(`${'queries'.padEnd(width)}${'all'.padEnd(12)}${result.queries}${missing}${ignored}`);
    return 0;
  },
};
