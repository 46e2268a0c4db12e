import { InputError } from '../../errors.js';
import { openSearcher } from '../../search/index.js';
import { INDEX_FLAGS, indexDirOf, indexFlagsUsage } from '../index-flag.js';
import { intFlag, parseFlags, printJson, type Command } from '../command.js';
import { terminalSafe } from '../safe-text.js';
import { formatHits, outputWidth } from '../../text/width.js';

const usage = `usage: sleuth grep [--index DIR | --tasks NAME] [-k N] [--snippet N] [--time-limit MS] [--json] PATTERN

Search chunk texts (not titles) with a Python-syntax regular expression, run in linear time by RE2:
the first k matching chunks in index order, each with id, title and a snippet around the match.
Backreferences, lookahead/lookbehind, conditionals and possessive/atomic groups are rejected.
${indexFlagsUsage(14)}
  -k            number of hits (default 10)
  --snippet     snippet length in characters (default 200)
  --time-limit  stop after this many milliseconds and report what was found (default 1000)
  --json        print {pattern, k, hits: [{id, title, snippet}], timedOut, scanned} as JSON`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        ...INDEX_FLAGS,
        k: { type: 'string', short: 'k' },
        snippet: { type: 'string' },
        'time-limit': { type: 'string' },
        json: { type: 'boolean' },
      },
      'grep',
    );
    if (positionals.length !== 1) throw new InputError(`expected exactly one PATTERN (quote it), got ${positionals.length} arguments`);
    const pattern = positionals[0]!;
    const k = intFlag(values.k, 'k', 10, 1, 10_000);
    const snippetChars = intFlag(values.snippet, 'snippet', 200, 20, 100_000);
    const timeLimitMs = intFlag(values['time-limit'], 'time-limit', 1000, 1, 600_000);
    const index = await openSearcher(await indexDirOf(values));
    const result = index.grep(pattern, { k, snippetChars, timeLimitMs });
    if (values.json) {
      printJson({ pattern, k, ...result });
      return 0;
    }
    // Corpus text is made terminal-safe before it is laid out to the width.
    if (result.hits.length === 0) console.log(terminalSafe(`no chunk matches ${JSON.stringify(pattern)}`));
    else console.log(formatHits(result.hits.map(({ id, title, snippet }) => ({ id, title: terminalSafe(title), snippet: terminalSafe(snippet) })), outputWidth()));
    if (result.timedOut) console.log(`(stopped at the ${timeLimitMs} ms time limit after ${result.scanned} chunks; there may be more matches)`);
    return 0;
  },
};
