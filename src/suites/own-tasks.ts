import type { Budgets, Environment } from '../env/types.js';
import { InputError } from '../errors.js';
import type { Task } from '../tasks/task.js';
import type { OpenedSuite, Suite, SuiteOpenOptions } from './types.js';

/**
 * Suite.open for a suite that brings its own tasks and has no search index (invoices, the
 * template): it refuses a task set and search workers, naming the suite, and has nothing to close.
 * `environment` builds the environment for the run's budgets (its own when none are given).
 */
export function openOwnTasks(suite: Suite, options: SuiteOpenOptions, tasks: (split?: string) => Task[], environment: (budgets?: Budgets) => Environment): OpenedSuite {
  if (options.tasks !== undefined) throw new InputError(`--tasks ${options.tasks}: env ${suite.kind} has its own tasks; leave --tasks out`);
  return {
    suite,
    tasksName: suite.kind,
    indexDir: null,
    tasks,
    async environment(o = {}) {
      if ((o.searchWorkers ?? 0) > 0) throw new InputError(`--search-workers is for environments with a search index (env ${suite.kind} has none)`);
      return { env: environment(o.budgets), close: async () => {} };
    },
  };
}
