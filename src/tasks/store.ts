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
  return join(packageRoot(), 'data', 'embedded', 'tasks.jsonl.gz');
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
