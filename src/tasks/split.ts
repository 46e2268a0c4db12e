import { createHash } from 'node:crypto';
import type { Task } from './task.js';

/** A task with the split it belongs to, as task-set files store it (one per line). */
export type SplitTask = Task & { split: string };

/** The task without its split field. */
export function withoutSplit(task: SplitTask): Task {
  const { split: _split, ...rest } = task;
  return rest;
}

/** The hash of every split of a list of tasks, by split name. */
export function splitHashes(tasks: SplitTask[]): Record<string, string> {
  const names = [...new Set(tasks.map((t) => t.split))];
  return Object.fromEntries(names.map((s) => [s, splitSha256(tasks.filter((t) => t.split === s).map(withoutSplit))]));
}

/**
 * A task in one fixed key order (meta keys sorted), so that the same task always serialises to the
 * same bytes: the split hashes below depend on it.
 */
export function canonicalTask(task: Task): Task {
  const out: Task = { id: task.id, query: task.query, facts: task.facts.map((f) => canonicalFact(f)) };
  if (task.answers !== undefined) out.answers = [...task.answers];
  if (task.meta !== undefined) out.meta = sortKeys(task.meta) as Record<string, unknown>;
  return out;
}

function canonicalFact(fact: Task['facts'][number]): Task['facts'][number] {
  const out: Task['facts'][number] = { text: fact.text, chunkIds: [...fact.chunkIds] };
  if (fact.isFinalAnswer !== undefined) out.isFinalAnswer = fact.isFinalAnswer;
  return out;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
  }
  return value;
}

/** The canonical JSONL of a list of tasks: one canonical task per line, in the given order. */
export function canonicalJsonl(tasks: Task[]): string {
  return tasks.map((t) => JSON.stringify(canonicalTask(t)) + '\n').join('');
}

/** sha256 (hex) of the canonical JSONL of a split: any change to which tasks it holds, or to a task, changes it. */
export function splitSha256(tasks: Task[]): string {
  return createHash('sha256').update(canonicalJsonl(tasks)).digest('hex');
}

/** A deterministic pseudo-random key for a task id under a seed: the same on every machine. */
export function seededKey(seed: string | number, id: string): string {
  return createHash('sha256').update(`${seed}\u0000${id}`).digest('hex');
}

/** The source a task is stratified by: `meta.source` when a loader set it, else one shared stratum. */
export function taskSource(task: Task): string {
  const source = task.meta?.['source'];
  return typeof source === 'string' ? source : '';
}

export interface SplitOptions {
  /** Share of each source held out for eval (default 0.2). */
  evalFraction?: number;
  /** Seed of the hash that orders tasks within a source (default 'sleuth-split-v1'). */
  seed?: string | number;
}

/**
 * Split tasks into `train` and `eval`, stratified by source: within each source, tasks are ordered
 * by a seeded hash of their id and the first round(n * evalFraction) go to eval. A task's split
 * depends only on its id, its source's size and the seed, never on file order, so adding a task to
 * one source leaves the other sources' splits alone. Tasks keep their input order in the output.
 */
export function splitTasks(tasks: Task[], options: SplitOptions = {}): SplitTask[] {
  const fraction = options.evalFraction ?? 0.2;
  const seed = options.seed ?? 'sleuth-split-v1';
  const bySource = groupBySource(tasks);
  const evalIds = new Set<string>();
  for (const group of bySource.values()) {
    const ordered = [...group].sort((a, b) => cmp(seededKey(seed, a.id), seededKey(seed, b.id)));
    for (const task of ordered.slice(0, Math.round(group.length * fraction))) evalIds.add(task.id);
  }
  return tasks.map((task) => ({ split: evalIds.has(task.id) ? 'eval' : 'train', ...canonicalTask(task) }));
}

/** Seed of the hash that halves a held-out split into dev and test. */
export const DEV_TEST_SEED = 'sleuth-dev-test-v1';

/** The held-out split's halves: `dev` for tuning and training curves, `test` for reported numbers only. */
export const HELD_OUT_HALVES = ['dev', 'test'] as const;

/**
 * Halve held-out tasks into dev and test, stratified by source: within each source, tasks are
 * ordered by a seeded hash of their id and the first round(n / 2) go to dev, the rest to test.
 * Like splitTasks, a task's half depends only on its id, its source's size and the seed; both
 * halves keep the input order. Tune on dev, report on test: nothing is ever chosen by its test score.
 */
export function devTestHalves(heldOut: Task[], seed: string | number = DEV_TEST_SEED): { dev: Task[]; test: Task[] } {
  const devIds = new Set<string>();
  for (const group of groupBySource(heldOut).values()) {
    const ordered = [...group].sort((a, b) => cmp(seededKey(seed, a.id), seededKey(seed, b.id)));
    for (const task of ordered.slice(0, Math.round(group.length / 2))) devIds.add(task.id);
  }
  return { dev: heldOut.filter((t) => devIds.has(t.id)), test: heldOut.filter((t) => !devIds.has(t.id)) };
}

/**
 * Choose n tasks at random but reproducibly, stratified by source: each source gets its share of n
 * (largest remainders break ties), and within a source the tasks with the smallest seeded hashes of
 * their ids are taken. Chosen tasks keep their input order.
 */
export function sampleTasks(tasks: Task[], n: number, seed: string | number): Task[] {
  const bySource = groupBySource(tasks);
  const quotas = [...bySource].map(([source, group]) => {
    const exact = (n * group.length) / tasks.length;
    return { source, group, take: Math.floor(exact), remainder: exact - Math.floor(exact) };
  });
  let left = n - quotas.reduce((sum, q) => sum + q.take, 0);
  for (const q of [...quotas].sort((a, b) => b.remainder - a.remainder || cmp(a.source, b.source))) {
    if (left === 0) break;
    q.take += 1;
    left -= 1;
  }
  const chosen = new Set<string>();
  for (const q of quotas) {
    const ordered = [...q.group].sort((a, b) => cmp(seededKey(seed, a.id), seededKey(seed, b.id)));
    for (const task of ordered.slice(0, q.take)) chosen.add(task.id);
  }
  return tasks.filter((t) => chosen.has(t.id));
}

/** The hop count a task was made with (`meta.hops`), else its number of facts. */
export function hopsOf(task: Task): number {
  return typeof task.meta?.['hops'] === 'number' ? task.meta['hops'] : task.facts.length;
}

export interface ComponentSplitOptions {
  seed: string;
  testFraction: number;
  devFraction: number;
  /** What links two tasks into one component (default: their gold chunk ids). */
  keys?: (task: Task) => readonly string[];
}

/** A task's gold chunk ids: tasks sharing one must not sit in different splits. */
export function goldChunkIds(task: Task): string[] {
  return task.facts.flatMap((f) => f.chunkIds);
}

/**
 * Deal tasks into train, dev and test without leaks: components of tasks that share a key (a gold
 * chunk, by default) stay together; within each hop count, components in seeded order fill test,
 * then dev, then train, by their share of that hop count's tasks. Input order does not matter.
 */
export function splitByComponents(tasks: Task[], options: ComponentSplitOptions): SplitTask[] {
  const keys = options.keys ?? goldChunkIds;
  const parent = tasks.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const owner = new Map<string, number>();
  tasks.forEach((t, i) => {
    for (const key of keys(t)) {
      const j = owner.get(key);
      if (j === undefined) owner.set(key, i);
      else parent[find(i)] = find(j);
    }
  });
  const components = new Map<number, Task[]>();
  tasks.forEach((t, i) => components.set(find(i), [...(components.get(find(i)) ?? []), t]));
  const split = new Map<string, string>();
  const byHops = new Map<number, Task[][]>();
  for (const c of components.values()) {
    const hops = Math.max(...c.map(hopsOf));
    byHops.set(hops, [...(byHops.get(hops) ?? []), c]);
  }
  for (const group of byHops.values()) {
    const total = group.reduce((n, c) => n + c.length, 0);
    group.sort((a, b) => cmp(seededKey(options.seed, a[0]!.id), seededKey(options.seed, b[0]!.id)));
    let dealt = 0;
    for (const c of group) {
      const name = dealt < options.testFraction * total ? 'test' : dealt < (options.testFraction + options.devFraction) * total ? 'dev' : 'train';
      for (const t of c) split.set(t.id, name);
      dealt += c.length;
    }
  }
  return tasks.map((t) => ({ ...t, split: split.get(t.id)! }));
}

function groupBySource(tasks: Task[]): Map<string, Task[]> {
  const bySource = new Map<string, Task[]>();
  for (const task of tasks) {
    const group = bySource.get(taskSource(task)) ?? [];
    group.push(task);
    bySource.set(taskSource(task), group);
  }
  return bySource;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
