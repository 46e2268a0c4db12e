import { suiteOf } from '../../suites/registry.js';
import { join } from 'node:path';
import { InputError } from '../../errors.js';
import { headroom, type Headroom } from '../../eval/metrics.js';
import { loadRunRows } from '../../eval/compare.js';
import { formatHeadroom } from '../../eval/report.js';
import { outputWidth } from '../../text/width.js';
import { parseFlags, printJson, intFlag, type Command } from '../command.js';
import { EVAL_FLAGS, evalFlagsUsage, prepareEval } from './eval.js';

/** A file-name-safe slug of the eval's identity, so a repeated headroom run resumes its own directory. */
function slug(...parts: (string | number | undefined)[]): string {
  return parts
    .filter((p) => p !== undefined)
    .join('-')
    .replace(/[^A-Za-z0-9._-]+/gu, '_')
    .slice(0, 120);
}

/** Best-of-N needs N >= 2; 4 shows a gain without a long wait. */
const DEFAULT_SAMPLES = 4;

export const command: Command = {
  usage: `usage: sleuth headroom --agent SPEC [--samples N] [--tasks NAME] [--split S] [--limit N] [--out DIR] ...

Samples N rollouts per task (default ${DEFAULT_SAMPLES}, at least 2) and reports best-of-N (the highest score per task) against
best-of-1 (the mean of its samples), with a paired bootstrap 95% interval on the gain. A deterministic
agent (the scripted baseline) gains nothing: its N samples are identical.

${evalFlagsUsage(DEFAULT_SAMPLES)}
  --out DIR             the run directory (default: runs/headroom-AGENT-TASKS-SPLIT-nN[-limitL],
                        where sleuth explore (default ./runs) shows it)`,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, EVAL_FLAGS, 'headroom');
    if (positionals.length) throw new InputError(`unexpected argument '${positionals[0]}'`);
    const samples = intFlag(values.samples, 'samples', DEFAULT_SAMPLES, 2, 10_000);
    const prepared = await prepareEval({ ...values, samples: String(samples) }, { samples });
    const dir = values.out ?? join('runs', `headroom-${slug(prepared.agent, prepared.tasks, prepared.split, `n${samples}`, values.limit ? `limit${values.limit}` : undefined, values.env, values.rubric)}`);
    const result = await prepared.run(dir);
    const seed = intFlag(values.seed, 'seed', 0);
    const { rows } = loadRunRows(dir);
    const metrics = suiteOf(result.summary.scoring).headline;
    const hs = metrics.map((m) => headroom(rows, m, { seed })).filter((h): h is Headroom => h !== undefined);
    if (values.json) printJson({ dir, agent: prepared.agent, samples, headroom: hs });
    else {
      console.log(formatHeadroom(hs, outputWidth()));
      if (hs.every((h) => h.gain.lo === 0 && h.gain.hi === 0)) {
        console.log(`\nEvery task scored the same on all ${samples} samples: ${prepared.agent} behaves deterministically, so best-of-N equals best-of-1.`);
      }
      console.log(`\nrollouts: ${dir}`);
    }
    return result.summary.errors > 0 ? 1 : 0;
  },
};
