import { runEpisode, type EpisodeOptions } from '../agent/episode.js';
import type { Rollout } from '../agent/rollout.js';
import type { Agent } from '../agent/types.js';
import type { Budgets, Environment } from '../env/types.js';
import type { Rubric } from '../reward/rubric.js';
import type { Task } from '../tasks/task.js';
import { scoreRollout } from './registry.js';

export interface ScoredEpisodeOptions extends EpisodeOptions {
  /** The training step and group the rollout belongs to, recorded on it (GRPO's rollouts). */
  step?: number;
  group?: number;
  /** The step whose beta scores it (default: the rollout's step, else 0); GRPO scores step N with the beta of N - 1. */
  betaStep?: number;
}

/**
 * Run one episode and score it under the rubric: the one run-and-score path of eval, SFT's teacher
 * attempts and GRPO's groups, so every rollout any of them records is scored the same way.
 */
export async function runScoredEpisode(agent: Agent, env: Environment, task: Task, budgets: Budgets, rubric: Rubric, options: ScoredEpisodeOptions = {}): Promise<Rollout> {
  const { step, group, betaStep, ...episode } = options;
  const rollout = await runEpisode(agent, env, task, budgets, episode);
  if (step !== undefined) rollout.step = step;
  if (group !== undefined) rollout.group = group;
  rollout.reward = scoreRollout(task, rollout, rubric, betaStep);
  return rollout;
}
