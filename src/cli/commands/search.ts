import { InputError } from '../../errors.js';
import { defaultIndexDir, openIndex } from '../../search/index.js';
import { intFlag, parseFlags, printJson, type Command } from '../command.js';
import { formatHits, outputWidth } from '../width.js';

const usage = `usage: sleuth search [--index DIR] [-k N] [--snippet N] [--json] QUERY

BM25 top-k over an index built by \`sleuth index\`: id, title, score and a snippet per hit.
  --index    index directory (default ${defaultIndexDir()})
  -k         number of hits (default 10)
  --snippet  snippet length in characters (default 240)
  --json     print {query, hits: [{id, title, score, snippet}]} as JSON`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      index: { type: 'string' },
      k: { type: 'string', short: 'k' },
      snippet: { type: 'string' },
      json: { type: 'boolean' },
    }, 'search');
    const query = positionals.join(' ');
    if (query.trim() === '') throw new InputError('missing QUERY: give the words to search for');
    const k = intFlag(values.k, 'k', 10, 1, 10_000);
    const snippetChars = intFlag(values.snippet, 'snippet', 240, 20, 100_000);
    const index = await openIndex(values.index ?? defaultIndexDir());
    const hits = index.search(query, k, { snippetChars });
    if (values.json) {
      printJson({ query, k, hits });
      return 0;
    }
    if (hits.length === 0) console.log(`no chunk matches ${JSON.stringify(query)}`);
    else console.log(formatHits(hits, outputWidth()));
    return 0;
  },
};
