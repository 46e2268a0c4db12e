import type { Sampler } from '../backend/types.js';
import type { ParsedCall, Renderer } from '../protocol/types.js';
import type { Agent, AgentContext, AgentSession, AgentTurn, ToolExchange } from './types.js';

export interface TokenSampling {
  temperature: number;
  topP?: number;
  topK?: number;
  /** Base seed; each sample of a task adds its index, so N samples differ but reruns repeat. */
  seed?: number;
}

/**
 * A token-level agent: a Renderer turns the episode into tokens and back, a Sampler writes the
 * model's turns. The token stream is only ever appended to (prompt, then per turn the inserted
 * tool-result tokens and the sampled tokens), so the rollout's tokens are exactly what the model saw.
 * It enforces the per-turn token budget and the context budget.
 */
export class TokenAgent implements Agent {
  constructor(
    readonly spec: string,
    readonly renderer: Renderer,
    readonly sampler: Sampler,
    readonly sampling: TokenSampling = { temperature: 1 },
  ) {}

  start(ctx: AgentContext): AgentSession {
    return new TokenSession(this, ctx);
  }
}

class TokenSession implements AgentSession {
  private readonly context: number[] = [];
  private lastSampled: number[] | undefined;

  constructor(
    private readonly agent: TokenAgent,
    private readonly ctx: AgentContext,
  ) {}

  async next(results: ToolExchange[]): Promise<AgentTurn> {
    const { renderer, sampler, sampling } = this.agent;
    const { budgets } = this.ctx;
    const inserted =
      this.lastSampled === undefined
        ? renderer.prompt({ system: this.ctx.system, user: this.ctx.user, tools: this.ctx.tools })
        : renderer.toolResults(
            this.lastSampled,
            // The calls handed back are the ParsedCalls this session returned; raw is kept as written.
            results.map(({ call, result }) => ({ call: { ...call, raw: call.raw ?? '' } as ParsedCall, result })),
          );
    for (const t of inserted) this.context.push(t);
    const promptTokens = this.context.length;
    const room = budgets.contextTokens - promptTokens;
    if (room <= 0) {
      return { text: '', calls: [], insertedTokens: inserted, sampledTokens: [], sampledLogprobs: [], promptTokens, completionTokens: 0, overBudget: 'context' };
    }
    const maxTokens = Math.min(budgets.maxTokensPerTurn, room);
    const params = {
      maxTokens,
      temperature: sampling.temperature,
      stop: renderer.stopTokens,
      ...(sampling.topP !== undefined ? { topP: sampling.topP } : {}),
      ...(sampling.topK !== undefined ? { topK: sampling.topK } : {}),
      ...(sampling.seed !== undefined ? { seed: sampling.seed + this.ctx.sample * 100_003 + promptTokens } : {}),
    };
    const [seq] = await sampler.sample([...this.context], params, 1);
    if (!seq) throw new Error(`sampler ${sampler.modelPath} returned no sequence`);
    if (seq.logprobs.length !== seq.tokens.length) throw new Error(`sampler ${sampler.modelPath} returned ${seq.tokens.length} tokens but ${seq.logprobs.length} logprobs`);
    for (const t of seq.tokens) this.context.push(t);
    this.lastSampled = seq.tokens;
    const parsed = renderer.parse(seq.tokens, { stopReason: seq.stopReason });
    const turn: AgentTurn = {
      text: parsed.text,
      calls: parsed.calls,
      insertedTokens: inserted,
      sampledTokens: seq.tokens,
      sampledLogprobs: seq.logprobs,
      promptTokens,
      completionTokens: seq.tokens.length,
    };
    // Stopped by length: the turn cap when it was the binding limit, else the context.
    if (seq.stopReason === 'length') turn.overBudget = maxTokens < budgets.maxTokensPerTurn ? 'context' : 'tokens';
    return turn;
  }
}
