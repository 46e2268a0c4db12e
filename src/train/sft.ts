import { join } from 'node:path';
import { CONSTANT_LR, learningRateAt, type LrSchedule } from './lr-schedule.js';
import { performance } from 'node:perf_hooks';
import type { Rollout } from '../agent/rollout.js';
import type { Agent } from '../agent/types.js';
import { InputError } from '../errors.js';
import type { AdamParams, Datum, Sampler } from '../backend/types.js';
import type { Budgets, Environment } from '../env/types.js';
import type { Price } from '../eval/cost.js';
import type { Summary } from '../eval/metrics.js';
import { forEachConcurrently } from '../concurrency.js';
import { runEval } from '../eval/runner.js';
import { seededRandom } from '../random.js';
import { factRecall } from '../reward/sets.js';
import type { Rubric } from '../reward/rubric.js';
import { suiteOf } from '../suites/registry.js';
import { runScoredEpisode } from '../suites/scored-episode.js';
import { checkOpening } from '../suites/search/opening.js';
import { appendJsonl } from '../runs/jsonl.js';
import { appendCheckpoints } from '../runs/checkpoints.js';
import { appendMetrics, appendRollouts, openRunDir, writeSummary } from '../runs/store.js';
import type { Task } from '../tasks/task.js';
import type { TrainingSetup } from './backend-factory.js';
import type { SftKeepIf } from './config.js';
import { renderRollout, sftDatum, type TokenStream } from './datums.js';

/**
 * SFT by rejection sampling (STaR): run a teacher several times per training
 * query, keep the shortest attempt that (1) scored above a threshold, (2) searched at least once,
 * and (3) saw gold support in its tool results (so it did not just guess); render the kept episodes
 * in the student's format, train cross-entropy on the model-written tokens only, and pick the epoch
 * by eval score, not by loss.
 */

export interface FilterOptions {
  /** Keep attempts whose reward is above this (strictly). */
  threshold: number;
  /**
   * The gold support (3) asks for (default any-fact): any-fact, a chunk of at least one fact;
   * all-gold, a chunk of every fact, the seed's "every gold supporting paragraph".
   */
  keepIf?: SftKeepIf;
}

export type Verdict = 'kept' | 'low_reward' | 'no_search' | 'no_support' | 'error';

/** Why an attempt is or is not a demonstration. */
export function judgeAttempt(task: Task, r: Rollout, o: FilterOptions): Verdict {
  if (r.endReason === 'error') return 'error';
  if (!r.reward || !(r.reward.total > o.threshold)) return 'low_reward';
  // A call that looks something up, in the environment the attempt ran in.
  const lookups = suiteOf(r.env).lookupTools;
  const searched = r.turns.some((t) => t.calls.some((c) => lookups.has(c.name) && c.result.outcome === 'ok'));
  if (!searched) return 'no_search';
  // Gold support must have appeared in a tool result, not merely been named by the model.
  const seen = factRecall(task, r.trajectory);
  if ((o.keepIf ?? 'any-fact') === 'all-gold' ? seen < 1 : seen === 0) return 'no_support';
  return 'kept';
}

/**
 * Which passing attempts become demonstrations: `shortest` (the STaR rule: fewest
 * model-written tokens) or `best` (highest reward, the shorter first on a tie). Shortest favours
 * narrow searches that curate little; best keeps what scored, whatever its length.
 */
export type SftKeep = 'shortest' | 'best';

/** The kept attempts of one query: passing ones in `keep` order, at most `cap`. */
export function selectDemonstrations<T extends { rollout: Rollout; length: number }>(task: Task, attempts: readonly T[], o: FilterOptions & { cap: number; keep?: SftKeep }): T[] {
  const passing = attempts.filter((a) => judgeAttempt(task, a.rollout, o) === 'kept');
  const reward = (a: T) => a.rollout.reward?.total ?? -Infinity;
  // Ties go to the earlier attempt, so the choice is deterministic.
  return passing
    .map((a, i) => ({ a, i }))
    .sort((x, y) => (o.keep === 'best' ? reward(y.a) - reward(x.a) : 0) || x.a.length - y.a.length || x.i - y.i)
    .slice(0, o.cap)
    .map((x) => x.a);
}

export interface SftOptions {
  dir: string;
  /** What config.json records. */
  record: Record<string, unknown>;
  teacher: Agent;
  setup: TrainingSetup;
  env: Environment;
  budgets: Budgets;
  trainTasks: readonly Task[];
  evalTasks: readonly Task[];
  rubric: Rubric;
  price: Price | undefined;
  attempts: number;
  cap: number;
  threshold: number;
  /** Which passing attempts to keep (default shortest). */
  keep?: SftKeep;
  /** The gold support a kept attempt must have seen (default any-fact). */
  keepIf?: SftKeepIf;
  epochs: number;
  /** Datums per optimiser step. */
  batchSize: number;
  adam: AdamParams;
  /** The learning rate over the optimiser steps of all epochs (default constant). */
  lrSchedule?: LrSchedule;
  /** Student sampling temperature at eval. */
  temperature: number;
  evalSamples: number;
  concurrency: number;
  seed: number;
  /** Longest training sequence (the model's context); longer demonstrations are skipped. */
  maxTokens: number;
  /**
   * k of the student's opening search (TrainConfig.openingSearch; 0 = none): the teacher's first
   * turn must be exactly that search, and it is rendered as inserted tokens, as the student gets it.
   */
  openingSearch?: number;
  log?: (line: string) => void;
  onEpoch?: (epoch: number, loss: number, summary: Summary | undefined) => void;
}

export interface SftResult {
  attempts: number;
  /** Queries with an attempt above the threshold. */
  solved: number;
  /** Queries with a kept demonstration, and demonstrations kept. */
  keptQueries: number;
  kept: number;
  verdicts: Record<Verdict, number>;
  tooLong: number;
  trainTokens: number;
  epochs: { epoch: number; loss: number; eval: number | null; samplerPath: string }[];
  best: { epoch: number; samplerPath: string; reward: number | null };
}

export async function runSft(o: SftOptions): Promise<SftResult> {
  const log = o.log ?? (() => {});
  openRunDir(o.dir, { kind: 'sft', ...o.record }, []);
  const { renderer, backend } = o.setup;

  // 1. Teacher attempts, scored and judged.
  log(`teacher ${o.teacher.spec}: ${o.attempts} attempt(s) on each of ${o.trainTasks.length} training queries`);
  const jobs = o.trainTasks.flatMap((task) => Array.from({ length: o.attempts }, (_, sample) => ({ task, sample })));
  const byTask = new Map<string, { rollout: Rollout; length: number; stream: TokenStream }[]>();
  const t0 = performance.now();
  await forEachConcurrently(jobs, o.concurrency, async ({ task, sample }) => {
    const r = await runScoredEpisode(o.teacher, o.env, task, o.budgets, o.rubric, { sample });
    if (o.openingSearch) checkOpening(o.teacher.spec, task, r, o.openingSearch);
    const stream = renderRollout(renderer, o.env, task, r, { openingTurns: o.openingSearch ? 1 : 0 });
    const length = stream.mask.reduce((s, m) => s + m, 0);
    const list = byTask.get(task.id) ?? [];
    list[sample] = { rollout: r, length, stream };
    byTask.set(task.id, list);
  });
  const all = o.trainTasks.flatMap((t) => byTask.get(t.id) ?? []);
  appendRollouts(o.dir, all.map((a) => a.rollout));
  const verdicts: Record<Verdict, number> = { kept: 0, low_reward: 0, no_search: 0, no_support: 0, error: 0 };
  let solved = 0, keptQueries = 0, tooLong = 0;
  const streams: TokenStream[] = [];
  const keptLines: unknown[] = [];
  for (const task of o.trainTasks) {
    const attempts = byTask.get(task.id) ?? [];
    for (const a of attempts) verdicts[judgeAttempt(task, a.rollout, o)]++;
    if (attempts.some((a) => (a.rollout.reward?.total ?? -Infinity) > o.threshold)) solved++;
    const chosen = selectDemonstrations(task, attempts, { threshold: o.threshold, cap: o.cap, keep: o.keep ?? 'shortest', keepIf: o.keepIf ?? 'any-fact' });
    if (chosen.length) keptQueries++;
    for (const a of chosen) {
      if (a.stream.tokens.length > o.maxTokens) {
        tooLong++;
        continue;
      }
      streams.push(a.stream);
      keptLines.push({ taskId: task.id, rollout: a.rollout.id, sample: a.rollout.sample, reward: a.rollout.reward!.total, tokens: a.stream.tokens.length, modelTokens: a.length });
    }
  }
  appendJsonl(join(o.dir, 'kept.jsonl'), keptLines);
  log(`teacher: ${solved}/${o.trainTasks.length} queries solved (reward > ${o.threshold}), ${keptQueries} kept, ${streams.length} demonstrations (${tooLong} too long) in ${((performance.now() - t0) / 1000).toFixed(1)}s`);

  // 2. Cross-entropy on the model-written tokens, N epochs, eval after each.
  const datums = streams.map((s) => sftDatum(s)).filter((d): d is Datum => d !== undefined);
  const trainTokens = datums.reduce((s, d) => s + d.weights.reduce((a, w) => a + w, 0), 0);
  const rng = seededRandom(o.seed + 17);
  const epochs: SftResult['epochs'] = [];
  let best: SftResult['best'] | undefined;
  const evalOf = async (epoch: number, sampler: Sampler): Promise<Summary | undefined> => {
    if (o.evalTasks.length === 0) return undefined;
    const agent = o.setup.agent(sampler, `sft:${o.dir}@epoch-${epoch}`, o.temperature, o.seed + 1);
    const r = await runEval({
      dir: join(o.dir, 'evals', `epoch-${epoch}`),
      agent,
      env: o.env,
      tasks: o.evalTasks,
      samples: o.evalSamples,
      concurrency: o.concurrency,
      rubric: o.rubric,
      budgets: o.budgets,
      config: { agent: agent.spec, samples: o.evalSamples, rubric: o.rubric, budgets: o.budgets, epoch, price: o.price ?? null },
      identity: ['samples', 'rubric', 'budgets'],
      price: o.price,
      bootstrap: { seed: o.seed },
    });
    return r.summary;
  };
  const totalUpdates = o.epochs * Math.ceil(datums.length / o.batchSize);
  let update = 0, learningRate = o.adam.learningRate;
  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    const order = datums.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    let loss = 0, tokens = 0;
    for (let b = 0; b < order.length; b += o.batchSize) {
      const batch = order.slice(b, b + o.batchSize).map((i) => datums[i]!);
      const r = await backend.forwardBackward(batch, 'cross_entropy');
      learningRate = learningRateAt(o.adam.learningRate, ++update, totalUpdates, o.lrSchedule ?? CONSTANT_LR);
      await backend.optimStep({ ...o.adam, learningRate });
      loss += r.loss;
      tokens += batch.reduce((s, d) => s + d.weights.reduce((a, w) => a + w, 0), 0);
    }
    const sampler = await backend.saveWeightsForSampler(`epoch-${epoch}`);
    const summary = await evalOf(epoch, sampler);
    const evalReward = typeof summary?.['reward'] === 'number' ? (summary['reward'] as number) : null;
    const lossPerToken = tokens ? loss / tokens : 0;
    epochs.push({ epoch, loss: lossPerToken, eval: evalReward, samplerPath: sampler.modelPath });
    appendMetrics(o.dir, [{ step: epoch, kind: 'train', loss: lossPerToken, tokens, learning_rate: learningRate }]);
    if (summary) appendMetrics(o.dir, [{ step: epoch, kind: 'eval', reward: summary['reward'], f1: summary['f1'], recall: summary['recall'], precision: summary['precision'], valid: summary['valid'], curated_size: summary['curated_size'] }]);
    // The epoch is picked by eval reward (by the latest epoch when there is no eval split).
    if (!best || (evalReward !== null && (best.reward === null || evalReward > best.reward)) || (evalReward === null && best.reward === null)) best = { epoch, samplerPath: sampler.modelPath, reward: evalReward };
    o.onEpoch?.(epoch, lossPerToken, summary);
  }
  if (!best) {
    const sampler = await backend.saveWeightsForSampler('epoch-0');
    best = { epoch: 0, samplerPath: sampler.modelPath, reward: null };
  }
  const result: SftResult = { attempts: jobs.length, solved, keptQueries, kept: streams.length, verdicts, tooLong, trainTokens, epochs, best };
  appendCheckpoints(o.dir, epochs.map((e) => ({ step: e.epoch, path: e.samplerPath, samplerPath: e.samplerPath, time: new Date().toISOString() })));
  writeSummary(o.dir, { kind: 'sft', teacher: o.teacher.spec, ...result });
  return result;
}
