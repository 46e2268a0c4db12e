import { InputError } from '../../errors.js';
import { openSearcher } from '../../search/index.js';
import { INDEX_FLAGS, indexDirOf, indexFlagsUsage } from '../index-flag.js';
import { parseFlags, printJson, type Command } from '../command.js';
import { terminalSafe } from '../safe-text.js';

const usage = `usage: sleuth read [--index DIR | --tasks NAME] [--json] ID

Print one chunk of an index by id: id, title, text (and metadata, if it has any).
${indexFlagsUsage()}
  --json     print {id, title, text, meta?} as JSON`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { ...INDEX_FLAGS, json: { type: 'boolean' } }, 'read');
    if (positionals.length !== 1) throw new InputError(`expected exactly one chunk ID, got ${positionals.length}`);
    const id = positionals[0]!;
    const dir = await indexDirOf(values);
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
