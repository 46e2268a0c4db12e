import { existsSync } from 'node:fs';
import { writeFileAtomic } from '../../files/atomic.js';
import { InputError } from '../../errors.js';
import { searchBatch } from '../../ir/batch.js';
import { readQueries } from '../../ir/queries.js';
import { jsonlRunLine, trecRunLines } from '../../ir/trec-run.js';
import { openSearcher } from '../../search/index.js';
import { INDEX_FLAGS, indexDirOf, indexFlagsUsage } from '../index-flag.js';
import { intFlag, parseFlags, printJson, type Command } from '../command.js';
import { terminalSafe } from '../safe-text.js';
import { formatHits, outputWidth } from '../../text/width.js';

const usage = `usage: sleuth search [--index DIR | --tasks NAME] [-k N] [--snippet N] [--json] QUERY
       sleuth search [--index DIR | --tasks NAME] --queries FILE [-k N] [--format trec|jsonl] [--run-id NAME]
                     [--out FILE [--force]]

BM25 top-k over an index built by \`sleuth index\`: id, title, score and a snippet per hit.
${indexFlagsUsage()}
  -k         number of hits (default 10; with --queries 1000)
  --snippet  snippet length in characters (default 240)
  --json     print {query, hits: [{id, title, score, snippet}]} as JSON

Batch mode, in one process at the index's own speed (no snippets):
  --queries FILE  one query per line: JSONL ({"_id", "text"} as BEIR's queries.jsonl, or id/qid and
                  query) or TSV (ID<TAB>TEXT)
  --format        trec (default): 'QID Q0 DOCNO RANK SCORE RUN_ID' lines, for trec_eval and
                  \`sleuth ir-eval\`; jsonl: {qid, query, hits: [{id, title, score}]} per query
  --run-id        the run file's last column (default sleuth-bm25)
  --out FILE      write there instead of stdout; an existing file is kept unless --force
A query without searchable words gets no results and is reported on stderr.`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      ...INDEX_FLAGS,
      k: { type: 'string', short: 'k' },
      snippet: { type: 'string' },
      json: { type: 'boolean' },
      queries: { type: 'string' },
      format: { type: 'string' },
      'run-id': { type: 'string' },
      out: { type: 'string' },
      force: { type: 'boolean' },
    }, 'search');
    if (values.queries !== undefined) return batch(values, positionals);
    for (const flag of ['format', 'run-id', 'out', 'force'] as const) if (values[flag] !== undefined) throw new InputError(`--${flag} goes with --queries FILE`);
    const query = positionals.join(' ');
    if (query.trim() === '') throw new InputError('missing QUERY: give the words to search for');
    const k = intFlag(values.k, 'k', 10, 1, 10_000);
    const snippetChars = intFlag(values.snippet, 'snippet', 240, 20, 100_000);
    const index = await openSearcher(await indexDirOf(values));
    const hits = index.search(query, k, { snippetChars });
    if (values.json) {
      printJson({ query, k, hits });
      return 0;
    }
    // Corpus text is made terminal-safe before it is laid out to the width.
    if (hits.length === 0) console.log(terminalSafe(`no chunk matches ${JSON.stringify(query)}`));
    else console.log(formatHits(hits.map((h) => ({ ...h, title: terminalSafe(h.title), snippet: terminalSafe(h.snippet) })), outputWidth()));
    return 0;
  },
};

async function batch(values: { index?: string; tasks?: string; k?: string; queries?: string; format?: string; 'run-id'?: string; out?: string; force?: boolean; json?: boolean; snippet?: string }, positionals: string[]): Promise<number> {
  if (positionals.length > 0) throw new InputError(`--queries FILE takes the queries from the file; unexpected argument '${positionals[0]}'`);
  if (values.json || values.snippet !== undefined) throw new InputError('--queries writes a run (--format trec|jsonl); --json and --snippet are for one QUERY');
  const format = values.format ?? 'trec';
  if (format !== 'trec' && format !== 'jsonl') throw new InputError(`--format must be trec or jsonl, got '${format}'`);
  const runId = values['run-id'] ?? 'sleuth-bm25';
  if (!/^\S+$/u.test(runId)) throw new InputError(`--run-id '${runId}': a run id is one word (no spaces)`);
  const k = intFlag(values.k, 'k', 1000, 1, 100_000);
  if (values.out !== undefined && existsSync(values.out) && !values.force) throw new InputError(`--out ${values.out}: the file exists (pass --force to replace it)`);
  const queries = readQueries(values.queries!);
  const index = await openSearcher(await indexDirOf(values));
  const started = performance.now();
  const { ranked, unsearchable } = searchBatch(index, queries, k);
  const seconds = (performance.now() - started) / 1000;
  const text = ranked.map((r) => (format === 'trec' ? trecRunLines(r, runId) : jsonlRunLine(r))).join('');
  if (values.out === undefined) process.stdout.write(text);
  else {
    // An interrupted run never leaves half a file under the name.
    writeFileAtomic(values.out, text);
  }
  const rate = Math.round(queries.length / Math.max(seconds, 1e-9));
  process.stderr.write(`searched ${queries.length} queries (top ${k}) in ${seconds.toFixed(2)} s, ${rate} queries/s${values.out ? `; wrote ${values.out}` : ''}\n`);
  if (unsearchable.length > 0) process.stderr.write(terminalSafe(`${unsearchable.length} queries have no results, e.g. '${unsearchable[0]!.id}': ${unsearchable[0]!.reason}`) + '\n');
  return 0;
}
