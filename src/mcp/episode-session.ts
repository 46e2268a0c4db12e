import { runEpisode } from '../agent/episode.js';
import type { Rollout, RewardBreakdown } from '../agent/rollout.js';
import type { Agent, AgentSession, AgentTurn, ToolExchange } from '../agent/types.js';
import { errorResult } from '../env/episode-base.js';
import type { Budgets, Environment, ToolResult } from '../env/types.js';
import type { Rubric } from '../reward/rubric.js';
import { scoreRollout } from '../suites/registry.js';
import type { Task } from '../tasks/task.js';

/** What finish (or the call that ran out the budget) reports besides the tool's own result. */
export interface EpisodeOutcome {
  rollout: Rollout;
  /** With a task set: the reward breakdown, computed as in training and eval. */
  reward?: RewardBreakdown;
  /** Why the rubric could not score the episode, if it could not. */
  rewardError?: string;
}

/** A promise with its resolve function at hand. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

type TurnTaker = (turn: AgentTurn) => void;

/**
 * One episode driven from outside, one tool call at a time: an MCP client's calls become the turns
 * of runEpisode (one call per turn), so they run in exactly the loop, environment, budgets and error
 * messages that training and eval use. The agent here is a bridge: each turn it hands runEpisode
 * the next call it was given, and each call's result goes back to whoever made the call.
 */
export class ExternalEpisode {
  /** Resolved when runEpisode asks for the next turn, with the function that hands it over. */
  private nextTurn = deferred<TurnTaker>();
  /** The caller waiting for the result of the call being run. */
  private waiting: { resolve: (result: ToolResult) => void; reject: (err: unknown) => void } | undefined;
  /**
   * Why the episode could not go on, when runEpisode threw (it does for a damaged index, which no
   * tool result may hide): the call waiting, and every later one, fails with it.
   */
  private failure: unknown;
  private outcome: EpisodeOutcome | undefined;
  /** Calls run one after another: a call made while one runs waits for it. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    env: Environment,
    readonly task: Task,
    budgets: Budgets,
    rubric: Rubric | undefined,
    spec = 'mcp',
  ) {
    const bridge: Agent = {
      spec,
      start: (): AgentSession => ({
        next: (results: ToolExchange[]) => {
          // The previous turn's one call has run: its result goes back to its caller.
          if (results.length > 0) this.deliver(results[0]!.result);
          return new Promise<AgentTurn>((resolve) => this.nextTurn.resolve(resolve));
        },
      }),
    };
    void runEpisode(bridge, env, task, budgets).then((rollout) => {
      const outcome: EpisodeOutcome = { rollout };
      try {
        if (rubric) outcome.reward = scoreRollout(task, rollout, rubric);
      } catch (err) {
        // A task the rubric cannot score still ends the episode; the session says why.
        outcome.rewardError = (err as Error).message;
      }
      this.outcome = outcome;
      // The call that ended the episode (finish, or the last of the turn budget) gets its result
      // from the record, as runEpisode does not ask for another turn; a failure, its error.
      const last = rollout.endReason === 'error' ? undefined : rollout.turns.at(-1)?.calls[0]?.result;
      this.deliver(last ?? errorResult('episode_error', `the episode failed: ${rollout.error ?? 'unknown error'}`));
    }, (err: unknown) => {
      this.failure = err;
      const w = this.waiting;
      this.waiting = undefined;
      w?.reject(err);
    });
  }

  /** The episode's outcome once it has ended (undefined while it runs). */
  get ended(): EpisodeOutcome | undefined {
    return this.outcome;
  }

  /** Run one call; resolves with its result and, when this call ended the episode, the outcome. */
  call(name: string, args: unknown): Promise<{ result: ToolResult; outcome?: EpisodeOutcome }> {
    const run = async () => {
      if (this.failure !== undefined) throw this.failure;
      if (this.outcome) {
        const r = this.outcome.rollout;
        return { result: errorResult('episode_over', `the episode already ended (${r.endReason}); '${name}' was not run`) };
      }
      // runEpisode asks for the next turn at once after the previous call ran.
      const take = await this.nextTurn.promise;
      this.nextTurn = deferred();
      const result = new Promise<ToolResult>((resolve, reject) => (this.waiting = { resolve, reject }));
      take({ text: '', calls: [{ name, arguments: args ?? {}, status: 'ok' }] });
      const value = await result;
      // The outcome is set before the result of the call that ended the episode is delivered.
      return this.outcome ? { result: value, outcome: this.outcome } : { result: value };
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private deliver(result: ToolResult): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve(result);
  }
}
