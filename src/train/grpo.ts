import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, NumericalError } from '../errors.js';
import { performance } from 'node:perf_hooks';
import type { Rollout } from '../agent/rollout.js';
import { runEpisode } from '../agent/episode.js';
import type { Datum, Sampler } from '../backend/types.js';
import type { Environment } from '../env/types.js';
import { costUsd, type Price } from '../eval/cost.js';
import { pool, runEval } from '../eval/runner.js';
import type { Summary } from '../eval/metrics.js';
import { scoreRollout, type Rubric } from '../reward/rubric.js';
import { readJsonl } from '../runs/jsonl.js';
import { runPath } from '../runs/layout.js';
import { appendCheckpoints, readCheckpoints } from '../runs/checkpoints.js';
import { appendMetrics, appendRollouts, openRunDir, sealJsonlTail, writeSummary } from '../runs/store.js';
import type { Task } from '../tasks/task.js';
import { seededRandom } from '../eval/stats.js';
import { groupAdvantages } from './advantages.js';
import type { TrainingSetup } from './backend-factory.js';
import type { TrainConfig } from './config.js';
import { rlDatum } from './datums.js';
import { collectBatch, type Group } from './dynamic.js';
import { DifficultyFilter } from './difficulty.js';
import { applyKlPenalty } from './kl.js';
import { learningRateAt } from './lr-schedule.js';
import { rolloutMetrics, samplingSplit } from './metrics.js';
import { pruneStateCheckpoints } from './retention.js';
import { SamplingPipeline } from './staleness.js';
import { updateOnBatch } from './update.js';
import { loadSampler } from '../backend/local/index.js';

/**
 * The GRPO loop of the seeds, fully synchronous: each step samples a group of rollouts per query
 * with the current weights (through runEpisode, the same function eval uses), scores them with the
 * rubric, takes advantages relative to the group, builds datums from the rollouts' own tokens,
 * runs one forwardBackward + optimStep, and saves weights for the next step's sampler.
 *
 * Files (src/runs/layout.ts): config.json; rollouts.jsonl (every rollout, with step, group and
 * advantage); metrics.jsonl ({step, kind: 'train' | 'eval', ...}); checkpoints.jsonl ({step, path,
 * samplerPath, cursor, time}); evals/step-N/ (a full eval run directory per eval point).
 *
 * Resume: a step's rollouts and metrics are appended before its checkpoint record, so after a
 * crash the last checkpoint is the truth. `--resume` drops records of steps after it (rewriting
 * the two files through a rename), reloads the weights and Adam state, and continues at the
 * stored cursor of the data order. Every random choice derives from (seed, step, cursor): data
 * order is a seeded permutation per epoch, sampling seeds are a hash of the seed and the query's
 * position, so a resumed run samples exactly what the uninterrupted run would have.
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

export interface CheckpointRecord {
  step: number;
  /** Weights and optimiser state (saveState). */
  path: string;
  /** Weights for sampling (saveWeightsForSampler). */
  samplerPath: string | null;
  cursor: number;
  time: string;
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

/** The last checkpoint of a run directory whose files exist (a resume point), if any. */
export function lastCheckpoint(dir: string): CheckpointRecord | undefined {
  const records = readCheckpoints<CheckpointRecord>(dir);
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    if (typeof r.step === 'number' && typeof r.path === 'string' && (r.path.startsWith('tinker://') || existsSync(r.path))) return r;
  }
  return undefined;
}

/**
 * Drop records of steps after `step` from a JSONL file (the work of a step that was cut before its
 * checkpoint): rewritten whole through a temporary file and a rename, so a crash here loses nothing.
 */
export function truncateAfterStep(path: string, step: number): number {
  if (!existsSync(path)) return 0;
  sealJsonlTail(path);
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const keep: string[] = [];
  let dropped = 0;
  for (const line of lines) {
    let v: { step?: unknown };
    try {
      v = JSON.parse(line) as { step?: unknown };
    } catch {
      dropped++; // a line cut by the crash
      continue;
    }
    if (typeof v.step === 'number' && v.step > step) dropped++;
    else keep.push(line);
  }
  if (dropped > 0) writeRaw(path, keep.length ? keep.join('\n') + '\n' : '');
  return dropped;
}

/** Raw text through a temporary sibling and a rename. */
function writeRaw(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** Steps that have an eval record in metrics.jsonl. */
function evaluatedSteps(dir: string): Set<number> {
  const { records } = readJsonl<{ step?: number; kind?: string }>(runPath(dir, 'metrics'));
  return new Set(records.filter((r) => r.kind === 'eval' && typeof r.step === 'number').map((r) => r.step!));
}

/** The eval numbers that go into metrics.jsonl (plain means; the full summary stays in evals/step-N/). */
function evalRecord(step: number, s: Summary): Record<string, unknown> {
  const keep = ['reward', 'recall', 'precision', 'f1', 'fbeta', 'trajectory_recall', 'exact_match', 'f1_format', 'valid', 'curated_size', 'turns', 'tokens', 'offform_episode_share', 'offform_call_share', 'pass_at_1', 'pass_at_k', 'best_of_n', 'best_of_1', 'tasks', 'rollouts', 'samples'];
  const out: Record<string, unknown> = { step, kind: 'eval' };
  for (const k of keep) if (s[k] !== undefined) out[k] = s[k];
  const ci = s.intervals['reward'];
  if (ci) out['reward_ci'] = [ci.lo, ci.hi];
  out['end_reasons'] = s.end_reasons;
  return out;
}

/**
 * The frozen reference of the KL penalty: the run's starting weights (step 0's sampler; on resume,
 * its file, which only the local backend can load back).
 */
async function referenceSampler(o: TrainRunOptions, current: Sampler): Promise<Sampler> {
  if (!o.start) return current;
  const first = readCheckpoints<CheckpointRecord>(o.dir).find((r) => r.step === 0);
  const path = first ? join(first.path, '..', 'sampler-0.sampler.ckpt') : undefined;
  if (!path || !existsSync(path)) throw new InputError(`klPenaltyCoef: resuming needs the run's starting weights (checkpoints/sampler-0.sampler.ckpt), which this run does not have`);
  return loadSampler(path);
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
    const droppedMetrics = truncateAfterStep(runPath(o.dir, 'metrics'), step);
    const droppedRollouts = truncateAfterStep(runPath(o.dir, 'rollouts'), step);
    if (droppedMetrics || droppedRollouts) log(`resume: dropped ${droppedMetrics} metrics and ${droppedRollouts} rollout records of steps after ${step} (they are run again)`);
    last = lastCheckpoint(o.dir);
  }

  const n = o.trainTasks.length;
  const orders = new Map<number, number[]>();
  const budgets = c.budgets;
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
      budgets,
      config: { agent: agent.spec, tasks: c.tasks, split: c.evalSplit, samples: c.evalSamples, env: c.env, rubric, budgets, step, price: o.price ?? null },
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
  /** The step whose weights `sampler` holds. */
  let samplerStep = step;
  if (!o.start) {
    // Step 0's state: a run killed during its first step resumes from here.
    const path = await backend.saveState(`step-0`);
    last = { step: 0, path, samplerPath: null, cursor: 0, time: new Date().toISOString() };
    appendCheckpoints(o.dir, [last]);
  }
  const reference = c.klPenaltyCoef > 0 ? await referenceSampler(o, sampler) : undefined;
  const difficulty = new DifficultyFilter(c.difficultyFilter);
  if (c.difficultyFilter > 0 && o.start) difficulty.replay(readJsonl<Rollout>(runPath(o.dir, 'rollouts')).records);
  if (c.evalAtStart && step === 0) await evalAt(0, sampler);

  // Sampling one step's batch with the newest weights at the time it starts (maxStaleness > 0:
  // while an earlier step trains).
  const sampleStep = async (s: number) => {
    const t0 = performance.now();
    const stepSampler = sampler, fromStep = samplerStep;
    let skipped = 0, groupIndex = 0;
    const sampleGroups = async (count: number): Promise<Group<Rollout>[]> => {
      const positions: number[] = [];
      // The difficulty filter passes over tasks it skips (at most one epoch of them per call).
      for (let scanned = 0; positions.length < count; scanned++) {
        const pos = cursor++;
        if (scanned < n && difficulty.skips(o.trainTasks[taskAt(pos, n, c.seed, orders)]!.id)) skipped++;
        else positions.push(pos);
      }
      const groups: Group<Rollout>[] = positions.map((pos) => ({ query: pos, rewards: [], rollouts: [] }));
      const jobs = positions.flatMap((pos, gi) => Array.from({ length: c.groupSize }, (_, j) => ({ pos, gi, j })));
      const agents = positions.map((pos) => setup.agent(stepSampler, `train:${o.dir}@step-${fromStep}`, c.temperature, groupSeed(c.seed, pos)));
      const first = groupIndex;
      groupIndex += count;
      const slots: Rollout[][] = positions.map(() => new Array<Rollout>(c.groupSize));
      await pool(jobs, c.concurrency, async ({ pos, gi, j }) => {
        const task = o.trainTasks[taskAt(pos, n, c.seed, orders)]!;
        const r = await runEpisode(agents[gi]!, env, task, budgets, { sample: j, id: `step${s}/g${first + gi}/${task.id}#${j}` });
        r.step = s;
        r.group = first + gi;
        r.reward = scoreRollout(task, r, rubric, s - 1);
        slots[gi]![j] = r;
      });
      groups.forEach((g, gi) => {
        g.rollouts = slots[gi]!;
        g.rewards = g.rollouts.map((r) => r.reward!.total);
        difficulty.record(g.rollouts[0]!.taskId, g.rewards);
      });
      return groups;
    };
    const batch = await collectBatch(c.groupsPerStep, c.dynamicSampling, c.refillRounds, sampleGroups);
    return { batch, cursorAfter: cursor, skipped, samplerStep: fromStep, sampleSeconds: (performance.now() - t0) / 1000 };
  };
  const pipeline = new SamplingPipeline(c.maxStaleness, sampleStep);

  let stopped = false;
  while (step < o.steps) {
    const t0 = performance.now();
    const s = step + 1;
    const sampledStep = await pipeline.take(s, o.steps);
    const { batch } = sampledStep;
    const tSampled = performance.now();

    // Advantages per group; every sampled rollout is recorded with its advantage (0 when dropped).
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
    const fits = built.filter((x) => setup.contextLimit === undefined || x.datum.inputTokens.length <= setup.contextLimit);
    const trained = fits.map((x) => x.datum);
    const trainTokens = trained.reduce((sum, d) => sum + d.weights.reduce((a, w) => a + w, 0), 0);
    let fb: Record<string, number> = {}, opt: Record<string, number> = {}, updates = 0, klReference: number | null = null;
    const learningRate = learningRateAt(c.adam.learningRate, s, o.steps, c.lrSchedule);
    // A NaN or infinite number stops the run here, before this step is recorded or checkpointed:
    // the last checkpoint stays the last good one, and the message says which it is.
    const diverged = (what: string) =>
      new NumericalError(`training stopped at step ${s}: ${what}; learning rate ${learningRate}; last good checkpoint: ${last ? `step ${last.step} (${last.path})` : 'none'}`);
    const blownSampler = batch.sampled.flatMap((g) => g.rollouts).find((r) => r.turns.some((t) => t.sampledLogprobs?.some((x) => !Number.isFinite(x))));
    if (blownSampler) throw diverged(`the sampler's log-probabilities are not finite (rollout ${blownSampler.id}): the weights have blown up`);
    try {
      if (reference && trained.length) klReference = await applyKlPenalty(trained, reference, c.klPenaltyCoef, c.klEstimator);
      const lossConfig = { ...(c.clipLow !== undefined ? { clipLowThreshold: c.clipLow } : {}), ...(c.clipHigh !== undefined ? { clipHighThreshold: c.clipHigh } : {}) };
      // Tinker sums the loss over tokens; lossScale 'tokens' divides by each minibatch's tokens (a mean).
      const u = await updateOnBatch(backend, trained, fits.map((x) => x.group), { loss: c.loss, lossConfig, adam: { ...c.adam, learningRate }, ppoEpochs: c.ppoEpochs, minibatches: c.minibatches, lossScale: c.lossScale });
      fb = u.fb;
      opt = u.opt;
      updates = u.updates;
    } catch (err) {
      if (err instanceof NumericalError) throw diverged(err.message);
      throw err;
    }
    sampler = await backend.saveWeightsForSampler(`sampler-${s}`);
    samplerStep = s;
    const tTrained = performance.now();

    const split = samplingSplit(batch.sampled);
    // With maxStaleness > 0 the batch was sampled while earlier steps trained: its own sampling time.
    const sampleWall = c.maxStaleness > 0 ? sampledStep.sampleSeconds : (tSampled - t0) / 1000;
    const envShare = split.sampleMs + split.envMs > 0 ? split.envMs / (split.sampleMs + split.envMs) : 0;
    const m = rolloutMetrics(batch.sampled, o.price);
    const record: Record<string, unknown> = {
      step: s,
      kind: 'train',
      ...m,
      groups_kept: batch.kept.length,
      refill_rounds: batch.refillRounds,
      queries_consumed: batch.consumed,
      datums: trained.length,
      datums_too_long: built.length - trained.length,
      trained_tokens: trainTokens,
      loss: fb['loss'] ?? 0,
      learner_entropy: fb['entropy:mean'] ?? null,
      kl_sampler_learner: fb['kl_sampler_learner:mean'] ?? null,
      ratio_mean: fb['ratio:mean'] ?? null,
      clip_fraction: fb['clip_fraction:mean'] ?? null,
      grad_norm: opt['grad_norm'] ?? null,
      learning_rate: learningRate,
      updates,
      kl_reference: klReference,
      sampler_staleness: s - 1 - sampledStep.samplerStep,
      tasks_skipped: sampledStep.skipped,
      beta: rubric.beta.kind === 'constant' ? rubric.beta.beta : null,
      time_sampling_s: sampleWall * (1 - envShare),
      time_env_s: sampleWall * envShare,
      time_waiting_s: (tSampled - t0) / 1000,
      time_training_s: (tTrained - tSampled) / 1000,
      time_step_s: (tTrained - t0) / 1000,
      cost_usd: costUsd({ promptTokens: m['prompt_tokens'] as number, completionTokens: m['completion_tokens'] as number, trainTokens }, o.price),
      time: new Date().toISOString(),
    };
    // Rollouts and metrics first, the checkpoint record last: the checkpoint is what makes the step count.
    appendRollouts(o.dir, batch.sampled.flatMap((g) => g.rollouts));
    appendMetrics(o.dir, [record]);
    step = s;
    // Let pending signals (Ctrl-C) be handled: a step of a small local model never leaves the microtask queue.
    await new Promise<void>((resolve) => setImmediate(resolve));
    stopped = o.shouldStop?.() ?? false;
    if (step % c.checkpointEvery === 0 || step === o.steps || stopped) {
      const path = await backend.saveState(`step-${step}`);
      // The cursor after this step's own batch: a batch sampled ahead is sampled again on resume.
      last = { step, path, samplerPath: sampler.modelPath, cursor: sampledStep.cursorAfter, time: new Date().toISOString() };
      appendCheckpoints(o.dir, [last]);
      // Optimiser state is three times the weights: keep the newest keepCheckpoints of them (the
      // records stay, and every step's sampler weights stay for evaluation and the explorer).
      pruneStateCheckpoints(readCheckpoints<CheckpointRecord>(o.dir), c.keepCheckpoints);
    }
    o.onStep?.({ step, steps: o.steps, metrics: record, stepSeconds: (performance.now() - t0) / 1000 });
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
