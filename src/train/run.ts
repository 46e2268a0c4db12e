import { join, resolve } from 'node:path';
import { QaEnvironment } from '../env/qa/env.js';
import { InvoiceEnvironment, loadInvoiceSuite } from '../env/invoices/index.js';
import { SearchEnvironment } from '../env/search/env.js';
import { searchBackend } from '../env/search/pool.js';
import type { Environment } from '../env/types.js';
import { InputError } from '../errors.js';
import { loadPrices, type Price } from '../eval/cost.js';
import { readRunConfig, isRunDir } from '../runs/store.js';
import { openIndex } from '../search/index.js';
import { loadTaskSet } from '../tasks/registry.js';
import type { Task } from '../tasks/task.js';
import { createBackend } from './backend-factory.js';
import { parseTrainConfig, rubricOf, totalSteps, TrainConfigSchema, type TrainConfig } from './config.js';
import { lastCheckpoint } from '../runs/training.js';
import { trainGrpo, type TrainResult, type TrainRunOptions } from './grpo.js';

/** Everything a GRPO run needs besides its config: tasks, index, environment, rubric, price. */
export interface TrainInputs {
  env: Environment;
  trainTasks: Task[];
  evalTasks: Task[];
  indexDir: string;
  /** The opened index (the oracle teacher reads gold chunks from it); none for the invoice environment. */
  index?: Awaited<ReturnType<typeof openIndex>>;
  /** Stop what the inputs started (the search workers); resolves at once when there is nothing. */
  close(): Promise<void>;
}

/** The invoice environment: its procedurally generated database, tools and tasks (no search index). */
function loadInvoiceInputs(c: TrainConfig): TrainInputs {
  const suite = loadInvoiceSuite();
  const limit = (ts: Task[], n: number) => (n > 0 ? ts.slice(0, n) : ts);
  const trainTasks = limit(suite.tasks(c.trainSplit), c.trainLimit);
  const evalTasks = limit(suite.tasks(c.evalSplit), c.evalLimit);
  const env = new InvoiceEnvironment(suite.tools, c.budgets);
  return { env, trainTasks, evalTasks, indexDir: '(none: invoice database)', close: async () => {} };
}

export async function loadTrainInputs(c: TrainConfig): Promise<TrainInputs> {
  if (c.env === 'invoices') return loadInvoiceInputs(c);
  const set = await loadTaskSet(c.tasks);
  const limit = (ts: Task[], n: number) => (n > 0 ? ts.slice(0, n) : ts);
  const trainTasks = limit(set.tasks(c.trainSplit), c.trainLimit);
  const evalTasks = limit(set.tasks(c.evalSplit), c.evalLimit);
  if (trainTasks.length === 0) throw new InputError(`tasks ${c.tasks}: split '${c.trainSplit}' has no tasks`);
  if (c.env === 'qa') {
    const missing = [...trainTasks, ...evalTasks].find((t) => !t.answers?.length);
    if (missing) throw new InputError(`env qa needs tasks with answers; task '${missing.id}' of ${c.tasks} has none`);
  }
  const index = await openIndex(set.indexDir);
  const { backend, close } = await searchBackend(set.indexDir, index, c.searchWorkers);
  const env: Environment = c.env === 'qa' ? new QaEnvironment(backend, { budgets: c.budgets }) : new SearchEnvironment(backend, { budgets: c.budgets });
  return { env, trainTasks, evalTasks, indexDir: set.indexDir, index, close };
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
  const inputs = await loadTrainInputs(c);
  try {
    return await trainWith(o, c, dir, inputs);
  } finally {
    await inputs.close();
  }
}

async function trainWith(o: StartOptions, c: TrainConfig, dir: string, inputs: TrainInputs): Promise<TrainResult & { steps: number; resumedFrom: number | null }> {
  const steps = totalSteps(c, inputs.trainTasks.length);
  const point = o.resume ? lastCheckpoint(dir) : undefined;
  if (o.resume && !point) throw new InputError(`--resume ${o.dir}: no checkpoint to resume from (checkpoints.jsonl is empty or its files are gone)`);
  if (!o.resume && isRunDir(dir)) throw new InputError(`--out ${o.dir} already holds a run: resume it with --resume ${o.dir}, or choose another --out`);
  const setup = await createBackend(c, { checkpointDir: join(dir, 'checkpoints'), ...(point ? { resumeFrom: point.path } : {}), ...(o.log ? { log: o.log } : {}) });
  const rubric = rubricOf(c);
  const price = priceOf(c);
  const record = { ...c, rubric, indexDir: inputs.indexDir, baseModel: setup.backend.baseModel, price: price ?? null, createdAt: new Date().toISOString() };
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

export { parseTrainConfig };
