import { parseArguments } from '../../env/args.js';
import { EpisodeBase, errorResult, okResult } from '../../env/episode-base.js';
import type { Budgets, EndReason, Environment, ToolCall, ToolResult } from '../../env/types.js';
import type { Task } from '../../tasks/task.js';
import { TEMPLATE_ARGS, TEMPLATE_TOOLS } from './tools.js';

/** One lookup and an answer need two turns; the rest is room for mistakes. */
export const TEMPLATE_BUDGETS: Budgets = { maxTurns: 6, maxTokensPerTurn: 512, contextTokens: 4096 };

/**
 * The environment: the agent looks keys up in a table and answers. The answer (the answer tool, or
 * a final message without a call) becomes the rollout's answer; the rows it looked up are its
 * trajectory (a row's key is its id).
 */
export class TemplateEnvironment implements Environment {
  readonly name = 'template';
  readonly tools = TEMPLATE_TOOLS;

  constructor(
    readonly table: ReadonlyMap<string, string>,
    readonly defaultBudgets: Budgets = TEMPLATE_BUDGETS,
  ) {}

  systemPrompt(): string {
    return 'Answer the question from the table. Look the country up with the lookup tool, then give only the answer with the answer tool.';
  }

  userPrompt(task: Task): string {
    return `Question: ${task.query}`;
  }

  start(_task: Task): TemplateEpisode {
    return new TemplateEpisode(this.table);
  }
}

export class TemplateEpisode extends EpisodeBase {
  constructor(private readonly table: ReadonlyMap<string, string>) {
    super();
  }

  /** A final message without a call is the answer. */
  finalMessage(text: string): EndReason {
    return this.answerWith(text);
  }

  protected async handle(call: ToolCall): Promise<ToolResult> {
    if (call.name === 'answer') {
      const args = parseArguments('answer', TEMPLATE_ARGS.answer, call.arguments);
      if (!args.ok) return errorResult('bad_arguments', args.error);
      this.answerWith(args.value.answer);
      return okResult({ answered: true });
    }
    if (call.name !== 'lookup') return errorResult('unknown_tool', `no tool named '${call.name}'; tools: ${TEMPLATE_TOOLS.map((t) => t.name).join(', ')}`);
    const args = parseArguments('lookup', TEMPLATE_ARGS.lookup, call.arguments);
    if (!args.ok) return errorResult('bad_arguments', args.error);
    const value = this.table.get(args.value.key);
    if (value === undefined) return errorResult('unknown_key', `the table has no row '${args.value.key}'`);
    return okResult({ key: args.value.key, value }, [args.value.key]);
  }
}
