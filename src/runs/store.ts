import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { writeJsonAtomic } from '../files/atomic.js';
import type { Rollout } from '../agent/rollout.js';
import { appendJsonl } from './jsonl.js';
import { RUN_FILES, runPath } from './layout.js';

/**
 * Reading and writing run directories (layout.ts). JSONL files are only appended; config.json is
 * written once, summary.json is replaced whole through a temporary file and a rename, so a crash
 * at any moment leaves every earlier record readable.
 */

export const RunKindSchema = z.enum(['eval', 'sft', 'train']);
export const RunConfigSchema = z.object({ kind: RunKindSchema }).passthrough();
export type RunConfig = z.infer<typeof RunConfigSchema>;


function readJsonFile(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(`${what} ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError(`${what} ${path}: not valid JSON: ${(err as Error).message}`);
  }
}

export function isRunDir(dir: string): boolean {
  return existsSync(runPath(dir, 'config'));
}

export function readRunConfig(dir: string): RunConfig {
  const path = runPath(dir, 'config');
  const r = RunConfigSchema.safeParse(readJsonFile(path, 'run config'));
  if (!r.success) throw new InputError(`run config ${path}: ${r.error.issues[0]!.path.join('.')}: ${r.error.issues[0]!.message}`);
  return r.data;
}

/**
 * Start a run directory, or reopen one to resume. A directory that already holds a run must hold
 * the same run: every key in `identity` must match, or the caller would mix two experiments'
 * rollouts in one file. Returns whether an existing run was reopened.
 */
export function openRunDir(dir: string, config: RunConfig, identity: readonly string[]): { resumed: boolean } {
  if (isRunDir(dir)) {
    const old = readRunConfig(dir);
    for (const key of ['kind', ...identity]) {
      const was = JSON.stringify(old[key]);
      const now = JSON.stringify(config[key]);
      if (was !== now) {
        throw new InputError(`--out ${dir} already holds a different run (${key} was ${was ?? 'unset'}, now ${now ?? 'unset'}): choose another --out to start a new run, or repeat the original command to resume`);
      }
    }
    sealJsonlTail(runPath(dir, 'rollouts'));
    sealJsonlTail(runPath(dir, 'metrics'));
    return { resumed: true };
  }
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new InputError(`--out ${dir} is not a directory`);
  // A run only adds files, but it must not mix them into a directory of someone else's files.
  // (A temporary left by a run killed before its config.json was in place is its own, not someone else's.)
  if (existsSync(dir) && readdirSync(dir).some((name) => !/^\..+\.\d+\.tmp$/.test(name))) throw new InputError(`--out ${dir} holds files sleuth did not write (no run ${RUN_FILES.config}): choose an empty or new directory`);
  mkdirSync(dir, { recursive: true });
  writeJsonAtomic(runPath(dir, 'config'), config);
  return { resumed: false };
}

/**
 * Refuse to add to a run in `dir` whose config.json records, under `key`, another SHA-256 of split
 * `split`'s tasks (splitSha256) than `sha256`, theirs now: the task set changed since, and its old
 * rollouts and the new ones would be scored against different tasks under one name. A run from
 * before the hash was recorded (no `key`) is let be.
 */
export function checkSplitHash(dir: string, key: string, split: string | undefined, sha256: string): void {
  if (!isRunDir(dir)) return;
  const recorded = readRunConfig(dir)[key];
  if (typeof recorded === 'string' && recorded !== sha256) {
    const tasks = split === undefined ? 'its tasks' : `split '${split}'`;
    throw new InputError(`${dir} holds a run over ${tasks} with SHA-256 ${recorded}, but ${tasks} now hashes to ${sha256}: the task set changed since; start a new run in another directory to score the tasks as they are now`);
  }
}

/**
 * End a JSONL file cut mid-line by a crash with a newline, so that the next append starts a line
 * of its own instead of gluing a good record onto the broken one (both would then be lost).
 */
export function sealJsonlTail(path: string): void {
  if (!existsSync(path)) return;
  const size = statSync(path).size;
  if (size === 0) return;
  const fd = openSync(path, 'r');
  try {
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] !== 0x0a) appendFileSync(path, '\n');
  } finally {
    closeSync(fd);
  }
}

/** The fields every reader relies on; the rest of a Rollout passes through unchecked. */
const RolloutLineSchema = z
  .object({
    version: z.literal(1),
    id: z.string(),
    taskId: z.string(),
    sample: z.number().int().nonnegative(),
    turns: z.array(z.unknown()),
    curated: z.array(z.string()),
    trajectory: z.array(z.string()),
    endReason: z.string(),
    promptTokens: z.number(),
    completionTokens: z.number(),
  })
  .passthrough();

export function appendRollouts(dir: string, rollouts: readonly Rollout[]): void {
  appendJsonl(runPath(dir, 'rollouts'), [...rollouts]);
}

export interface RolloutsRead {
  rollouts: Rollout[];
  /** Lines that were not rollouts: a half-written last line after a crash, or corruption. */
  skipped: { line: number; reason: string }[];
}

export function readRollouts(dir: string): RolloutsRead {
  const path = runPath(dir, 'rollouts');
  if (!existsSync(path)) return { rollouts: [], skipped: [] };
  const rollouts: Rollout[] = [];
  const skipped: { line: number; reason: string }[] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (text.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        skipped.push({ line: i + 1, reason: (err as Error).message });
        return;
      }
      const r = RolloutLineSchema.safeParse(value);
      if (r.success) rollouts.push(r.data as unknown as Rollout);
      else skipped.push({ line: i + 1, reason: `not a rollout: ${r.error.issues[0]!.path.join('.')}: ${r.error.issues[0]!.message}` });
    });
  return { rollouts, skipped };
}

/** The key that identifies one rollout of an eval: task and sample index. */
export function rolloutKey(rollout: Pick<Rollout, 'taskId' | 'sample'>): string {
  return `${rollout.taskId}\u0000${rollout.sample}`;
}

/**
 * The rollout that counts for each (task, sample): the last finished one, else the last one.
 * A re-run appends a new record for an errored sample; the old line stays (append-only) but is
 * superseded here.
 */
export function latestRollouts(rollouts: readonly Rollout[]): Rollout[] {
  const byKey = new Map<string, Rollout>();
  for (const r of rollouts) {
    const key = rolloutKey(r);
    const prev = byKey.get(key);
    if (!prev || prev.endReason === 'error' || r.endReason !== 'error') byKey.set(key, r);
  }
  return [...byKey.values()];
}

/** Keys of the samples that finished (did not end in an error): a resumed eval skips these. */
export function finishedKeys(rollouts: readonly Rollout[]): Set<string> {
  return new Set(rollouts.filter((r) => r.endReason !== 'error').map(rolloutKey));
}

export function writeSummary(dir: string, summary: Record<string, unknown>): void {
  writeJsonAtomic(runPath(dir, 'summary'), summary);
}

export function readSummary(dir: string): Record<string, unknown> {
  const v = readJsonFile(runPath(dir, 'summary'), 'run summary');
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InputError(`run summary ${runPath(dir, 'summary')}: not a JSON object`);
  return v as Record<string, unknown>;
}

/** Append one metrics record ({step, kind, ...}). */
export function appendMetrics(dir: string, records: readonly Record<string, unknown>[]): void {
  appendJsonl(runPath(dir, 'metrics'), [...records]);
}
