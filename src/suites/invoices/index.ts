/**
 * The invoice environment, second environment of sleuth: customer emails about
 * subscriptions, suppliers and invoices, answered from a procedurally generated SQLite database
 * with three SQL tools. Entry point for eval, SFT and training:
 *
 *   const suite = loadInvoiceSuite();                 // database + tools + 2,000 tasks (cached)
 *   const tasks = suite.tasks('validation');          // shared Task objects (200)
 *   runEpisode(agent, suite.env, tasks[0]);           // one episode
 *   invoiceParts(task, rollout)                       // { gold_share, pass, answered }
 */
import { devTestHalves } from '../../tasks/split.js';
import { InputError } from '../../errors.js';
import type { Task } from '../../tasks/task.js';
import { InvoiceEnvironment } from './env.js';
import { buildInvoiceDb, DEFAULT_SEED, type BuiltDb } from './generate.js';
import { generateInvoiceTasks, toTask, type InvoiceSplit, type InvoiceTask } from './tasks.js';
import { InvoiceTools } from './tools.js';

export { InvoiceEnvironment, InvoiceEpisode, INVOICE_BUDGETS, INVOICE_ENV_NAME } from './env.js';
export { invoiceBucket, invoiceParts, goldValuesOf } from './reward.js';
export { invoiceBaselineAgent, invoiceBaselinePlan, invoiceOracleAgent, invoiceOraclePlan, type InvoicePlan } from './agents.js';
export { buildInvoiceDb, contentHash, DEFAULT_SEED, WORLD_COUNTS } from './generate.js';
export { containsGoldValue, scoreReply, type ReplyScore } from './score.js';
export { generateInvoiceTasks, ONE_CALL_TYPES, runGoldSql, toTask, TASK_COUNTS, type InvoiceSplit, type InvoiceTask } from './tasks.js';
export { InvoiceTools, INVOICE_TOOL_SPECS } from './tools.js';

export interface InvoiceSuite {
  built: BuiltDb;
  tools: InvoiceTools;
  env: InvoiceEnvironment;
  /** All 2,000 tasks in index order (0–1799 train, 1800–1999 validation). */
  invoiceTasks: InvoiceTask[];
  /** Tasks of a split in the shared Task shape. `eval` is accepted for `validation`; `dev` and `test` are its halves. */
  tasks(split: string): Task[];
}

const SPLITS: Record<string, InvoiceSplit | 'all'> = { train: 'train', validation: 'validation', eval: 'validation', all: 'all' };

const cache = new Map<string, InvoiceSuite>();

/**
 * The database (in memory, or written to `dbPath`), its tools, the environment and the tasks,
 * for one seed. Cached per seed and path: building takes a fraction of a second, but every
 * episode of a run shares one suite.
 */
export function loadInvoiceSuite(options: { seed?: string; dbPath?: string } = {}): InvoiceSuite {
  const seed = options.seed ?? DEFAULT_SEED;
  const key = `${seed}\u0000${options.dbPath ?? ''}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const built = buildInvoiceDb({ seed, ...(options.dbPath ? { path: options.dbPath } : {}) });
  const tools = new InvoiceTools(built.db);
  const invoiceTasks = generateInvoiceTasks(built, tools);
  const shared = invoiceTasks.map(toTask);
  let halves: { dev: Task[]; test: Task[] } | undefined;
  const suite: InvoiceSuite = {
    built,
    tools,
    env: new InvoiceEnvironment(tools),
    invoiceTasks,
    tasks(split) {
      // dev and test are the halves of validation, as every task set's are of its eval split.
      if (split === 'dev' || split === 'test') {
        halves ??= devTestHalves(shared.filter((_, i) => invoiceTasks[i]!.split === 'validation'));
        return [...halves[split]];
      }
      const which = SPLITS[split];
      if (!which) throw new InputError(`--split ${split}: the invoice tasks have splits train, validation (or eval; its halves dev and test), all`);
      return which === 'all' ? shared : shared.filter((_, i) => invoiceTasks[i]!.split === which);
    },
  };
  cache.set(key, suite);
  return suite;
}
