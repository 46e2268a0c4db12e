import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { writeFileAtomic } from '../files/atomic.js';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { parseRecord, readRecords } from './records.js';
import { canonicalTask, type SplitTask } from './split.js';
import { TaskSchema } from './task.js';

/** A line of a task-set file: a task and the split it belongs to. */
export const SplitTaskSchema = TaskSchema.extend({ split: z.string().min(1) });

/** The directory holding package.json, found from this module's own location (src/ or dist/src/). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('sleuth: cannot find the package root (no package.json above src/tasks)');
    dir = up;
  }
  return dir;
}

/** The embedded default task set, shipped in the package (built by scripts/build-embedded-tasks.ts). */
export function embeddedTasksPath(): string {
  return shippedTasksPath('default');
}

/**
 * The task sets that ship in the package, each a folder of data/ with tasks.jsonl.gz, SPLITS.md and
 * ATTRIBUTION.md, over the corpus files listed (indexed together; no chunk id in two of them).
 */
export const SHIPPED_TASK_SETS = {
  default: { folder: 'embedded', corpora: ['embedded'], origin: 'embedded: HotpotQA dev-500 + MuSiQue-100' },
  musique: {
    folder: 'musique',
    corpora: ['embedded', 'musique'],
    origin: 'embedded: MuSiQue-Ans multi-hop (dev-200, train-100 and more), pooled with the default corpus; CC BY 4.0 (MuSiQue), CC BY-SA 4.0 (pool)',
  },
} as const satisfies Record<string, { folder: string; corpora: readonly string[]; origin: string }>;

export type ShippedTaskSetName = keyof typeof SHIPPED_TASK_SETS;

export function isShippedTaskSet(name: string): name is ShippedTaskSetName {
  return Object.hasOwn(SHIPPED_TASK_SETS, name);
}

export function shippedTasksPath(name: ShippedTaskSetName): string {
  return join(packageRoot(), 'data', SHIPPED_TASK_SETS[name].folder, 'tasks.jsonl.gz');
}

/** The corpus files a shipped set's index is built from, in order. */
export function shippedCorpusPaths(name: ShippedTaskSetName): string[] {
  return SHIPPED_TASK_SETS[name].corpora.map((folder) => join(packageRoot(), 'data', folder, 'corpus.jsonl.gz'));
}

/** Where sleuth keeps its working state (indexes, task sets): `$SLEUTH_HOME`, else `.sleuth` in the current directory. */
export function sleuthHome(): string {
  return resolve(process.env['SLEUTH_HOME'] ?? '.sleuth');
}

/** Read a task-set file (`tasks.jsonl`, or `.jsonl.gz`): every line a task with its split, validated, ids unique. */
export function readSplitTasks(path: string): SplitTask[] {
  const seen = new Set<string>();
  const records = readRecords(path);
  if (records.length === 0) throw new InputError(`${path}: no tasks (the file is empty)`);
  return records.map((record) => {
    const task = parseRecord(SplitTaskSchema, record);
    if (seen.has(task.id)) throw new InputError(`${record.where}: duplicate task id '${task.id}'`);
    seen.add(task.id);
    return task;
  });
}

/** One line per task, split first, then the task in canonical key order. */
export function splitTasksJsonl(tasks: SplitTask[]): string {
  return tasks.map(({ split, ...task }) => JSON.stringify({ split, ...canonicalTask(task) }) + '\n').join('');
}

/** Write a task-set file through a temporary file and a rename, so a crash never leaves half of one. */
export function writeSplitTasks(path: string, tasks: SplitTask[]): void {
  const text = splitTasksJsonl(tasks);
  writeFileAtomic(path, path.endsWith('.gz') ? gzipSync(text, { level: 9 }) : text);
}
