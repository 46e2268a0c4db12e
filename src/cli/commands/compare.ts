import { InputError } from '../../errors.js';
import { compareRuns, loadRunRows, refuseTrainingRun } from '../../eval/compare.js';
import { formatComparison } from '../../eval/report.js';
import { intFlag, parseFlags, printJson, type Command } from '../command.js';
import { outputWidth } from '../../text/width.js';

export const command: Command = {
  usage: `usage: sleuth compare RUN_DIR RUN_DIR... [--resamples N] [--seed N] [--json]

Uses only the tasks every run has rollouts for. Each metric's mean per run with a bootstrap 95%
interval over tasks, and each later run minus the first, paired per task. A difference whose
interval contains 0 is marked n.s. (not shown).

  --resamples N   bootstrap resamples (default 2000, at least 1000)
  --seed N        bootstrap seed (default 0)
  --json          print the comparison as JSON`,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { resamples: { type: 'string' }, seed: { type: 'string' }, json: { type: 'boolean' } }, 'compare');
    if (positionals.length < 2) throw new InputError('compare needs at least two run directories');
    const resamples = intFlag(values.resamples, 'resamples', 2000, 1000, 1_000_000);
    const seed = intFlag(values.seed, 'seed', 0);
    positionals.forEach(refuseTrainingRun);
    const comparison = compareRuns(positionals.map(loadRunRows), { resamples, seed });
    if (values.json) printJson(comparison);
    else console.log(formatComparison(comparison, outputWidth()));
    return 0;
  },
};
