import { suiteOf } from '../../suites/registry.js';
import { join } from 'node:path';
import { InputError } from '../../errors.js';
import { headroom, type Headroom } from '../../eval/metrics.js';
import { loadRunRows } from '../../eval/compare.js';
import { formatHeadroom } from '../../eval/report.js';
import { outputWidth } from '../../text/width.js';
import { parseFlags, printJson, intFlag, type Command } from '../command.js';
import { EVAL_FLAGS, evalFlagsUsage, prepareEval } from './eval.js';
import { pairedBootstrap } from '../../eval/stats.js';
import { readTaskSet } from '../../tasks/registry.js';
import { recordedRecalls } from '../../tasks/synthesize/synthesize.js';

/**
 * A synthesized set records, per task, the recall of the question's own top 10 and of the hop
 * oracle: the room between them is what searching beyond one query can win, known before any run.
 */
function recordedRoom(tasksName: string, taskIds: ReadonlySet<string>, seed: number) {
  const tasks = readTaskSet(tasksName).tasks.filter((t) => taskIds.has(t.id));
  const { question, oracle } = recordedRecalls(tasks);
  if (question.length === 0) return undefined;
  return { tasks: question.length, questionRecall: question.reduce((a, b) => a + b, 0) / question.length, oracleRecall: oracle.reduce((a, b) => a + b, 0) / oracle.length, room: pairedBootstrap(question, oracle, { seed }) };
}

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
    const recorded = recordedRoom(prepared.tasks, new Set(rows.map((r) => r.taskId)), seed);
    if (values.json) printJson({ dir, agent: prepared.agent, samples, headroom: hs, ...(recorded ? { recorded } : {}) });
    else {
      console.log(formatHeadroom(hs, outputWidth()));
      if (recorded) {
        const { lo, hi } = recorded.room;
        console.log(`\nRecorded at synthesis (${recorded.tasks} tasks): the question's own top 10 finds ${recorded.questionRecall.toFixed(3)} of the gold chunks, the hop oracle ${recorded.oracleRecall.toFixed(3)}: room ${(recorded.oracleRecall - recorded.questionRecall).toFixed(3)} [${lo.toFixed(3)}, ${hi.toFixed(3)}] of recall for searching beyond one query.`);
      }
      if (hs.every((h) => h.gain.lo === 0 && h.gain.hi === 0)) {
        console.log(`\nEvery task scored the same on all ${samples} samples: ${prepared.agent} behaves deterministically, so best-of-N equals best-of-1.`);
      }
      console.log(`\nrollouts: ${dir}`);
    }
    return result.summary.errors > 0 ? 1 : 0;
  },
};
