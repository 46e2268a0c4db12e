import type { Agent } from '../../agent/types.js';
import { InputError } from '../../errors.js';
import { F4, type Rubric } from '../../reward/rubric.js';
import type { Suite, SuiteAgentFactory } from '../types.js';
import { invoiceBaselineAgent, invoiceOracleAgent } from './agents.js';
import { InvoiceEnvironment } from './env.js';
import { invoiceBucket, invoiceParts } from './reward.js';
import { loadInvoiceSuite } from './index.js';
import { INVOICE_TOOL_SPECS } from './tools.js';

/** The one rubric: the share of gold values in the reply. */
const RUBRICS: Rubric[] = [{ name: 'invoices', kind: 'invoices', beta: F4, weights: { gold_share: 1 } }];

const scripted = (make: (spec: string) => Agent): SuiteAgentFactory => (arg, spec) => {
  if (arg !== undefined) throw new InputError(`agent '${spec}': the invoice ${spec.split(':')[0]} takes no argument`);
  return make(spec);
};

/**
 * The invoice suite: customer emails answered from a procedurally generated SQLite database with
 * three SQL tools; it brings its own tasks (the emails) and has no search index.
 */
export const invoiceSuite: Suite = {
  kind: 'invoices',
  summary: 'the invoice emails: answer a customer from the database with three SQL tools',
  rubrics: RUBRICS,
  defaultRubric: 'invoices',
  rewardParts: (task, rollout) => invoiceParts(task, rollout),
  usesBeta: false,
  result: 'answer',
  buckets: ['correct', 'partial', 'wrong', 'no_answer'],
  bucket: (parts) => invoiceBucket(parts),
  success: (parts) => parts['pass'] === 1,
  headline: ['reward', 'gold_share', 'pass_rate'],
  tools: INVOICE_TOOL_SPECS,
  lookupTools: new Set(INVOICE_TOOL_SPECS.map((t) => t.name)),
  taskSets: false,
  agents: new Map([
    ['baseline', scripted(invoiceBaselineAgent)],
    ['oracle', scripted(invoiceOracleAgent)],
  ]),
  async open() {
    const suite = loadInvoiceSuite();
    return {
      suite: invoiceSuite,
      tasksName: 'invoices',
      indexDir: null,
      tasks: (split) => suite.tasks(split ?? 'all'),
      async environment(o = {}) {
        if ((o.searchWorkers ?? 0) > 0) throw new InputError('--search-workers is for the search and qa environments (the invoice environment has no search index)');
        return { env: o.budgets ? new InvoiceEnvironment(suite.tools, o.budgets) : suite.env, close: async () => {} };
      },
    };
  },
};
