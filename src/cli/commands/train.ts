import { DEFAULT_SUITE } from '../../suites/registry.js';
import { resolve, join } from 'node:path';
import { InputError } from '../../errors.js';
import { configFlagOptions, configFlagsUsage, configFromFlags, mergeConfig, parseTrainConfig, readConfigFile } from '../../train/config.js';
import { startTraining, storedConfig } from '../../train/start.js';
import { progressLine } from '../../train/progress.js';
import { parseFlags, printJson, type Command } from '../command.js';
import { estimateRunCost, formatCostEstimate } from '../../backend/tinker/cost.js';
import { loadPrices } from '../../eval/cost.js';
import { terminalSafe } from '../safe-text.js';

const usage = `usage: sleuth train [--config FILE] [--FIELD VALUE]... [--out DIR]
       sleuth train --resume DIR [--steps N]
       sleuth train --config FILE --dry-run     (tokens and dollars, from configs/prices.json)

GRPO: per step, a group of rollouts per query with the current weights, scored by the rubric,
advantages relative to the group, one forwardBackward + optimStep, new weights for the next step.
Writes DIR/config.json (the resolved config), metrics.jsonl, rollouts.jsonl, checkpoints.jsonl,
evals/step-N/ and summary.json. Ctrl-C stops after the current step, with a checkpoint.

  --config FILE    a preset (JSON or YAML), e.g. configs/local-demo.json; flags override it
  --out DIR        the run directory (new; default runs/train-ENV-TIME)
  --resume DIR     continue a run from its last checkpoint (optimiser state, data order, seeds);
                   flags such as --steps extend it
  --json           print the final summary as JSON
  --dry-run        estimate the run's tokens and cost from the config and the prices table, then stop

${configFlagsUsage()}`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { config: { type: 'string' }, out: { type: 'string' }, resume: { type: 'string' }, json: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, ...configFlagOptions() }, 'train');
    if (positionals.length) throw new InputError(`unexpected argument '${positionals[0]}'`);
    if (values.resume && values.out) throw new InputError('give either --out DIR (a new run) or --resume DIR, not both');
    if (values.resume && values.config) throw new InputError('--resume DIR uses the config stored in DIR; --config cannot be combined with it');
    if (values['dry-run'] && !values.resume) {
      // Estimate tokens and dollars from the config and the prices table; nothing is written or run.
      const base = values.config ? readConfigFile(values.config) : {};
      const config = parseTrainConfig(mergeConfig(base, configFromFlags(values)), values.config ? `--config ${values.config} with flags` : 'flags');
      const estimate = estimateRunCost(config, loadPrices());
      if (values.json) printJson(estimate);
      else console.log(formatCostEstimate(estimate));
      return 0;
    }
    // Without --out a new run gets its own directory under runs/, named by environment and start time.
    const out = values.resume ?? values.out ?? join('runs', `train-${String((values as Record<string, unknown>)['env'] ?? DEFAULT_SUITE)}-${new Date().toISOString().replace(/[:.]/gu, '-')}`);
    const dir = resolve(out);
    const base = values.resume ? storedConfig(dir) : values.config ? readConfigFile(values.config) : {};
    const source = values.resume ? `${dir}/config.json with flags` : values.config ? `--config ${values.config} with flags` : 'flags';
    const config = parseTrainConfig(mergeConfig(base, configFromFlags(values)), source);

    let stopRequested = false;
    const onSigint = () => {
      if (stopRequested) process.exit(130);
      stopRequested = true;
      process.stderr.write('\ntrain: stopping after this step (a checkpoint will be written); Ctrl-C again to quit at once\n');
    };
    process.on('SIGINT', onSigint);
    const started = Date.now();
    let evalF1: number | null = null;
    try {
      const result = await startTraining({
        dir,
        config,
        resume: Boolean(values.resume),
        shouldStop: () => stopRequested,
        log: (line) => process.stderr.write(`train: ${terminalSafe(line)}\n`),
        onEval: (step, s) => {
          evalF1 = typeof s['f1'] === 'number' ? s['f1'] : null;
          process.stderr.write(`train: eval at step ${step}: reward ${fmt(s['reward'])}  F1 ${fmt(s['f1'])}  recall ${fmt(s['recall'])}  (${s.tasks} tasks x ${s.samples})\n`);
        },
        onStep: (p) => process.stderr.write(progressLine(p, evalF1, started) + '\n'),
      });
      const summary = { dir, steps: result.steps, steps_done: result.stepsDone, stopped: result.stopped, resumed_from: result.resumedFrom, last_checkpoint: result.lastCheckpoint ?? null };
      if (values.json) printJson(summary);
      else {
        console.log(`${result.stopped ? 'stopped' : 'done'}: ${result.stepsDone}/${result.steps} steps in ${dir}`);
        if (result.lastCheckpoint) console.log(`last checkpoint: step ${result.lastCheckpoint.step}  ${result.lastCheckpoint.samplerPath ?? result.lastCheckpoint.path}`);
        console.log(`explore it: sleuth explore ${dir}`);
      }
      return result.stopped ? 130 : 0;
    } finally {
      process.off('SIGINT', onSigint);
    }
  },
};

function fmt(x: unknown): string {
  return typeof x === 'number' ? x.toFixed(3) : '-';
}
