import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { makeTempSibling, replaceDir, type OwnedDirKind } from '../files/owned-dir.js';
import { coverageReport, requireCoverage, type CoverageReport } from './check.js';
import { ensureCorpusIndex, ensureDefaultIndex, openIndex } from '../search/index.js';
import { describeZodError } from './records.js';
import { devTestHalves, HELD_OUT_HALVES, splitHashes, withoutSplit, type SplitTask } from './split.js';
import { isShippedTaskSet, readSplitTasks, writeSplitTasks, shippedCorpusPaths, shippedTasksPath, sleuthHome, SHIPPED_TASK_SETS, type ShippedTaskSetName } from './store.js';
import type { Task } from './task.js';

/** A named set of tasks with splits, and the index their fact chunk ids point into. */
export interface TaskSet {
  name: string;
  /** The tasks of one split, or all of them, in file order. */
  tasks(split?: string): Task[];
  splits: string[];
  indexDir: string;
}

export interface TaskSetOptions {
  /** sleuth's working directory (default $SLEUTH_HOME or ./.sleuth): task sets live in its tasks/ folder. */
  home?: string;
}

export interface LoadTaskSetOptions extends TaskSetOptions {
  /** Check that every fact has a chunk id in the index (default true). */
  validate?: boolean;
  /** Load even when some facts have none of their chunks in the index (they are still reported by `tasks show`). */
  allowMissing?: boolean;
}

/** The files of a task-set directory made by `tasks subset` or `tasks import`. */
export const TASKSET_FILES = { tasks: 'tasks.jsonl', manifest: 'taskset.json', index: 'index' } as const;

/** taskset.json: how the set was made, so that a run can say what it ran on. */
export const TaskSetManifest = z.object({
  name: z.string(),
  createdAt: z.string(),
  /** What it was made from: `subset of default`, `import of hotpotqa ...`. */
  origin: z.string(),
  options: z.record(z.string(), z.unknown()).default({}),
  counts: z.record(z.string(), z.number()),
  sha256: z.record(z.string(), z.string()),
  chunks: z.number(),
});
export type TaskSetManifest = z.infer<typeof TaskSetManifest>;

/** A task-set directory is recognised by its taskset.json. */
export const TASKSET_DIR: OwnedDirKind = {
  what: 'task set',
  manifest: TASKSET_FILES.manifest,
  recognise: (m) => TaskSetManifest.safeParse(m).success,
};

/** A task set's tasks as stored, and where its index is (for `default`, where it will be built). */
export interface StoredTaskSet {
  name: string;
  /** The tasks file, or the directory of the set. */
  location: string;
  tasks: SplitTask[];
  /** The index directory; undefined for a shipped set until ensureShippedIndex has run. */
  indexDir: string | undefined;
  manifest?: TaskSetManifest;
}

/** Names a new task set may have: a file-name-safe word that is not `default`. */
export function checkNewTaskSetName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/u.test(name)) {
    throw new InputError(`--name '${name}': a task set name is letters, digits, '.', '_' or '-' (starting with a letter or digit)`);
  }
  if (isShippedTaskSet(name)) throw new InputError(`--name '${name}': that name is a task set shipped with sleuth`);
}

/** The directory a task-set name or path stands for (`NAME` lives in HOME/tasks/NAME; a path is itself). */
export function taskSetDir(nameOrPath: string, options: TaskSetOptions = {}): string {
  const looksLikePath = nameOrPath.includes('/') || nameOrPath.includes('\\') || nameOrPath.startsWith('.') || isAbsolute(nameOrPath);
  return looksLikePath ? resolve(nameOrPath) : join(options.home ?? sleuthHome(), 'tasks', nameOrPath);
}

/** Read a task set's tasks without touching its index: what `tasks list` and `tasks show` start from. */
export function readTaskSet(nameOrPath: string, options: TaskSetOptions = {}): StoredTaskSet {
  if (isShippedTaskSet(nameOrPath)) {
    const path = shippedTasksPath(nameOrPath);
    return { name: nameOrPath, location: path, tasks: readSplitTasks(path), indexDir: undefined };
  }
  const dir = taskSetDir(nameOrPath, options);
  const tasksPath = join(dir, TASKSET_FILES.tasks);
  if (!existsSync(tasksPath)) {
    const known = [...Object.keys(SHIPPED_TASK_SETS), ...listTaskSetNames(options)].join(', ');
    throw new InputError(`unknown task set '${nameOrPath}': ${tasksPath} does not exist (known: ${known})`);
  }
  const manifestPath = join(dir, TASKSET_FILES.manifest);
  let manifest: TaskSetManifest | undefined;
  if (existsSync(manifestPath)) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(manifestPath, 'utf8'));
    } catch (err) {
      throw new InputError(`${manifestPath}: not valid JSON (${(err as Error).message})`);
    }
    const parsed = TaskSetManifest.safeParse(json);
    if (!parsed.success) throw new InputError(`${manifestPath}: not a task-set manifest (${describeZodError(parsed.error)})`);
    manifest = parsed.data;
  }
  const name = manifest?.name ?? basename(dir);
  return { name, location: dir, tasks: readSplitTasks(tasksPath), indexDir: join(dir, TASKSET_FILES.index), ...(manifest ? { manifest } : {}) };
}

/** What a new task set is, besides its index: what taskset.json records, and its tasks. */
export interface NewTaskSet {
  name: string;
  origin: string;
  options: Record<string, unknown>;
  tasks: SplitTask[];
}

/**
 * Write a task set into `dir`: `fillIndex` builds its index in the folder it is given and returns
 * the number of chunks; the tasks and taskset.json go beside it. All of it is built in a temporary
 * sibling and renamed into place, so an error or a crash never leaves half a set under the name.
 */
export async function writeTaskSetDir(dir: string, set: NewTaskSet, fillIndex: (indexDir: string) => Promise<number>): Promise<TaskSetManifest> {
  const tmp = makeTempSibling(dir);
  try {
    const chunks = await fillIndex(join(tmp, TASKSET_FILES.index));
    writeSplitTasks(join(tmp, TASKSET_FILES.tasks), set.tasks);
    const manifest: TaskSetManifest = {
      name: set.name,
      createdAt: new Date().toISOString(),
      origin: set.origin,
      options: set.options,
      counts: splitCounts(set.tasks),
      sha256: splitHashes(set.tasks),
      chunks,
    };
    writeFileSync(join(tmp, TASKSET_FILES.manifest), JSON.stringify(manifest, null, 2) + '\n');
    replaceDir(tmp, dir);
    return manifest;
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** Names of the task sets under HOME/tasks (not `default`), sorted. */
export function listTaskSetNames(options: TaskSetOptions = {}): string[] {
  const root = join(options.home ?? sleuthHome(), 'tasks');
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && existsSync(join(root, e.name, TASKSET_FILES.tasks)))
    .map((e) => e.name)
    .sort();
}

/**
 * The index of a shipped task set, built on first use: `default`'s in .sleuth/index/default, the
 * others' in .sleuth/index/NAME (relative to the working directory, like the default's).
 */
export async function ensureShippedIndex(name: ShippedTaskSetName): Promise<string> {
  if (name === 'default') return ensureDefaultIndex();
  return ensureCorpusIndex(shippedCorpusPaths(name), join('.sleuth', 'index', name));
}

/** Splits in a stable order: train, eval, then any others alphabetically. */
export function splitNames(tasks: SplitTask[]): string[] {
  const rank = (s: string) => (s === 'train' ? 0 : s === 'eval' ? 1 : 2);
  return [...new Set(tasks.map((t) => t.split))].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** How many tasks each split holds. */
export function splitCounts(tasks: SplitTask[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of splitNames(tasks)) counts[s] = tasks.filter((t) => t.split === s).length;
  return counts;
}

/** Facts of the given tasks whose chunks the index lacks (opens the index). */
export async function taskSetCoverage(tasks: Task[], indexDir: string): Promise<CoverageReport> {
  const searcher = await openIndex(indexDir);
  return coverageReport(tasks, (id) => searcher.has(id));
}

/**
 * Load a task set by name (`default`, a set made by `tasks subset`/`tasks import`) or by path.
 * `default` builds its index on first use. Unless `validate: false`, facts with none of their chunk
 * ids in the index stop the load with an InputError (count and examples), or with `allowMissing`
 * are let through.
 */
export async function loadTaskSet(nameOrPath: string, options: LoadTaskSetOptions = {}): Promise<TaskSet> {
  const stored = readTaskSet(nameOrPath, options);
  const indexDir = stored.indexDir ?? (await ensureShippedIndex(stored.name as ShippedTaskSetName));
  if (!existsSync(indexDir)) throw new InputError(`task set '${stored.name}': its index ${indexDir} is missing (rebuild the set)`);
  if (options.validate ?? true) {
    requireCoverage(await taskSetCoverage(stored.tasks, indexDir), `task set '${stored.name}'`, options.allowMissing ?? false);
  }
  return taskSetOf(stored.name, stored.tasks, indexDir);
}

/**
 * A TaskSet over tasks already in memory. A set with an `eval` split and no split of its own named
 * `dev` or `test` also offers those two: the halves of eval (devTestHalves), so that every set can
 * be tuned on one half and reported on the other.
 */
export function taskSetOf(name: string, tasks: SplitTask[], indexDir: string): TaskSet {
  const stored = splitNames(tasks);
  const derived = stored.includes('eval') && !HELD_OUT_HALVES.some((h) => stored.includes(h));
  const splits = derived ? [...stored, ...HELD_OUT_HALVES] : stored;
  let halves: { dev: Task[]; test: Task[] } | undefined;
  return {
    name,
    splits,
    indexDir,
    tasks(split?: string): Task[] {
      if (split !== undefined && !splits.includes(split)) {
        throw new InputError(`task set '${name}' has no split '${split}' (splits: ${splits.join(', ')})`);
      }
      if (derived && (split === 'dev' || split === 'test')) {
        halves ??= devTestHalves(tasks.filter((t) => t.split === 'eval').map(withoutSplit));
        return [...halves[split]];
      }
      return tasks.filter((t) => split === undefined || t.split === split).map(withoutSplit);
    },
  };
}
