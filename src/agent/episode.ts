import { performance } from 'node:perf_hooks';
import { DamagedIndexError } from '../errors.js';
import { errorResult } from '../env/episode-base.js';
import type { Budgets, EndReason, Environment } from '../env/types.js';
import type { Task } from '../tasks/task.js';
import type { CallRecord, Rollout, TurnRecord } from './rollout.js';
import type { Agent, AgentCall, ToolExchange } from './types.js';

export interface EpisodeOptions {
  /** Index of this sample among the N for its task (default 0). */
  sample?: number;
  /** This episode's sampling seed, handed to the agent (AgentContext.seed). */
  seed?: number;
  /** Rollout id (default `TASK_ID#SAMPLE`). */
  id?: string;
  /** Called after each turn with its record (e.g. to show progress or the curated set). */
  onTurn?: (turn: TurnRecord) => void;
}

function callRecord(call: AgentCall, result: CallRecord['result']): CallRecord {
  const record: CallRecord = { name: call.name, arguments: call.arguments, status: call.status, result };
  if (call.raw !== undefined) record.raw = call.raw;
  if (call.tokenSpan) record.tokenSpan = call.tokenSpan;
  return record;
}

/**
 * Run one episode: the single loop that eval, SFT data collection and GRPO all use, so a model is
 * trained in exactly the environment it is scored in. Never throws for what the agent does; an
 * agent or backend failure ends the episode with endReason 'error' and keeps the turns so far.
 */
export async function runEpisode(agent: Agent, env: Environment, task: Task, budgets: Budgets = env.defaultBudgets, options: EpisodeOptions = {}): Promise<Rollout> {
  const sample = options.sample ?? 0;
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const episode = env.start(task);
  const turns: TurnRecord[] = [];
  let endReason: EndReason | undefined;
  let error: string | undefined;

  try {
    const session = await agent.start({ task, env, system: env.systemPrompt(), user: env.userPrompt(task), tools: env.tools, budgets, sample, ...(options.seed !== undefined ? { seed: options.seed } : {}) });
    let results: ToolExchange[] = [];
    while (endReason === undefined) {
      if (turns.length >= budgets.maxTurns) {
        endReason = 'turns';
        break;
      }
      const sampleStart = performance.now();
      const turn = await session.next(results);
      const sampleMs = performance.now() - sampleStart;
      const envStart = performance.now();
      const index = turns.length;
      const calls: CallRecord[] = [];
      results = [];
      // Agents enforce the budgets they can (a sampler's maxTokens); a turn that still wrote more
      // than the per-turn budget (e.g. an API that ignored max_tokens) is over budget all the same.
      const overBudget = turn.overBudget ?? ((turn.completionTokens ?? 0) > budgets.maxTokensPerTurn ? 'tokens' : undefined);
      if (overBudget) {
        // A cut-off turn is recorded as written, but nothing in it runs.
        for (const call of turn.calls) calls.push(callRecord(call, errorResult('not_run', `the turn ran out of its ${overBudget} budget`)));
        endReason = overBudget;
      } else {
        for (const call of turn.calls) {
          const callStart = performance.now();
          const result = await episode.call({ name: call.name, arguments: call.arguments, ...(call.id ? { id: call.id } : {}), ...(call.argumentError !== undefined ? { argumentError: call.argumentError } : {}) }, call.status, index);
          calls.push({ ...callRecord(call, result), ms: performance.now() - callStart });
          results.push({ call, result });
        }
        if (turn.calls.length === 0) endReason = episode.finalMessage(turn.text);
        else if (episode.ended) endReason = episode.ended;
        else if ((turn.promptTokens ?? 0) + (turn.completionTokens ?? 0) >= budgets.contextTokens) endReason = 'context';
      }
      episode.endTurn();
      const record: TurnRecord = {
        index,
        insertedTokens: turn.insertedTokens ?? [],
        sampledTokens: turn.sampledTokens ?? [],
        sampledLogprobs: turn.sampledLogprobs ?? [],
        text: turn.text,
        calls,
        curated: [...episode.curated],
        sampleMs,
        envMs: performance.now() - envStart,
        promptTokens: turn.promptTokens ?? 0,
        completionTokens: turn.completionTokens ?? 0,
        ...(overBudget ? { cut: overBudget } : {}),
      };
      turns.push(record);
      options.onTurn?.(record);
    }
  } catch (err) {
    // A damaged index is not the episode's failure: every episode after it would read wrong
    // results, so the evaluation or training stops instead of scoring them.
    if (err instanceof DamagedIndexError) throw err;
    endReason = 'error';
    error = err instanceof Error ? err.message : String(err);
  }

  const rollout: Rollout = {
    version: 1,
    id: options.id ?? `${task.id}#${sample}`,
    taskId: task.id,
    agent: agent.spec,
    env: env.name,
    sample,
    query: task.query,
    turns,
    curated: [...episode.curated],
    trajectory: [...episode.trajectory],
    read: [...episode.read],
    endReason: endReason ?? 'error',
    promptTokens: turns.reduce((s, t) => s + t.promptTokens, 0),
    completionTokens: turns.reduce((s, t) => s + t.completionTokens, 0),
    wallMs: performance.now() - t0,
    startedAt,
    budgets,
  };
  if (episode.answer !== undefined) rollout.answer = episode.answer;
  if (error !== undefined) rollout.error = error;
  return rollout;
}
