import { join, resolve } from 'node:path';
import { resolveRunAgent } from '../agents.js';
import { InputError } from '../../errors.js';
import { createBackend } from '../../train/backend-factory.js';
import { configFlagOptions, configFlagsUsage, configFromFlags, mergeConfig, parseTrainConfig, readConfigFile, rubricOf } from '../../train/config.js';
import '../../backend/local/agent.js';
import { loadTrainInputs, priceOf } from '../../train/start.js';
import { runSft } from '../../train/sft.js';
import { intFlag, numberFlag, parseFlags, printJson, type Command } from '../command.js';
import { isRunDir } from '../../runs/store.js';

const usage = `usage: sleuth sft --teacher SPEC [--config FILE] [--FIELD VALUE]... --out DIR

Rejection-sampled SFT (STaR): the teacher attempts every training query several times; per query
the attempt that scored above the threshold, searched at least once and saw gold support in its
tool results is kept (up to --cap): the shortest one, or with --sft-keep best the highest-scoring.
Gold support is a chunk of at least one of the query's facts (--sft-keep-if any-fact, the default),
or of every fact (--sft-keep-if all-gold: the seed's rule). The kept episodes are rendered in the student's format
and trained with cross-entropy on the model-written tokens only, for --epochs epochs; the epoch
with the best eval reward is the result (DIR/summary.json: best.samplerPath).

  --teacher SPEC     baseline[:K], baseline-sweep:K1,K2,.. (attempt j uses K_j), follow-sweep
                     (attempt j uses follow plan j), follow:K1,TITLES,K2[,q], bridge-sweep and
                     span-sweep (multi-hop: follow a hit's text, or a candidate span of it), oracle,
                     local:PATH, openai:MODEL[@URL] (required)
  --attempts N       attempts per query (default 5)
  --cap N            demonstrations kept per query at most (default 1)
  --threshold X      keep attempts with reward above X (default 0.3)
  --batch-size N     demonstrations per optimiser step (default 16)
  --config FILE      the student's settings (backend, model, budgets, lr, eval split, ...), e.g.
                     configs/local-demo.json; --epochs sets the SFT epochs (default 3)
  --out DIR          the run directory (new)
  --json             print the result as JSON

${configFlagsUsage()}`;

export const command: Command = {
  usage,
  async run(argv) {
    const flags = { teacher: { type: 'string' }, attempts: { type: 'string' }, cap: { type: 'string' }, threshold: { type: 'string' }, 'batch-size': { type: 'string' }, config: { type: 'string' }, out: { type: 'string' }, json: { type: 'boolean' }, ...configFlagOptions() } as const;
    const { values, positionals } = parseFlags(argv, flags, 'sft');
    if (positionals.length) throw new InputError(`unexpected argument '${positionals[0]}'`);
    if (!values.teacher) throw new InputError('--teacher SPEC is required (e.g. baseline-sweep:1,2,3,5,8)');
    if (!values.out) throw new InputError('--out DIR is required');
    const dir = resolve(values.out);
    if (isRunDir(dir)) throw new InputError(`--out ${values.out} already holds a run; choose another directory`);
    const attempts = intFlag(values.attempts, 'attempts', 5, 1, 1000);
    const cap = intFlag(values.cap, 'cap', 1, 1, 1000);
    const threshold = numberFlag(values.threshold, 'threshold', 0.3);
    const batchSize = intFlag(values['batch-size'], 'batch-size', 16, 1, 100_000);
    const base = values.config ? readConfigFile(values.config) : {};
    const merged = mergeConfig(base, configFromFlags(values));
    if (merged['epochs'] === undefined) merged['epochs'] = 3;
    const config = parseTrainConfig(merged, values.config ? `--config ${values.config} with flags` : 'flags');
    const epochs = Math.ceil(config.epochs ?? 3);

    const log = (line: string) => process.stderr.write(`sft: ${line}\n`);
    const inputs = await loadTrainInputs(config);
    try {
      const setup = await createBackend(config, { checkpointDir: join(dir, 'checkpoints'), log });
      // A suite's own scripted teachers first (the invoice oracle runs the gold route through its tools).
      const opened = inputs.opened;
      const teacher = await resolveRunAgent(opened, values.teacher, { openai: { maxConcurrent: config.concurrency }, openingSearch: config.openingSearch });
      const rubric = rubricOf(config);
      const price = priceOf(config);
      const maxTokens = setup.backend.contextLimit ?? config.budgets.contextTokens;
      const result = await runSft({
        dir,
        record: { ...config, teacher: values.teacher, attempts, cap, threshold, keep: config.sftKeep, keepIf: config.sftKeepIf, batchSize, rubric, createdAt: new Date().toISOString() },
        teacher,
        setup,
        env: inputs.env,
        budgets: config.budgets,
        trainTasks: inputs.trainTasks,
        evalTasks: inputs.evalTasks,
        rubric,
        price,
        attempts,
        cap,
        threshold,
        keep: config.sftKeep,
        keepIf: config.sftKeepIf,
        epochs,
        batchSize,
        adam: config.adam,
        lrSchedule: config.lrSchedule,
        temperature: config.temperature,
        evalSamples: config.evalSamples,
        concurrency: config.concurrency,
        seed: config.seed,
        maxTokens,
        openingSearch: config.openingSearch,
        log,
        onEpoch: (epoch, loss, s) => log(`epoch ${epoch}/${epochs}: loss ${loss.toFixed(3)} per token${s ? `, eval reward ${num(s['reward'])} F1 ${num(s['f1'])} recall ${num(s['recall'])}` : ''}`),
      });
      await setup.backend.close();
      if (values.json) printJson(result);
      else {
        console.log(`teacher ${values.teacher}: ${result.solved}/${inputs.trainTasks.length} queries solved, ${result.keptQueries} kept (${result.kept} demonstrations, ${result.trainTokens} model tokens)`);
        for (const e of result.epochs) console.log(`  epoch ${e.epoch}: loss ${e.loss.toFixed(3)}  eval reward ${e.eval === null ? '-' : e.eval.toFixed(3)}`);
        console.log(`best: epoch ${result.best.epoch}  ${result.best.samplerPath}`);
        console.log(`train from it: sleuth train --config configs/local-demo.json --model ${result.best.samplerPath} --out runs/grpo`);
      }
    } finally {
      // The search workers, if the config asked for them.
      await inputs.close();
    }
    return 0;
  },
};

function num(x: unknown): string {
  return typeof x === 'number' ? x.toFixed(3) : '-';
}
