/**
 * The invoice environment for runEpisode: the agent reads a customer email, calls the three
 * SQL tools, and ends the episode by writing its reply (a turn with no tool call). The reply
 * becomes the rollout's answer and is scored by the share of gold values it contains (reward.ts).
 */
import type { Task } from '../../tasks/task.js';
import { EpisodeBase } from '../../env/episode-base.js';
import type { Budgets, EndReason, Environment, ToolCall, ToolResult, ToolSpec } from '../../env/types.js';
import type { InvoiceTools } from './tools.js';

export const INVOICE_ENV_NAME = 'invoices';

/** Two chained calls and a reply need four turns; the rest is room for mistakes. */
export const INVOICE_BUDGETS: Budgets = { maxTurns: 8, maxTokensPerTurn: 2048, contextTokens: 16384 };

const SYSTEM_PROMPT = [
  'You are a customer-service agent at a subscription agency. Client organisations buy periodical subscriptions through us from many suppliers, and their staff and subscribers email us questions about subscriptions, suppliers and invoices.',
  '',
  'Answer each email from the database, using the tools:',
  '- GetOrderBySubscription(sub_no) when the email gives a subscription number; its order rows come newest delivery period first.',
  '- SearchSupplier(name, iban, bankgiro, postgiro, vat_number) when the email names a supplier or gives its bank details; it returns the supplier_id.',
  '- LookupOrderRows(supplier_id, ...) to find a supplier\'s order rows by delivery period, product or subscriber; supplier_id must come from SearchSupplier.',
  '',
  'Call one tool at a time and read its result before the next. When you have the answer, write your reply to the customer without calling a tool: that ends the conversation.',
  'Reply in the language of the email. Quote names, numbers, dates and amounts exactly as the tools return them.',
].join('\n');

export class InvoiceEnvironment implements Environment {
  readonly name = INVOICE_ENV_NAME;
  readonly tools: ToolSpec[];
  readonly defaultBudgets: Budgets;

  constructor(
    readonly invoiceTools: InvoiceTools,
    budgets: Budgets = INVOICE_BUDGETS,
  ) {
    this.tools = invoiceTools.specs;
    this.defaultBudgets = budgets;
  }

  systemPrompt(): string {
    return SYSTEM_PROMPT;
  }

  userPrompt(task: Task): string {
    return `Incoming email:\n\n${task.query}`;
  }

  start(_task: Task): InvoiceEpisode {
    return new InvoiceEpisode(this.invoiceTools);
  }
}

export class InvoiceEpisode extends EpisodeBase {
  constructor(private readonly tools: InvoiceTools) {
    super();
  }

  /** The reply to the customer is the episode's answer. */
  finalMessage(text: string): EndReason {
    return this.answerWith(text);
  }

  protected async handle(call: ToolCall): Promise<ToolResult> {
    return this.tools.call(call);
  }
}
