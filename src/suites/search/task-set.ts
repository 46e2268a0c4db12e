import type { Environment } from '../../env/types.js';
import { openIndex } from '../../search/index.js';
import { loadTaskSet } from '../../tasks/registry.js';
import type { Task } from '../../tasks/task.js';
import type { EnvironmentOptions, OpenedSuite, Suite, SuiteOpenOptions } from '../types.js';
import type { SearchBackend } from './env.js';
import { searchBackend } from './search-workers.js';

/**
 * Open a suite whose tasks are a task set over a corpus with a search index (search, qa): the task
 * set (default: the embedded `default`), its index as the corpus, and environments over the index or
 * over search workers; or a task set the caller loaded (`options.taskSet`). `checkTasks` refuses tasks of a split the suite cannot score.
 */
export async function openTaskSetSuite(
  suite: Suite,
  options: SuiteOpenOptions,
  makeEnvironment: (backend: SearchBackend, options: EnvironmentOptions) => Environment,
  checkTasks: (tasks: readonly Task[], where: string) => void = () => {},
): Promise<OpenedSuite> {
  const tasksName = options.taskSet?.name ?? options.tasks ?? 'default';
  const set = options.taskSet ?? (await loadTaskSet(tasksName));
  const index = await openIndex(set.indexDir);
  return {
    suite,
    tasksName,
    indexDir: set.indexDir,
    corpus: index,
    tasks(split) {
      const tasks = set.tasks(split);
      checkTasks(tasks, split === undefined ? tasksName : `${tasksName}/${split}`);
      return tasks;
    },
    async environment(o = {}) {
      const { backend, close } = await searchBackend(set.indexDir, index, o.searchWorkers ?? 0);
      return { env: makeEnvironment(backend, o), close };
    },
  };
}
