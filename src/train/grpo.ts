import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { NumericalError } from '../errors.js';
import type { Rollout } from '../agent/rollout.js';
import { runEpisode } from '../agent/episode.js';
import type { Datum, Sampler, TrainingBackend } from '../backend/types.js';
import type { Environment } from '../env/types.js';
import { costUsd, type Price } from '../eval/cost.js';
import { pool, runEval } from '../eval/runner.js';
import type { Summary } from '../eval/metrics.js';
import type { Rubric } from '../reward/rubric.js';
import { scoreRollout } from '../suites/registry.js';
import { appendMetrics, openRunDir, writeSummary } from '../runs/store.js';
import { evaluatedSteps, evalRecord, lastCheckpoint, recordCheckpoint, recordStep, truncateRunAfter, type CheckpointRecord } from '../runs/training.js';
import type { Task } from '../tasks/task.js';
import { seededRandom } from '../random.js';
import { groupAdvantages } from './advantages.js';
import type { TrainingSetup } from './backend-factory.js';
import type { TrainConfig } from './config.js';
import { rlDatum } from './datums.js';
import { collectBatch, type BatchResult, type Group } from './dynamic.js';
import { rolloutMetrics, samplingSplit } from './metrics.js';

export type { CheckpointRecord };

/**
 * GRPO, fully synchronous. A step is four functions, in order:
 *  1. sampleStep: a group of rollouts per query with the current weights (through runEpisode, the
 *     same function eval uses), each scored with the rubric;
 *  2. stepDatums: advantages relative to the group, and datums from the rollouts' own tokens;
 *  3. trainStep: one forwardBackward + optimStep, and weights saved for the next step's sampler;
 *  4. stepMetrics: the step's metrics record, written with its rollouts by recordStep (src/runs/).
 * trainGrpo runs steps, checkpoints and evaluates; what is kept in the run directory, and how a
 * resumed run drops the work of a step cut before its checkpoint, is src/runs/training.ts.
 *
 * Files (src/runs/layout.ts): config.json; rollouts.jsonl (every rollout, with step, group and
 * advantage); metrics.jsonl ({step, kind: 'train' | 'eval', ...}); checkpoints.jsonl ({step, path,
 * samplerPath, cursor, time}); evals/step-N/ (a full eval run directory per eval point).
 *
 * Every random choice derives from (seed, step, cursor): data order is a seeded permutation per
 * epoch, sampling seeds are a hash of the seed and the query's position, so a resumed run samples
 * exactly what the uninterrupted run would have.
 */
export interface TrainRunOptions {
  dir: string;
  config: TrainConfig;
  /** What config.json records (the resolved config plus names of the rubric, created time, ...). */
  record: Record<string, unknown>;
  setup: TrainingSetup;
  env: Environment;
  trainTasks: readonly Task[];
  evalTasks: readonly Task[];
  rubric: Rubric;
  price: Price | undefined;
  /** Total steps of the run. */
  steps: number;
  /** Where to start (from resumeState), or a fresh start. */
  start?: ResumePoint;
  /** Asked after every step; true makes the loop checkpoint and stop. */
  shouldStop?: () => boolean;
  onStep?: (p: StepReport) => void;
  onEval?: (step: number, summary: Summary) => void;
  log?: (line: string) => void;
}

export interface ResumePoint {
  /** Steps done. */
  step: number;
  /** Queries of the data order consumed. */
  cursor: number;
  /** Saved state to load (set by the backend factory when resuming). */
  statePath: string;
}

export interface StepReport {
  step: number;
  steps: number;
  metrics: Record<string, unknown>;
  stepSeconds: number;
}

export interface TrainResult {
  stepsDone: number;
  stopped: boolean;
  lastCheckpoint: CheckpointRecord | undefined;
  /** Eval summaries by step. */
  evals: Map<number, Summary>;
}

/** The permutation of train-task indices for one epoch of the data order. */
export function epochOrder(n: number, seed: number, epoch: number): number[] {
  const rng = seededRandom((seed * 1_000_003 + epoch * 7919 + 1) >>> 0);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** Train-task index at position `cursor` of the endless data order (epoch after epoch). */
export function taskAt(cursor: number, n: number, seed: number, cache: Map<number, number[]> = new Map()): number {
  const epoch = Math.floor(cursor / n);
  let order = cache.get(epoch);
  if (!order) {
    order = epochOrder(n, seed, epoch);
    cache.set(epoch, order);
  }
  return order[cursor % n]!;
}

/** A sampling seed for the query at `cursor` (its G samples add their index inside the agent). */
export function groupSeed(seed: number, cursor: number): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ cursor, 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) % 1_000_000_007;
}

/** What every step of one run shares. */
export interface GrpoRun {
  dir: string;
  config: TrainConfig;
  setup: TrainingSetup;
  env: Environment;
  trainTasks: readonly Task[];
  rubric: Rubric;
  price: Price | undefined;
  /** The data order's permutation of each epoch, computed once (taskAt's cache). */
  orders: Map<number, number[]>;
}

export interface SampledStep {
  batch: BatchResult<Rollout>;
  /** The data order's cursor after this step's queries. */
  cursor: number;
}

/**
 * 1. Sample step `step` (1-based) with `sampler`, from position `cursor` of the data order: a group
 * of groupSize rollouts per query, each scored, collected into a batch as dynamic sampling says.
 * Rollouts carry their step and group; the groups are numbered in the order they were sampled.
 */
export async function sampleStep(run: GrpoRun, step: number, cursor: number, sampler: Sampler): Promise<SampledStep> {
  const { config: c, setup, env, rubric } = run;
  const n = run.trainTasks.length;
  let groupIndex = 0;
  const sampleGroups = async (count: number): Promise<Group<Rollout>[]> => {
    const positions = Array.from({ length: count }, (_, i) => cursor + i);
    cursor += count;
    const groups: Group<Rollout>[] = positions.map((pos) => ({ query: pos, rewards: [], rollouts: [] }));
    const jobs = positions.flatMap((pos, gi) => Array.from({ length: c.groupSize }, (_, j) => ({ pos, gi, j })));
    const agents = positions.map((pos) => setup.agent(sampler, `train:${run.dir}@step-${step - 1}`, c.temperature, groupSeed(c.seed, pos)));
    const first = groupIndex;
    groupIndex += count;
    const slots: Rollout[][] = positions.map(() => new Array<Rollout>(c.groupSize));
    await pool(jobs, c.concurrency, async ({ pos, gi, j }) => {
      const task = run.trainTasks[taskAt(pos, n, c.seed, run.orders)]!;
      const r = await runEpisode(agents[gi]!, env, task, c.budgets, { sample: j, id: `step${step}/g${first + gi}/${task.id}#${j}` });
      r.step = step;
      r.group = first + gi;
      r.reward = scoreRollout(task, r, rubric, step - 1);
      slots[gi]![j] = r;
    });
    groups.forEach((g, gi) => {
      g.rollouts = slots[gi]!;
      g.rewards = g.rollouts.map((r) => r.reward!.total);
    });
    return groups;
  };
  const batch = await collectBatch(c.groupsPerStep, c.dynamicSampling, c.refillRounds, sampleGroups);
  return { batch, cursor };
}

export interface StepDatums {
  /** The datums to train on (advantages scaled as lossScale says). */
  datums: Datum[];
  /** Datums longer than the model's context: counted, not sent. */
  tooLong: number;
  /** Sum of the datums' weights (model-written tokens trained on). */
  trainTokens: number;
}

/**
 * 2. Advantages per group, and the datums they weigh. Every sampled rollout is given its advantage
 * (0 when its group was dropped); rollouts with advantage 0 or an error give no datum.
 */
export function stepDatums(batch: BatchResult<Rollout>, c: Pick<TrainConfig, 'advantage' | 'lossScale'>, contextLimit: number | undefined): StepDatums {
  const keptSet = new Set(batch.kept);
  const pending: { rollout: Rollout; advantage: number }[] = [];
  for (const g of batch.sampled) {
    const adv = groupAdvantages(g.rewards, c.advantage);
    g.rollouts.forEach((r, i) => {
      r.advantage = keptSet.has(g) ? adv[i]! : 0;
      if (keptSet.has(g) && adv[i] !== 0 && r.endReason !== 'error') pending.push({ rollout: r, advantage: adv[i]! });
    });
  }
  const built = pending.map((p) => rlDatum(p.rollout, p.advantage)).filter((d): d is Datum => d !== undefined);
  // A sequence longer than the model's context cannot be trained on; it is counted, not sent.
  const datums = built.filter((d) => contextLimit === undefined || d.inputTokens.length <= contextLimit);
  const trainTokens = datums.reduce((sum, d) => sum + d.weights.reduce((a, w) => a + w, 0), 0);
  // Tinker sums the loss over tokens; scaling advantages by 1/tokens makes it the batch's mean.
  const scale = c.lossScale === 'tokens' && trainTokens > 0 ? 1 / trainTokens : 1;
  if (scale !== 1) for (const d of datums) d.advantages = d.advantages!.map((a) => a * scale);
  return { datums, tooLong: built.length - datums.length, trainTokens };
}

export interface TrainedStep {
  /** forwardBackward's loss and metrics ({} on an empty batch). */
  forwardBackward: Record<string, number>;
  /** optimStep's metrics. */
  optim: Record<string, number>;
  /** The new weights, for the next step. */
  sampler: Sampler;
}

/**
 * 3. Train on step `step`'s datums: forwardBackward, then an optimiser step even on an empty batch
 * (it keeps step numbers and Adam's clock aligned), then the weights are saved for sampling.
 * A NaN or infinite number (in the sampler's logprobs, the loss or the gradient) stops the run here,
 * before the step is recorded or checkpointed: the last checkpoint stays the last good one, and the
 * message says which it is.
 */
export async function trainStep(backend: TrainingBackend, step: number, batch: BatchResult<Rollout>, datums: readonly Datum[], c: Pick<TrainConfig, 'loss' | 'clipLow' | 'clipHigh' | 'adam'>, lastGood: CheckpointRecord | undefined): Promise<TrainedStep> {
  const diverged = (what: string) =>
    new NumericalError(`training stopped at step ${step}: ${what}; learning rate ${c.adam.learningRate}; last good checkpoint: ${lastGood ? `step ${lastGood.step} (${lastGood.path})` : 'none'}`);
  const blownSampler = batch.sampled.flatMap((g) => g.rollouts).find((r) => r.turns.some((t) => t.sampledLogprobs?.some((x) => !Number.isFinite(x))));
  if (blownSampler) throw diverged(`the sampler's log-probabilities are not finite (rollout ${blownSampler.id}): the weights have blown up`);
  let fb: Record<string, number> = {}, opt: Record<string, number> = {};
  try {
    if (datums.length > 0) {
      const lossConfig = { ...(c.clipLow !== undefined ? { clipLowThreshold: c.clipLow } : {}), ...(c.clipHigh !== undefined ? { clipHighThreshold: c.clipHigh } : {}) };
      const r = await backend.forwardBackward([...datums], c.loss, lossConfig);
      fb = { loss: r.loss, ...r.metrics };
      if (!Number.isFinite(r.loss)) throw new NumericalError(`the loss is not finite (${r.loss})`);
    }
    opt = (await backend.optimStep({ ...c.adam })).metrics;
    const gradNorm = opt['grad_norm'];
    if (gradNorm !== undefined && !Number.isFinite(gradNorm)) throw new NumericalError(`the gradient is not finite (norm ${gradNorm})`);
  } catch (err) {
    if (err instanceof NumericalError) throw diverged(err.message);
    throw err;
  }
  const sampler = await backend.saveWeightsForSampler(`sampler-${step}`);
  return { forwardBackward: fb, optim: opt, sampler };
}

/** Wall-clock times of a step's phases, milliseconds from performance.now(). */
export interface StepTimes {
  start: number;
  sampled: number;
  trained: number;
}

/** 4. The metrics record of step `step` (metrics.jsonl), from what the other three returned. */
export function stepMetrics(step: number, batch: BatchResult<Rollout>, d: StepDatums, t: TrainedStep, times: StepTimes, c: Pick<TrainConfig, 'adam'>, rubric: Rubric, price: Price | undefined): Record<string, unknown> {
  const fb = t.forwardBackward, opt = t.optim;
  const split = samplingSplit(batch.sampled);
  const sampleWall = (times.sampled - times.start) / 1000;
  const envShare = split.sampleMs + split.envMs > 0 ? split.envMs / (split.sampleMs + split.envMs) : 0;
  const m = rolloutMetrics(batch.sampled, price);
  return {
    step,
    kind: 'train',
    ...m,
    groups_kept: batch.kept.length,
    refill_rounds: batch.refillRounds,
    queries_consumed: batch.consumed,
    datums: d.datums.length,
    datums_too_long: d.tooLong,
    trained_tokens: d.trainTokens,
    loss: fb['loss'] ?? 0,
    learner_entropy: fb['entropy:mean'] ?? null,
    kl_sampler_learner: fb['kl_sampler_learner:mean'] ?? null,
    ratio_mean: fb['ratio:mean'] ?? null,
    clip_fraction: fb['clip_fraction:mean'] ?? null,
    grad_norm: opt['grad_norm'] ?? null,
    learning_rate: c.adam.learningRate,
    beta: rubric.beta.kind === 'constant' ? rubric.beta.beta : null,
    time_sampling_s: sampleWall * (1 - envShare),
    time_env_s: sampleWall * envShare,
    time_training_s: (times.trained - times.sampled) / 1000,
    time_step_s: (times.trained - times.start) / 1000,
    cost_usd: costUsd({ promptTokens: m['prompt_tokens'] as number, completionTokens: m['completion_tokens'] as number, trainTokens: d.trainTokens }, price),
    time: new Date().toISOString(),
  };
}

export interface StepDone {
  /** The metrics record written for the step. */
  metrics: Record<string, unknown>;
  cursor: number;
  sampler: Sampler;
}

/**
 * One GRPO step, sample → advantages and datums → train → record, from `cursor` with `sampler`.
 * The step's rollouts and metrics are in the run directory when it returns; its checkpoint is the
 * caller's to write.
 */
export async function grpoStep(run: GrpoRun, step: number, cursor: number, sampler: Sampler, lastGood: CheckpointRecord | undefined): Promise<StepDone> {
  const start = performance.now();
  const sampled = await sampleStep(run, step, cursor, sampler);
  const tSampled = performance.now();
  const datums = stepDatums(sampled.batch, run.config, run.setup.backend.contextLimit);
  const trained = await trainStep(run.setup.backend, step, sampled.batch, datums.datums, run.config, lastGood);
  const times = { start, sampled: tSampled, trained: performance.now() };
  const metrics = stepMetrics(step, sampled.batch, datums, trained, times, run.config, run.rubric, run.price);
  // Rollouts and metrics first, the checkpoint record last: the checkpoint is what makes the step count.
  recordStep(run.dir, sampled.batch.sampled.flatMap((g) => g.rollouts), metrics);
  return { metrics, cursor: sampled.cursor, sampler: trained.sampler };
}

export async function trainGrpo(o: TrainRunOptions): Promise<TrainResult> {
  const { config: c, setup, env, rubric } = o;
  const { backend } = setup;
  const log = o.log ?? (() => {});
  openRunDir(o.dir, { kind: 'train', ...o.record }, ['tasks', 'trainSplit', 'env', 'backend', 'model', 'groupSize', 'groupsPerStep', 'seed', 'advantage', 'loss', 'reward']);
  const evals = new Map<number, Summary>();

  let step = o.start?.step ?? 0;
  let cursor = o.start?.cursor ?? 0;
  let last: CheckpointRecord | undefined;
  if (o.start) {
    const dropped = truncateRunAfter(o.dir, step);
    if (dropped.metrics || dropped.rollouts) log(`resume: dropped ${dropped.metrics} metrics and ${dropped.rollouts} rollout records of steps after ${step} (they are run again)`);
    last = lastCheckpoint(o.dir);
  }

  const run: GrpoRun = { dir: o.dir, config: c, setup, env, trainTasks: o.trainTasks, rubric, price: o.price, orders: new Map() };
  const evaluated = evaluatedSteps(o.dir);

  const evalAt = async (s: number, sampler: Sampler) => {
    if (o.evalTasks.length === 0 || evaluated.has(s)) return;
    const agent = setup.agent(sampler, `train:${o.dir}@step-${s}`, c.temperature, groupSeed(c.seed + 1, s));
    const r = await runEval({
      dir: join(o.dir, 'evals', `step-${s}`),
      agent,
      env,
      tasks: o.evalTasks,
      samples: c.evalSamples,
      concurrency: c.concurrency,
      rubric,
      budgets: c.budgets,
      config: { agent: agent.spec, tasks: c.tasks, split: c.evalSplit, samples: c.evalSamples, env: c.env, rubric, budgets: c.budgets, step, price: o.price ?? null },
      identity: ['tasks', 'split', 'samples', 'env', 'rubric', 'budgets'],
      price: o.price,
      bootstrap: { seed: c.seed },
    });
    evals.set(s, r.summary);
    appendMetrics(o.dir, [evalRecord(s, r.summary)]);
    evaluated.add(s);
    o.onEval?.(s, r.summary);
  };

  let sampler: Sampler = await backend.saveWeightsForSampler(`sampler-${step}`);
  if (!o.start) {
    // Step 0's state: a run killed during its first step resumes from here.
    const path = await backend.saveState(`step-0`);
    last = { step: 0, path, samplerPath: null, cursor: 0, time: new Date().toISOString() };
    recordCheckpoint(o.dir, last, undefined);
  }
  if (c.evalAtStart && step === 0) await evalAt(0, sampler);

  let stopped = false;
  while (step < o.steps) {
    const t0 = performance.now();
    const done = await grpoStep(run, step + 1, cursor, sampler, last);
    cursor = done.cursor;
    sampler = done.sampler;
    step += 1;
    // Let pending signals (Ctrl-C) be handled: a step of a small local model never leaves the microtask queue.
    await new Promise<void>((resolve) => setImmediate(resolve));
    stopped = o.shouldStop?.() ?? false;
    if (step % c.checkpointEvery === 0 || step === o.steps || stopped) {
      const path = await backend.saveState(`step-${step}`);
      const previous = last;
      last = { step, path, samplerPath: sampler.modelPath, cursor, time: new Date().toISOString() };
      recordCheckpoint(o.dir, last, previous);
    }
    o.onStep?.({ step, steps: o.steps, metrics: done.metrics, stepSeconds: (performance.now() - t0) / 1000 });
    if (stopped) break;
    if (c.evalEvery > 0 && step % c.evalEvery === 0 && step !== o.steps) await evalAt(step, sampler);
  }
  if (!stopped && step === o.steps) await evalAt(step, sampler);
  const finalEval = evals.get(step);
  writeSummary(o.dir, {
    kind: 'train',
    steps_done: step,
    steps: o.steps,
    done: step >= o.steps,
    last_checkpoint: last ?? null,
    ...(finalEval ? { eval: evalRecord(step, finalEval) } : {}),
  });
  return { stepsDone: step, stopped, lastCheckpoint: last, evals };
}
