import { resolve } from 'node:path';
import { InputError } from '../../errors.js';
import { scaffoldSuite } from '../../suites/scaffold.js';
import { parseFlags, type Command } from '../command.js';

const usage = `usage: sleuth new-suite [--root DIR] NAME

Start a new environment: copy the template suite (src/suites/template/: a table lookup with two
tools, its reward parts and rubrics, its scripted baseline and oracle, its tasks) and its test
(test/suites/template/) to src/suites/NAME/ and test/suites/NAME/, renamed. Then add the printed
import and the suite to SUITES in src/suites/registry.ts, and make the copy your environment.
Writes only folders that do not exist yet.
  --root DIR   the checkout of sleuth to write in (default: the current directory)`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { root: { type: 'string' } }, 'new-suite');
    if (positionals.length !== 1) throw new InputError(`expected exactly one NAME, got ${positionals.length}`);
    const root = resolve(values.root ?? '.');
    const made = scaffoldSuite(root, positionals[0]!);
    console.log(`wrote ${made.files.join(', ')}`);
    console.log(`\nregister it in src/suites/registry.ts:\n  ${made.registryImport}\n  and ${made.suiteExport} in the SUITES list`);
    return 0;
  },
};
