import type { Sampler } from '../protocol/sampler.js';
import type { Budgets } from '../env/types.js';
import type { ParsedCall, Renderer } from '../protocol/types.js';
import { canWriteTurns, writeTurnTokens } from '../protocol/write-turn.js';
import type { Agent, AgentCall, AgentContext, AgentSession, AgentTurn, ToolExchange } from './types.js';

export interface TokenSampling {
  temperature: number;
  topP?: number;
  topK?: number;
  /** Base seed; each sample of a task adds its index, so N samples differ but reruns repeat. */
  seed?: number;
  /**
   * Calls the harness writes as the episode's first turn, before the model writes anything (e.g.
   * a search for the question: openingSearch). Their tokens are inserted, not sampled, so they
   * carry no loss; the model starts from their results.
   */
  opening?: (ctx: AgentContext) => { name: string; arguments: unknown }[];
}

/**
 * An opening turn that searches the whole question for its top k hits: a model too small to copy
 * the question into a query (sleuth's local model) still starts from the question's own results,
 * and learns what to curate and what to search next.
 */
export function openingSearch(k: number): (ctx: AgentContext) => { name: string; arguments: unknown }[] {
  return (ctx) => [{ name: 'bm25_search', arguments: { query: ctx.task.query, k } }];
}

/**
 * A token-level agent: a Renderer turns the episode into tokens and back, a Sampler writes the
 * model's turns. The token stream is only ever appended to (prompt, then per turn the inserted
 * tool-result tokens and the sampled tokens), so the rollout's tokens are exactly what the model saw.
 * It enforces the per-turn token budget and the context budget.
 */
export class TokenAgent implements Agent {
  /** See Agent.budgets: set by whoever knows the model (the local agent, from its checkpoint). */
  budgets?: Partial<Budgets>;
  contextLimit?: number;

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
  /** The agent's renderer with this episode's own state (e.g. id aliases). */
  private readonly renderer: Renderer;

  constructor(
    private readonly agent: TokenAgent,
    private readonly ctx: AgentContext,
  ) {
    this.renderer = agent.renderer.forEpisode?.() ?? agent.renderer;
  }

  async next(results: ToolExchange[]): Promise<AgentTurn> {
    const { sampler, sampling } = this.agent;
    const renderer = this.renderer;
    const { budgets } = this.ctx;
    const inserted =
      this.lastSampled === undefined
        ? renderer.prompt({ system: this.ctx.system, user: this.ctx.user, tools: this.ctx.tools })
        : renderer.toolResults(
            this.lastSampled,
            // The calls handed back are the ParsedCalls this session returned; raw is kept as written.
            results.map(({ call, result }) => ({ call: { ...call, raw: call.raw ?? '' } as ParsedCall, result })),
          );
    const opening = this.lastSampled === undefined ? this.agent.sampling.opening?.(this.ctx) : undefined;
    if (opening?.length) {
      // The harness writes the first turn; it is recorded as inserted tokens with no sampled ones.
      const written = writeTurnTokens(renderer, { calls: opening });
      const all = [...inserted, ...written];
      for (const t of all) this.context.push(t);
      this.lastSampled = written;
      const parsed = renderer.parse(written, { stopReason: 'stop' });
      return { text: '', calls: parsed.calls, insertedTokens: all, sampledTokens: [], sampledLogprobs: [], promptTokens: inserted.length, completionTokens: 0 };
    }
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
      ...this.seedFor(promptTokens),
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

  /**
   * A turn's seed: the episode's own seed when the caller fixed one, else the agent's base seed and
   * the sample index; the prompt length makes each turn of the episode draw differently.
   */
  private seedFor(promptTokens: number): { seed?: number } {
    if (this.ctx.seed !== undefined) return { seed: (this.ctx.seed + promptTokens) % 2 ** 31 };
    const base = this.agent.sampling.seed;
    return base !== undefined ? { seed: base + this.ctx.sample * 100_003 + promptTokens } : {};
  }
}

/**
 * A message-level agent (scripted, or a chat API teacher) written out as tokens by a Renderer:
 * each of its turns becomes the tokens the model family would have written (Renderer.writeTurn),
 * inside the same append-only stream a TokenAgent builds. This is how a teacher's episodes become
 * SFT data for a model it is not. The calls run are those parsed back from the written tokens, so
 * the record and the tokens agree; logprobs are 0 (no sampler wrote them). A format that allows one
 * call per turn (Harmony stops sampling at <|call|>) gets the teacher's turn as several turns, and
 * the teacher sees all their results together, as if it had made them at once.
 */
export class RenderedAgent implements Agent {
  readonly spec: string;

  constructor(
    readonly inner: Agent,
    readonly renderer: Renderer,
  ) {
    if (!canWriteTurns(renderer)) throw new Error(`renderer ${renderer.name} cannot write turns (no writeTurn)`);
    this.spec = inner.spec;
  }

  async start(ctx: AgentContext): Promise<AgentSession> {
    const inner = await this.inner.start(ctx);
    const renderer = this.renderer.forEpisode?.() ?? this.renderer;
    const write = (text: string, calls: AgentCall[]) =>
      writeTurnTokens(renderer, { text, calls: calls.map((c) => ({ name: c.name, arguments: typeof c.arguments === 'string' ? safeJson(c.arguments) : c.arguments })) });
    const context: number[] = [];
    let lastSampled: number[] | undefined;
    // The teacher's current turn: calls not yet written, and results of those already run.
    let queue: AgentCall[] = [];
    let done: ToolExchange[] = [];
    let written: AgentCall[] = [];
    return {
      async next(results: ToolExchange[]): Promise<AgentTurn> {
        const inserted =
          lastSampled === undefined
            ? renderer.prompt({ system: ctx.system, user: ctx.user, tools: ctx.tools })
            : renderer.toolResults(lastSampled, results.map(({ call, result }) => ({ call: { ...call, raw: call.raw ?? '' } as ParsedCall, result })));
        for (const t of inserted) context.push(t);
        const promptTokens = context.length;
        // The teacher sees its own calls back (matched by position) with the environment's results.
        results.forEach((r, i) => done.push({ call: written[i] ?? r.call, result: r.result }));
        let text = '';
        if (queue.length === 0) {
          const turn = await inner.next(done);
          done = [];
          text = turn.text;
          queue = [...turn.calls];
        }
        let batch = queue;
        let sampled: number[];
        try {
          sampled = write(text, batch);
        } catch {
          batch = queue.slice(0, 1);
          sampled = write(text, batch);
        }
        queue = queue.slice(batch.length);
        written = batch;
        for (const t of sampled) context.push(t);
        lastSampled = sampled;
        const parsed = renderer.parse(sampled, { stopReason: 'stop' });
        const out: AgentTurn = {
          text: parsed.text,
          calls: parsed.calls,
          insertedTokens: inserted,
          sampledTokens: sampled,
          sampledLogprobs: sampled.map(() => 0),
          promptTokens,
          completionTokens: sampled.length,
        };
        if (sampled.length > ctx.budgets.maxTokensPerTurn) out.overBudget = 'tokens';
        else if (context.length > ctx.budgets.contextTokens) out.overBudget = 'context';
        return out;
      },
    };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
