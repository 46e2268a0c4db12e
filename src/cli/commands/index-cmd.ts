import { InputError } from '../../errors.js';
import { readSourceBatches, CORPUS_FORMATS, type CorpusFormat } from '../../corpus/read.js';
import { embeddedChunks } from '../../corpus/embedded.js';
import { buildIndex, defaultIndexDir } from '../../search/index.js';
import { numberFlag, parseFlags, printJson, type Command } from '../command.js';
import { liveProgress } from '../progress.js';

const usage = `usage: sleuth index [--corpus PATH]... [--format ${CORPUS_FORMATS.join('|')}] [--out DIR] [--force]
                    [--k1 N] [--b N] [--stemmer porter2|none] [--stopwords english|none] [--json]

Build a search index. With no --corpus, indexes the embedded default corpus (HotpotQA + MuSiQue
paragraphs). --corpus may repeat and may name a directory of .jsonl/.json/.parquet files.
  --format   corpus layout (default auto: by extension and first record)
  --out      index directory (default ${defaultIndexDir()}: the embedded corpus's index, which
             search, grep and read use; with --corpus, give --out, or --force to replace it); an
             index at --out is replaced, anything else is refused unless --force
  --force    replace whatever is at --out, even files sleuth did not write
  --k1, --b  BM25 parameters (default 1.5, 0.75), recorded in the index
  --stemmer, --stopwords  analyzer settings (default porter2, english), recorded in the index
  --json     print the index statistics as JSON`;

export const command: Command = {
  usage,
  async run(argv) {
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
