import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { InputError } from '../../errors.js';
import { readQrels } from '../../ir/qrels.js';
import { readQueries } from '../../ir/queries.js';
import { finishTasks, type DraftTask } from '../check.js';
import type { LoadedTasks } from './types.js';

/** The files of a BEIR dataset directory (github.com/beir-cellar/beir: `GenericDataLoader`). */
export function beirFiles(dir: string): { corpus: string; queries: string; qrels: string[] } {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError(`${dir}: not a directory (a BEIR dataset is a folder with corpus.jsonl, queries.jsonl and qrels/)`);
  const corpus = join(dir, 'corpus.jsonl');
  const queries = join(dir, 'queries.jsonl');
  const qrelsDir = join(dir, 'qrels');
  for (const need of [corpus, queries, qrelsDir]) if (!existsSync(need)) throw new InputError(`${dir}: no ${basename(need)} (a BEIR dataset has corpus.jsonl, queries.jsonl and qrels/*.tsv)`);
  const qrels = readdirSync(qrelsDir).filter((n) => n.endsWith('.tsv')).sort().map((n) => join(qrelsDir, n));
  if (qrels.length === 0) throw new InputError(`${qrelsDir}: no .tsv files (BEIR's qrels are test.tsv, dev.tsv, train.tsv)`);
  return { corpus, queries, qrels };
}

/**
 * A BEIR dataset as tasks: each judged query of each qrels file is a task of the split the file
 * names (test.tsv: split `test`). Its facts are its relevant documents (grade >= 1, as trec_eval
 * counts relevance), most relevant first, and `meta.qrels` keeps every judgement with its grade so
 * that `sleuth ir-eval --tasks` scores graded nDCG exactly. The corpus (corpus.jsonl) is indexed
 * by the import; queries without a relevant document, or judged in a second split, are skipped.
 */
export async function loadBeir(dir: string): Promise<LoadedTasks> {
  const files = beirFiles(dir);
  const queries = new Map(readQueries(files.queries).map((q) => [q.id, q.text]));
  const drafts: DraftTask[] = [];
  const splits = new Map<string, string>();
  const skipped: LoadedTasks['skipped'] = [];
  for (const path of files.qrels) {
    const split = basename(path, '.tsv');
    for (const [qid, judged] of readQrels(path)) {
      const where = `${path} (query ${qid})`;
      const query = queries.get(qid);
      if (query === undefined) throw new InputError(`${where}: query '${qid}' is judged but not in ${files.queries}`);
      const earlier = splits.get(qid);
      if (earlier !== undefined) {
        skipped.push({ where, reason: `query '${qid}' is already a task of split '${earlier}'` });
        continue;
      }
      const relevant = [...judged].filter(([, grade]) => grade >= 1).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      if (relevant.length === 0) {
        skipped.push({ where, reason: `query '${qid}' has no document judged relevant` });
        continue;
      }
      splits.set(qid, split);
      drafts.push({
        where,
        task: {
          id: qid,
          query,
          facts: relevant.map(([doc, grade]) => ({ text: `document ${doc} (relevance ${grade})`, chunkIds: [doc] })),
          meta: { source: 'beir', qrels: Object.fromEntries(judged) },
        },
      });
    }
  }
  return { tasks: finishTasks(drafts), chunks: [], skipped, splits };
}
