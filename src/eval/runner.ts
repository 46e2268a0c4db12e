import { performance } from 'node:perf_hooks';
import type { Agent } from '../agent/types.js';
import type { Rollout } from '../agent/rollout.js';
import type { Budgets, Environment } from '../env/types.js';
import type { Task } from '../tasks/task.js';
import { seededKey, splitSha256 } from '../tasks/split.js';
import type { Rubric } from '../reward/rubric.js';
import { forEachConcurrently } from '../concurrency.js';
import { runScoredEpisode } from '../suites/scored-episode.js';
import { appendRollouts, checkSplitHash, finishedKeys, latestRollouts, openRunDir, readRollouts, rolloutKey, writeSummary, type RunConfig } from '../runs/store.js';
import type { Price } from './cost.js';
import { rolloutRow, summarize, type Summary } from './metrics.js';
import type { BootstrapOptions } from './stats.js';

export interface EvalOptions {
  /** The run directory (created, or reopened to resume). */
  dir: string;
  agent: Agent;
  env: Environment;
  tasks: readonly Task[];
  /** Rollouts per task. */
  samples: number;
  /** Episodes in flight at once. */
  concurrency: number;
  /**
   * Seeds every (task, sample) episode, so a sampling agent's eval repeats at any concurrency. Unset,
   * episodes use the agent's own seeding (training's periodic evals, whose agent carries a seed).
   */
  seed?: number;
  rubric: Rubric;
  budgets?: Budgets;
  /** What config.json records (kind 'eval' is set here). */
  config: Record<string, unknown>;
  /** Config keys that must match for a re-run to resume this directory. */
  identity: readonly string[];
  price: Price | undefined;
  bootstrap?: BootstrapOptions;
  /** Called after each rollout is written (progress). */
  onRollout?: (rollout: Rollout, done: number, todo: number) => void;
}

export interface EvalResult {
  summary: Summary;
  /** Rollouts run by this call, and kept from an earlier interrupted one. */
  ran: number;
  kept: number;
  resumed: boolean;
  /** Unreadable lines of rollouts.jsonl (a line cut by a crash), skipped. */
  skippedLines: number;
  /** The errors the grid's rollouts ended in, each message once with how many ended in it, most first. */
  errors: { message: string; count: number }[];
  /** The grid's rollouts, the latest record of each (task, sample): what the summary was taken from. */
  rollouts: Rollout[];
}

/** The key of an eval's config.json that records the SHA-256 of the tasks it evaluated. */
const SPLIT_SHA256 = 'splitSha256';

/**
 * The sampling seed of one (task, sample) episode: a hash of the eval's seed, the task id and the
 * sample index, so it depends on nothing else (not on which episodes ran before or beside it).
 */
export function episodeSeed(seed: number, taskId: string, sample: number): number {
  return Number.parseInt(seededKey(seed, `${taskId}#${sample}`).slice(0, 7), 16);
}

/** Score rollouts and summarise them (also used to re-summarise a run directory). */
/** `kind`: the suite whose rubric scored them. */
export function summarizeRollouts(rollouts: readonly Rollout[], kind: string, price: Price | undefined, bootstrap?: BootstrapOptions): Summary {
  return summarize(latestRollouts(rollouts).map((r) => rolloutRow(r, kind, price)), kind, bootstrap);
}

/**
 * Run `samples` rollouts of every task, score each, append it to rollouts.jsonl as soon as it is
 * done, and write summary.json at the end. Re-running with the same directory resumes: samples that
 * finished are kept, missing or errored ones are run again (the new record supersedes the old line).
 */
export async function runEval(o: EvalOptions): Promise<EvalResult> {
  // The hash of the tasks evaluated (the split's, or its first --limit), as `sleuth tasks` prints a split's.
  const sha256 = splitSha256([...o.tasks]);
  const split = o.config['split'];
  checkSplitHash(o.dir, SPLIT_SHA256, typeof split === 'string' ? split : undefined, sha256);
  const config: RunConfig = { kind: 'eval', ...o.config, [SPLIT_SHA256]: sha256 };
  const { resumed } = openRunDir(o.dir, config, o.identity);
  const before = readRollouts(o.dir);
  const done = finishedKeys(before.rollouts);
  const todo: { task: Task; sample: number }[] = [];
  for (const task of o.tasks) for (let sample = 0; sample < o.samples; sample++) if (!done.has(rolloutKey({ taskId: task.id, sample }))) todo.push({ task, sample });

  const t0 = performance.now();
  let finished = 0;
  await forEachConcurrently(todo, o.concurrency, async ({ task, sample }) => {
    const rollout = await runScoredEpisode(o.agent, o.env, task, o.budgets ?? o.env.defaultBudgets, o.rubric, { sample, ...(o.seed !== undefined ? { seed: episodeSeed(o.seed, task.id, sample) } : {}) });
    appendRollouts(o.dir, [rollout]);
    finished++;
    o.onRollout?.(rollout, finished, todo.length);
  });

  // The summary covers exactly this eval's task × sample grid, read back from the file.
  const wanted = new Set(o.tasks.flatMap((t) => Array.from({ length: o.samples }, (_, s) => rolloutKey({ taskId: t.id, sample: s }))));
  const after = readRollouts(o.dir);
  const rollouts = after.rollouts.filter((r) => wanted.has(rolloutKey(r)));
  const summary = summarizeRollouts(rollouts, o.rubric.kind, o.price, o.bootstrap);
  summary['eval_wall_s'] = (performance.now() - t0) / 1000;
  summary['rubric'] = o.rubric.name;
  writeSummary(o.dir, summary);
  const errors = new Map<string, number>();
  const latest = latestRollouts(rollouts);
  for (const r of latest) if (r.endReason === 'error') errors.set(r.error ?? 'unknown error', (errors.get(r.error ?? 'unknown error') ?? 0) + 1);
  return {
    summary,
    ran: todo.length,
    kept: o.tasks.length * o.samples - todo.length,
    resumed,
    skippedLines: after.skipped.length,
    errors: [...errors].map(([message, count]) => ({ message, count })).sort((a, b) => b.count - a.count),
    rollouts: latest,
  };
}
