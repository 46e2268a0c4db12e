import { noArgument } from '../../agent/registry.js';
import { answerSuite } from '../answer-suite.js';
import { openOwnTasks } from '../own-tasks.js';
import type { Suite } from '../types.js';
import { invoiceBaselineAgent, invoiceOracleAgent } from './agents.js';
import { InvoiceEnvironment } from './env.js';
import { invoiceBucket, invoiceParts } from './reward.js';
import { loadInvoiceSuite } from './index.js';
import { INVOICE_TOOL_SPECS } from './tools.js';

/**
 * The invoice suite: customer emails answered from a procedurally generated SQLite database with
 * three SQL tools; it brings its own tasks (the emails) and has no search index.
 */
export const invoiceSuite: Suite = answerSuite({
  kind: 'invoices',
  summary: 'the invoice emails: answer a customer from the database with three SQL tools',
  // The one rubric: the share of gold values in the reply.
  rubrics: { invoices: { gold_share: 1 } },
  defaultRubric: 'invoices',
  rewardParts: invoiceParts,
  buckets: ['correct', 'partial', 'wrong', 'no_answer'],
  bucket: invoiceBucket,
  success: (parts) => parts['pass'] === 1,
  headline: ['reward', 'gold_share', 'pass_rate'],
  tools: INVOICE_TOOL_SPECS,
  lookupTools: new Set(INVOICE_TOOL_SPECS.map((t) => t.name)),
  taskSets: false,
  agents: new Map([
    ['baseline', noArgument(invoiceBaselineAgent)],
    ['oracle', noArgument(invoiceOracleAgent)],
  ]),
  async open(options = {}) {
    const suite = loadInvoiceSuite();
    return openOwnTasks(invoiceSuite, options, (split) => suite.tasks(split ?? 'all'), (budgets) => (budgets ? new InvoiceEnvironment(suite.tools, budgets) : suite.env));
  },
});
