import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { InputError, NumericalError } from '../errors.js';
import type { Rollout } from '../agent/rollout.js';
import type { Datum, Sampler, TrainingBackend } from '../backend/types.js';
import type { Environment } from '../env/types.js';
import { costUsd, type Price } from '../eval/cost.js';
import { forEachConcurrently } from '../concurrency.js';
import { runEval } from '../eval/runner.js';
import type { Summary } from '../eval/metrics.js';
import type { Rubric } from '../reward/rubric.js';
import { runScoredEpisode } from '../suites/scored-episode.js';
import { readCheckpoints } from '../runs/checkpoints.js';
import { appendMetrics, openRunDir, writeSummary } from '../runs/store.js';
import { evaluatedSteps, evalRecord, lastCheckpoint, recordCheckpoint, recordStep, truncateRunAfter, type CheckpointRecord } from '../runs/training.js';
import type { Task } from '../tasks/task.js';
import { seededRandom } from '../random.js';
import { groupAdvantages } from './advantages.js';
import type { TrainingSetup } from './backend-factory.js';
import type { TrainConfig } from './config.js';
import { rlDatum } from './datums.js';
import { DifficultyFilter } from './difficulty.js';
import { collectBatch, type BatchResult, type Group } from './dynamic.js';
import { applyKlPenalty } from './kl.js';
import { learningRateAt } from './lr-schedule.js';
import { rolloutMetrics, samplingSplit } from './metrics.js';
import { pruneStateCheckpoints } from './retention.js';
import { SamplingPipeline } from './staleness.js';
import { updateOnBatch } from './update.js';
import { readJsonl } from '../runs/jsonl.js';
import { runPath } from '../runs/layout.js';

export type { CheckpointRecord };

/**
 * GRPO. A step is four functions, in order:
 *  1. sampleStep: a group of rollouts per query with the current weights, each run and scored with
 *     the rubric by runScoredEpisode (suites/scored-episode.ts, the function eval and SFT use) (with maxStaleness > 0, while earlier
 *     steps train: src/train/staleness.ts);
 *  2. stepDatums: advantages relative to the group, and datums from the rollouts' own tokens;
 *  3. trainStep: the optional KL penalty (kl.ts), then ppoEpochs x minibatches forwardBackward +
 *     optimStep at the step's scheduled learning rate (update.ts, lr-schedule.ts), and weights
 *     saved for the next step's sampler;
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
  /** Steps of the run (the learning-rate schedule's length; default: this step is the last). */
  totalSteps?: number;
  /** The KL penalty's frozen reference (with klPenaltyCoef > 0). */
  reference?: Sampler;
  /** The difficulty filter's record of each task's recent groups (difficultyFilter > 0). */
  difficulty?: DifficultyFilter;
}

export interface SampledStep {
  batch: BatchResult<Rollout>;
  /** The data order's cursor after this step's queries. */
  cursor: number;
  /** The step whose weights sampled it (step - 1 unless sampled ahead). */
  samplerStep: number;
  /** Queries the difficulty filter passed over. */
  skipped: number;
  /** Wall-clock seconds the sampling took. */
  seconds: number;
}

/**
 * 1. Sample step `step` (1-based) with `sampler`, from position `cursor` of the data order: a group
 * of groupSize rollouts per query, each scored, collected into a batch as dynamic sampling says.
 * Rollouts carry their step and group; the groups are numbered in the order they were sampled.
 */
export async function sampleStep(run: GrpoRun, step: number, cursor: number, sampler: Sampler, samplerStep = step - 1): Promise<SampledStep> {
  const { config: c, setup, env, rubric } = run;
  const n = run.trainTasks.length;
  const start = performance.now();
  let groupIndex = 0, skipped = 0;
  const sampleGroups = async (count: number): Promise<Group<Rollout>[]> => {
    const positions: number[] = [];
    // The difficulty filter passes over tasks it skips (at most one epoch of them per call).
    for (let scanned = 0; positions.length < count; scanned++) {
      const pos = cursor++;
      if (run.difficulty && scanned < n && run.difficulty.skips(run.trainTasks[taskAt(pos, n, c.seed, run.orders)]!.id)) skipped++;
      else positions.push(pos);
    }
    const groups: Group<Rollout>[] = positions.map((pos) => ({ query: pos, rewards: [], rollouts: [] }));
    const jobs = positions.flatMap((pos, gi) => Array.from({ length: c.groupSize }, (_, j) => ({ pos, gi, j })));
    const agents = positions.map((pos) => setup.agent(sampler, `train:${run.dir}@step-${samplerStep}`, c.temperature, groupSeed(c.seed, pos)));
    const first = groupIndex;
    groupIndex += count;
    const slots: Rollout[][] = positions.map(() => new Array<Rollout>(c.groupSize));
    await forEachConcurrently(jobs, c.concurrency, async ({ pos, gi, j }) => {
      const task = run.trainTasks[taskAt(pos, n, c.seed, run.orders)]!;
      slots[gi]![j] = await runScoredEpisode(agents[gi]!, env, task, c.budgets, rubric, { sample: j, id: `step${step}/g${first + gi}/${task.id}#${j}`, step, group: first + gi, betaStep: step - 1 });
    });
    groups.forEach((g, gi) => {
      g.rollouts = slots[gi]!;
      g.rewards = g.rollouts.map((r) => r.reward!.total);
      run.difficulty?.record(g.rollouts[0]!.taskId, g.rewards);
    });
    return groups;
  };
  const batch = await collectBatch(c.groupsPerStep, c.dynamicSampling, c.refillRounds, sampleGroups);
  return { batch, cursor, samplerStep, skipped, seconds: (performance.now() - start) / 1000 };
}

export interface StepDatums {
  /** The datums to train on (advantages scaled as lossScale says). */
  datums: Datum[];
  /** Datums longer than the model's context: counted, not sent. */
  tooLong: number;
  /** Sum of the datums' weights (model-written tokens trained on). */
  trainTokens: number;
  /** The group (query position) of each datum, for minibatches of whole groups. */
  groups: number[];
  /** What the advantages were multiplied by (lossScale). */
  scale: number;
}

/**
 * 2. Advantages per group, and the datums they weigh. Every sampled rollout is given its advantage
 * (0 when its group was dropped); rollouts with advantage 0 or an error give no datum.
 */
export function stepDatums(batch: BatchResult<Rollout>, c: Pick<TrainConfig, 'advantage' | 'lossScale'>, contextLimit: number | undefined): StepDatums {
  const keptSet = new Set(batch.kept);
  const pending: { rollout: Rollout; advantage: number; group: number }[] = [];
  for (const g of batch.sampled) {
    const adv = groupAdvantages(g.rewards, c.advantage);
    g.rollouts.forEach((r, i) => {
      r.advantage = keptSet.has(g) ? adv[i]! : 0;
      if (keptSet.has(g) && adv[i] !== 0 && r.endReason !== 'error') pending.push({ rollout: r, advantage: adv[i]!, group: g.query });
    });
  }
  const built = pending.map((p) => ({ datum: rlDatum(p.rollout, p.advantage), group: p.group })).filter((x): x is { datum: Datum; group: number } => x.datum !== undefined);
  // A sequence longer than the model's context cannot be trained on; it is counted, not sent.
  const fits = built.filter((x) => contextLimit === undefined || x.datum.inputTokens.length <= contextLimit);
  const datums = fits.map((x) => x.datum);
  const trainTokens = datums.reduce((sum, d) => sum + d.weights.reduce((a, w) => a + w, 0), 0);
  // Tinker sums the loss over tokens; scaling advantages by 1/tokens makes it the batch's mean.
  const scale = c.lossScale === 'tokens' && trainTokens > 0 ? 1 / trainTokens : 1;
  if (scale !== 1) for (const d of datums) d.advantages = d.advantages!.map((a) => a * scale);
  return { datums, tooLong: built.length - datums.length, trainTokens, groups: fits.map((x) => x.group), scale };
}

export interface TrainedStep {
  /** forwardBackward's loss and metrics, over all updates ({} on an empty batch). */
  forwardBackward: Record<string, number>;
  /** The last optimStep's metrics. */
  optim: Record<string, number>;
  /** The new weights, for the next step. */
  sampler: Sampler;
  /** Optimiser steps taken, the learning rate they used, and the KL estimate to the reference (null: off). */
  updates: number;
  learningRate: number;
  klReference: number | null;
}

/** What trainStep does besides one forwardBackward + optimStep at the configured rate. */
export interface TrainStepOptions {
  learningRate: number;
  /** The groups of the datums (minibatches hold whole groups). */
  groups: number[];
  /** The factor lossScale put on the advantages: the KL penalty is scaled alike. */
  scale: number;
  reference?: Sampler;
}

/**
 * 3. Train on step `step`'s datums: forwardBackward, then an optimiser step even on an empty batch
 * (it keeps step numbers and Adam's clock aligned), then the weights are saved for sampling.
 * A NaN or infinite number (in the sampler's logprobs, the loss or the gradient) stops the run here,
 * before the step is recorded or checkpointed: the last checkpoint stays the last good one, and the
 * message says which it is.
 */
export async function trainStep(
  backend: TrainingBackend,
  step: number,
  batch: BatchResult<Rollout>,
  datums: readonly Datum[],
  c: Pick<TrainConfig, 'loss' | 'clipLow' | 'clipHigh' | 'adam' | 'ppoEpochs' | 'minibatches' | 'lossScale' | 'klPenaltyCoef' | 'klEstimator'>,
  lastGood: CheckpointRecord | undefined,
  o: TrainStepOptions = { learningRate: c.adam.learningRate, groups: datums.map((_, i) => i), scale: 1 },
): Promise<TrainedStep> {
  const diverged = (what: string) =>
    new NumericalError(`training stopped at step ${step}: ${what}; learning rate ${o.learningRate}; last good checkpoint: ${lastGood ? `step ${lastGood.step} (${lastGood.path})` : 'none'}`);
  const blownSampler = batch.sampled.flatMap((g) => g.rollouts).find((r) => r.turns.some((t) => t.sampledLogprobs?.some((x) => !Number.isFinite(x))));
  if (blownSampler) throw diverged(`the sampler's log-probabilities are not finite (rollout ${blownSampler.id}): the weights have blown up`);
  const trained = [...datums];
  let klReference: number | null = null;
  let u: Awaited<ReturnType<typeof updateOnBatch>>;
  try {
    if (o.reference && c.klPenaltyCoef > 0 && trained.length) klReference = await applyKlPenalty(trained, o.reference, c.klPenaltyCoef * o.scale, c.klEstimator);
    const lossConfig = { ...(c.clipLow !== undefined ? { clipLowThreshold: c.clipLow } : {}), ...(c.clipHigh !== undefined ? { clipHighThreshold: c.clipHigh } : {}) };
    u = await updateOnBatch(backend, trained, o.groups, { loss: c.loss, lossConfig, adam: { ...c.adam, learningRate: o.learningRate }, ppoEpochs: c.ppoEpochs, minibatches: c.minibatches, perMinibatchMean: c.lossScale === 'tokens' });
  } catch (err) {
    if (err instanceof NumericalError) throw diverged(err.message);
    throw err;
  }
  const sampler = await backend.saveWeightsForSampler(`sampler-${step}`);
  return { forwardBackward: u.fb, optim: u.opt, sampler, updates: u.updates, learningRate: o.learningRate, klReference };
}

/** Wall-clock times of a step's phases, milliseconds from performance.now(). */
export interface StepTimes {
  start: number;
  sampled: number;
  trained: number;
}

/** 4. The metrics record of step `step` (metrics.jsonl), from what the other three returned. */
export function stepMetrics(step: number, s: SampledStep, d: StepDatums, t: TrainedStep, times: StepTimes, rubric: Rubric, price: Price | undefined): Record<string, unknown> {
  const fb = t.forwardBackward, opt = t.optim, batch = s.batch;
  const split = samplingSplit(batch.sampled);
  // A batch sampled ahead (maxStaleness > 0) took its own time, while earlier steps trained.
  const sampleWall = s.samplerStep < step - 1 ? s.seconds : (times.sampled - times.start) / 1000;
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
    learning_rate: t.learningRate,
    updates: t.updates,
    kl_reference: t.klReference,
    sampler_staleness: step - 1 - s.samplerStep,
    tasks_skipped: s.skipped,
    beta: rubric.beta.kind === 'constant' ? rubric.beta.beta : null,
    time_sampling_s: sampleWall * (1 - envShare),
    time_env_s: sampleWall * envShare,
    time_waiting_s: (times.sampled - times.start) / 1000,
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
 * Steps 2 to 4 of a step whose batch has been sampled (sampling began at `start`): advantages and
 * datums, training, the record. The step's rollouts and metrics are in the run directory when it
 * returns; its checkpoint is the caller's to write.
 */
export async function learnStep(run: GrpoRun, step: number, sampled: SampledStep, start: number, lastGood: CheckpointRecord | undefined): Promise<StepDone> {
  const c = run.config;
  const tSampled = performance.now();
  const datums = stepDatums(sampled.batch, c, run.setup.backend.contextLimit);
  const learningRate = learningRateAt(c.adam.learningRate, step, run.totalSteps ?? step, c.lrSchedule);
  const trained = await trainStep(run.setup.backend, step, sampled.batch, datums.datums, c, lastGood, { learningRate, groups: datums.groups, scale: datums.scale, ...(run.reference ? { reference: run.reference } : {}) });
  const times = { start, sampled: tSampled, trained: performance.now() };
  const metrics = stepMetrics(step, sampled, datums, trained, times, run.rubric, run.price);
  // Rollouts and metrics first, the checkpoint record last: the checkpoint is what makes the step count.
  recordStep(run.dir, sampled.batch.sampled.flatMap((g) => g.rollouts), metrics);
  return { metrics, cursor: sampled.cursor, sampler: trained.sampler };
}

/**
 * The frozen reference of the KL penalty: the run's starting weights (step 0's sampler; on resume,
 * its file, which only a backend with samplerFromFile (the local one) can load back).
 */
function referenceSampler(dir: string, resumed: boolean, current: Sampler, setup: TrainingSetup): Sampler {
  if (!resumed) return current;
  const first = readCheckpoints<CheckpointRecord>(dir).find((r) => r.step === 0);
  const path = first ? join(first.path, '..', 'sampler-0.sampler.ckpt') : undefined;
  if (!path || !existsSync(path) || !setup.samplerFromFile) throw new InputError(`klPenaltyCoef: resuming needs the run's starting weights (checkpoints/sampler-0.sampler.ckpt), which this run does not have`);
  return setup.samplerFromFile(path);
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

  const difficulty = c.difficultyFilter > 0 ? new DifficultyFilter(c.difficultyFilter) : undefined;
  if (difficulty && o.start) difficulty.replay(readJsonl<Rollout>(runPath(o.dir, 'rollouts')).records);
  const run: GrpoRun = { dir: o.dir, config: c, setup, env, trainTasks: o.trainTasks, rubric, price: o.price, orders: new Map(), totalSteps: o.steps, ...(difficulty ? { difficulty } : {}) };
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
    last = recordCheckpoint(o.dir, { step: 0, path, samplerPath: null, cursor: 0, time: new Date().toISOString() }, undefined);
  }
  if (c.klPenaltyCoef > 0) run.reference = referenceSampler(o.dir, o.start !== undefined, sampler, setup);
  if (c.evalAtStart && step === 0) await evalAt(0, sampler);

  // Each batch is sampled with the newest weights when its sampling starts: right away with
  // maxStaleness 0, while earlier steps train otherwise.
  let samplerStep = step;
  const pipeline = new SamplingPipeline(c.maxStaleness, (s) => {
    const from = cursor;
    const sampled = sampleStep(run, s, from, sampler, samplerStep);
    return sampled.then((x) => ((cursor = x.cursor), x));
  });
  let stopped = false;
  while (step < o.steps) {
    const t0 = performance.now();
    const done = await learnStep(run, step + 1, await pipeline.take(step + 1, o.steps), t0, last);
    sampler = done.sampler;
    samplerStep = step + 1;
    step += 1;
    // Let pending signals (Ctrl-C) be handled: a step of a small local model never leaves the microtask queue.
    await new Promise<void>((resolve) => setImmediate(resolve));
    stopped = o.shouldStop?.() ?? false;
    if (step % c.checkpointEvery === 0 || step === o.steps || stopped) {
      const path = await backend.saveState(`step-${step}`);
      // The cursor after this step's own batch: a batch sampled ahead is sampled again on resume.
      last = recordCheckpoint(o.dir, { step, path, samplerPath: sampler.modelPath, cursor: done.cursor, time: new Date().toISOString() }, last);
      // Optimiser state is three times the weights: the newest keepCheckpoints of them stay (the
      // records stay, and every step's sampler weights stay for evaluation and the explorer).
      pruneStateCheckpoints(readCheckpoints<CheckpointRecord>(o.dir), c.keepCheckpoints);
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
