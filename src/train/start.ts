import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { checkpointIntact, CorruptCheckpoint } from '../backend/local/checkpoint.js';
import { acquireLock } from '../files/lock.js';
import type { Environment } from '../env/types.js';
import { InputError } from '../errors.js';
import { loadPrices, type Price } from '../eval/cost.js';
import { checkSplitHash, readRunConfig, isRunDir } from '../runs/store.js';
import { splitSha256 } from '../tasks/split.js';
import { suiteOf } from '../suites/registry.js';
import type { OpenedSuite } from '../suites/types.js';
import type { Task } from '../tasks/task.js';
import { createBackend } from './backend-factory.js';
import { parseTrainConfig, rubricOf, totalSteps, TrainConfigSchema, type TrainConfig } from './config.js';
import { DamagedCheckpoint, readCheckpoints, verifyCheckpointFiles } from '../runs/checkpoints.js';
import { lastCheckpoint, type CheckpointRecord } from '../runs/training.js';
import { trainGrpo, type TrainResult, type TrainRunOptions } from './grpo.js';

/** Everything a GRPO run needs besides its config: tasks, index, environment. */
export interface TrainInputs {
  env: Environment;
  trainTasks: Task[];
  evalTasks: Task[];
  /** The corpus's index directory, or a note that the suite has none. */
  indexDir: string;
  /** The opened suite: its corpus (the oracle teacher reads gold chunks from it) and its scripted agents. */
  opened: OpenedSuite;
  /** Stop what the inputs started (the search workers); resolves at once when there is nothing. */
  close(): Promise<void>;
}

export async function loadTrainInputs(c: TrainConfig): Promise<TrainInputs> {
  // A suite with its own tasks refuses a task set; the config's `tasks` always has one (its default).
  const suite = suiteOf(c.env);
  const opened = await suite.open(suite.taskSets ? { tasks: c.tasks } : {});
  const limit = (ts: Task[], n: number) => (n > 0 ? ts.slice(0, n) : ts);
  const trainTasks = limit(opened.tasks(c.trainSplit), c.trainLimit);
  const evalTasks = limit(opened.tasks(c.evalSplit), c.evalLimit);
  if (trainTasks.length === 0) throw new InputError(`tasks ${opened.tasksName}: split '${c.trainSplit}' has no tasks`);
  const { env, close } = await opened.environment({ budgets: c.budgets, searchWorkers: c.searchWorkers });
  return { env, trainTasks, evalTasks, indexDir: opened.indexDir ?? `(none: the ${c.env} environment has no search index)`, opened, close };
}

/** The price of the config's model (local runs cost nothing; unknown models: undefined). */
export function priceOf(c: TrainConfig): Price | undefined {
  const prices = loadPrices();
  return prices.models[c.backend === 'local' ? 'local' : c.model];
}

/** The TrainConfig stored in a run directory's config.json (its other keys are records, not settings). */
export function storedConfig(dir: string): Record<string, unknown> {
  if (!isRunDir(dir)) throw new InputError(`--resume ${dir}: not a run directory (no config.json)`);
  const raw = readRunConfig(dir);
  if (raw.kind !== 'train') throw new InputError(`--resume ${dir}: holds a ${raw.kind} run, not a train run`);
  const keys = Object.keys(TrainConfigSchema.shape);
  return Object.fromEntries(Object.entries(raw).filter(([k]) => keys.includes(k)));
}

export interface StartOptions {
  dir: string;
  config: TrainConfig;
  resume: boolean;
  shouldStop?: () => boolean;
  onStep?: TrainRunOptions['onStep'];
  onEval?: TrainRunOptions['onEval'];
  log?: (line: string) => void;
}

/** Start or resume a GRPO run in `dir`. */
export async function startTraining(o: StartOptions): Promise<TrainResult & { steps: number; resumedFrom: number | null }> {
  const c = o.config;
  const dir = resolve(o.dir);
  // Two trainers in one run directory would append the same steps twice and interleave checkpoints.
  const lock = acquireLock(dir, 'run directory');
  try {
    const inputs = await loadTrainInputs(c);
    try {
      return await trainWith(o, c, dir, inputs);
    } finally {
      await inputs.close();
    }
  } finally {
    lock.release();
  }
}

async function trainWith(o: StartOptions, c: TrainConfig, dir: string, inputs: TrainInputs): Promise<TrainResult & { steps: number; resumedFrom: number | null }> {
  const steps = totalSteps(c, inputs.trainTasks.length);
  const point = o.resume ? lastCheckpoint(dir) : undefined;
  if (o.resume && !point) throw new InputError(`--resume ${o.dir}: no checkpoint to resume from (checkpoints.jsonl is empty or its files are gone)`);
  if (!o.resume && isRunDir(dir)) throw new InputError(`--out ${o.dir} already holds a run: resume it with --resume ${o.dir}, or choose another --out`);
  // The eval split's tasks as this run scores them: a resume over changed tasks would break its curves.
  const evalSplitSha256 = splitSha256(inputs.evalTasks);
  checkSplitHash(dir, 'evalSplitSha256', c.evalSplit, evalSplitSha256);
  const damaged = (err: unknown) => (err instanceof CorruptCheckpoint || err instanceof DamagedCheckpoint ? corruptResume(o.dir, dir, err) : err);
  // The state file against the checksum its record holds (a record from before checksums: its format's own check only).
  if (point) {
    try {
      if (!verifyCheckpointFiles(dir, point, ['path'])) o.log?.(`resume: checkpoint of step ${point.step} was written before checksums were recorded; only its file's own check applies`);
    } catch (err) {
      throw damaged(err);
    }
  }
  const setup = await createBackend(c, { checkpointDir: join(dir, 'checkpoints'), ...(point ? { resumeFrom: point.path } : {}), ...(o.log ? { log: o.log } : {}) }).catch((err: unknown) => {
    throw damaged(err);
  });
  const rubric = rubricOf(c);
  const price = priceOf(c);
  const record = { ...c, rubric, indexDir: inputs.indexDir, baseModel: setup.backend.baseModel, price: price ?? null, evalSplitSha256, createdAt: new Date().toISOString() };
  let result: Awaited<ReturnType<typeof trainGrpo>>;
  try {
    result = await trainGrpo({
      dir,
      config: c,
      record,
      setup,
      env: inputs.env,
      trainTasks: inputs.trainTasks,
      evalTasks: inputs.evalTasks,
      rubric,
      price,
      steps,
      ...(point ? { start: { step: point.step, cursor: point.cursor, statePath: point.path } } : {}),
      ...(o.shouldStop ? { shouldStop: o.shouldStop } : {}),
      ...(o.onStep ? { onStep: o.onStep } : {}),
      ...(o.onEval ? { onEval: o.onEval } : {}),
      ...(o.log ? { log: o.log } : {}),
    });
  } finally {
    // However training ends (a run stopped by a NaN must exit, not wait on idle gradient workers).
    await setup.backend.close();
  }
  return { ...result, steps, resumedFrom: point ? point.step : null };
}

/**
 * The error for a resume point whose checkpoint is corrupted: it names the file and the last
 * earlier checkpoint that reads back intact, the step a user can go back to.
 */
function corruptResume(given: string, dir: string, err: CorruptCheckpoint | DamagedCheckpoint): InputError {
  const records = readCheckpoints<CheckpointRecord>(dir);
  const bad = records.findIndex((r) => resolve(r.path) === resolve(err.path));
  const earlier = records.slice(0, bad < 0 ? records.length : bad).reverse();
  const good = earlier.find((r) => !r.path.includes('://') && existsSync(r.path) && checkpointIntact(r.path) && recordIntact(dir, r));
  const lastGood = good ? `the last good checkpoint is step ${good.step} (${relative(dir, good.path)})` : 'no earlier checkpoint is intact';
  return new InputError(`--resume ${given}: ${err.message}; ${lastGood}`);
}

/** Whether a record's state file has the checksum the record holds (or the record holds none). */
function recordIntact(dir: string, r: CheckpointRecord): boolean {
  try {
    verifyCheckpointFiles(dir, r, ['path']);
    return true;
  } catch (err) {
    if (err instanceof InputError) return false;
    throw err;
  }
}

export { parseTrainConfig };
