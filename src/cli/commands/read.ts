import { InputError } from '../../errors.js';
import { defaultIndexDir, openSearcher } from '../../search/index.js';
import { parseFlags, printJson, type Command } from '../command.js';
import { terminalSafe } from '../safe-text.js';

const usage = `usage: sleuth read [--index DIR] [--json] ID

Print one chunk of an index by id: id, title, text (and metadata, if it has any).
  --index  index directory (default ${defaultIndexDir()})
  --json   print {id, title, text, meta?} as JSON`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { index: { type: 'string' }, json: { type: 'boolean' } }, 'read');
    if (positionals.length !== 1) throw new InputError(`expected exactly one chunk ID, got ${positionals.length}`);
    const id = positionals[0]!;
    const dir = values.index ?? defaultIndexDir();
    const index = await openSearcher(dir);
    const chunk = index.read(id);
    if (!chunk) throw new InputError(`no chunk with id ${JSON.stringify(id)} in the index at ${dir}`);
    if (values.json) {
      printJson(chunk);
      return 0;
    }
    console.log(terminalSafe(`${chunk.title}  [${chunk.id}]`));
    if (chunk.meta) console.log(Object.entries(chunk.meta).map(([k, v]) => terminalSafe(`${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)).join('\n'));
    console.log('');
    console.log(terminalSafe(chunk.text, { multiline: true }));
    return 0;
  },
};
