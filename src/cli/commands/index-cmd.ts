import { InputError } from '../../errors.js';
import { readSourceBatches, CORPUS_FORMATS, type CorpusFormat } from '../../corpus/read.js';
import { embeddedChunks } from '../../corpus/embedded.js';
import { buildIndex, defaultIndexDir } from '../../search/index.js';
import { verifyIndex, type VerifyReport } from '../../search/verify.js';
import { numberFlag, parseFlags, printJson, type Command } from '../command.js';
import { INDEX_FLAGS, indexDirOf, indexFlagsUsage } from '../index-flag.js';
import { liveProgress } from '../progress.js';

const usage = `usage: sleuth index [--corpus PATH]... [--format ${CORPUS_FORMATS.join('|')}] [--out DIR] [--force]
                    [--k1 N] [--b N] [--stemmer porter2|none] [--stopwords english|none] [--json]
       sleuth index verify [--index DIR | --tasks NAME] [--json]

Build a search index. With no --corpus, indexes the embedded default corpus (HotpotQA + MuSiQue
paragraphs). --corpus may repeat and may name a directory of .jsonl/.json/.parquet files.
  --format   corpus layout (default auto: by extension and first record)
  --out      index directory (default ${defaultIndexDir()}: the embedded corpus's index, which
             search, grep and read use; with --corpus, give --out, or --force to replace it); an
             index at --out is replaced, anything else is refused unless --force
  --force    replace whatever is at --out, even files sleuth did not write
  --k1, --b  BM25 parameters (default 1.5, 0.75), recorded in the index
  --stemmer, --stopwords  analyzer settings (default porter2, english), recorded in the index
  --json     print the index statistics as JSON

index verify checks an index in full: every 4 KiB block of every file against the checksum
written when it was built, and the files against one another (offsets, the id order, the
vocabulary, every postings block against the term table and the document lengths, a sample of
texts re-analysed). It prints each problem with its file and byte offset; exit 0 when the index is
clean, 2 when it is damaged. Searches check the blocks they read as they read them.
${indexFlagsUsage(9)}
  --json     print the report as JSON`;

async function verify(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...INDEX_FLAGS, json: { type: 'boolean' } }, 'index verify');
  if (positionals.length > 0) throw new InputError(`unexpected argument '${positionals[0]}' (sleuth index verify takes --index DIR or --tasks NAME)`);
  const dir = await indexDirOf(values);
  const report = await verifyIndex(dir);
  if (values.json) printJson(report);
  else console.log(describeReport(report));
  return report.problems.length === 0 ? 0 : 2;
}

/** The report as the terminal shows it: a summary line, then one line per problem. */
export function describeReport(r: VerifyReport): string {
  const size = `${r.files} files, ${(r.bytes / 1e6).toFixed(1)} MB, checked in ${r.seconds.toFixed(2)} s (${(r.bytes / 1e6 / Math.max(r.seconds, 1e-9)).toFixed(0)} MB/s)`;
  const lines = [`index ${r.dir}: ${size}: ${r.problems.length === 0 ? 'clean' : `${r.problems.length} problem${r.problems.length === 1 ? '' : 's'}`}`];
  if (!r.checksums) lines.push('  no checksums (built before sleuth checked its indexes): only the structure was checked; rebuild it with `sleuth index` to enable checks');
  for (const p of r.problems) lines.push(`  ${p.file}${p.offset !== undefined ? ` at byte ${p.offset}` : ''}: ${p.problem}`);
  if (r.problems.length > 0) lines.push('rebuild the index with `sleuth index` (from its corpus) to repair it');
  return lines.join('\n');
}

export const command: Command = {
  usage,
  async run(argv) {
    if (argv[0] === 'verify') return verify(argv.slice(1));
    const { values, positionals } = parseFlags(argv, {
      corpus: { type: 'string', multiple: true },
      format: { type: 'string' },
      out: { type: 'string' },
      k1: { type: 'string' },
      b: { type: 'string' },
      stemmer: { type: 'string' },
      stopwords: { type: 'string' },
      json: { type: 'boolean' },
      force: { type: 'boolean' },
    }, 'index');
    if (positionals.length > 0) throw new InputError(`unexpected argument '${positionals[0]}' (corpora go after --corpus)`);
    const format = (values.format ?? 'auto') as CorpusFormat;
    if (!CORPUS_FORMATS.includes(format)) throw new InputError(`--format must be one of ${CORPUS_FORMATS.join(', ')}, got '${values.format}'`);
    const stemmer = values.stemmer ?? 'porter2';
    if (stemmer !== 'porter2' && stemmer !== 'none') throw new InputError(`--stemmer must be porter2 or none, got '${stemmer}'`);
    const stopwords = values.stopwords ?? 'english';
    if (stopwords !== 'english' && stopwords !== 'none') throw new InputError(`--stopwords must be english or none, got '${stopwords}'`);
    const corpora = values.corpus ?? [];
    // The default index is the embedded corpus's: search, grep and read use it when given no
    // --index, and the default task set's facts point into it. Another corpus goes there only on purpose.
    if (values.out === undefined && corpora.length > 0 && !values.force) {
      throw new InputError(`without --out, the index of ${corpora.join(', ')} would be written to ${defaultIndexDir()} and replace the default index that search, grep and read use: choose another place with --out DIR (then search it with --index DIR), or pass --force to replace the default index`);
    }
    const out = values.out ?? defaultIndexDir();

    const progress = liveProgress({ label: 'index', unit: 'chunks', enabled: !values.json });
    // Reading a corpus file measures the share done in bytes; the embedded corpus has a known size.
    let fraction: number | undefined;
    const chunks = corpora.length > 0
      ? readSourceBatches(corpora.map((path) => ({ path, format })), { onProgress: (b, t) => (fraction = t > 0 ? b / t : undefined) })
      : embeddedChunks();
    const started = Date.now();
    const stats = await buildIndex(chunks, out, {
      k1: numberFlag(values.k1, 'k1', 1.5, 0),
      b: numberFlag(values.b, 'b', 0.75, 0, 1),
      analyzer: { stemmer, stopwords },
      onProgress: (n) => progress.update(n, fraction === undefined ? {} : { fraction }),
      force: values.force ?? false,
    });
    progress.done();
    const seconds = (Date.now() - started) / 1000;
    if (values.json) {
      printJson({ ...stats, seconds });
    } else {
      console.log(`indexed ${stats.docs.toLocaleString('en-US')} chunks (${stats.terms.toLocaleString('en-US')} terms, ${stats.postings.toLocaleString('en-US')} postings) into ${out} in ${seconds.toFixed(1)} s, ${(stats.bytes / 1e6).toFixed(1)} MB`);
    }
    return 0;
  },
};
