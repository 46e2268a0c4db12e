import type { Agent, AgentCall, AgentContext, AgentSession, AgentTurn, ToolExchange } from './types.js';

/**
 * Scripted agents as plans: a generator yields the agent's turns and receives the results of each
 * turn's calls. Scripted agents act only through the tools, like a model, so their trajectories,
 * call logs and budgets are real. Every suite's baseline and oracle are plans.
 */
export type Plan = Generator<AgentTurn, void, ToolExchange[]>;

export function call(name: string, args: Record<string, unknown>): AgentCall {
  return { name, arguments: args, status: 'ok' };
}

export function turn(text: string, ...calls: AgentCall[]): AgentTurn {
  return { text, calls };
}

/** Chunk ids in the results of calls that succeeded. */
export function idsIn(results: ToolExchange[]): string[] {
  return results.flatMap((r) => (r.result.outcome === 'ok' ? r.result.chunkIds : []));
}

class PlanSession implements AgentSession {
  private started = false;
  constructor(
    private readonly plan: Plan,
    private readonly doneText: string,
  ) {}
  async next(results: ToolExchange[]): Promise<AgentTurn> {
    // The first next() of a generator runs it to its first yield; later ones hand in the results.
    const step = this.started ? this.plan.next(results) : this.plan.next(undefined as unknown as ToolExchange[]);
    this.started = true;
    // A plan that has nothing more to do ends with a final message and no calls.
    return step.done ? turn(this.doneText) : step.value;
  }
}

/** An agent that runs `plan` for each episode; a plan that returns ends with the message `doneText`. */
export function scriptedAgent(spec: string, plan: (ctx: AgentContext) => Plan, doneText = 'Done.'): Agent {
  return { spec, start: (ctx) => new PlanSession(plan(ctx), doneText) };
}
