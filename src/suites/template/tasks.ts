import { InputError } from '../../errors.js';
import type { Task } from '../../tasks/task.js';

/**
 * The table the lookup tool reads: a capital per country. A real suite loads its world here (a
 * file, a database, a generator); this one is small enough to read.
 */
export const TEMPLATE_TABLE: ReadonlyMap<string, string> = new Map([
  ['France', 'Paris'],
  ['Japan', 'Tokyo'],
  ['Kenya', 'Nairobi'],
  ['Peru', 'Lima'],
  ['Norway', 'Oslo'],
  ['Canada', 'Ottawa'],
]);

/** One task per row: the question names the key, the gold answer is the value, the fact is the row. */
export const TEMPLATE_TASKS: readonly Task[] = [...TEMPLATE_TABLE].map(([country, capital], i) => ({
  id: `template-${i + 1}`,
  query: `What is the capital of ${country}?`,
  facts: [{ text: `The capital of ${country} is ${capital}.`, chunkIds: [country] }],
  answers: [capital],
  meta: { key: country, split: i % 3 === 2 ? 'eval' : 'train' },
}));

export const TEMPLATE_SPLITS = ['train', 'eval'] as const;

/** The tasks of a split (all of them without one); InputError for an unknown split. */
export function templateTasks(split?: string): Task[] {
  if (split === undefined || split === 'all') return [...TEMPLATE_TASKS];
  if (!(TEMPLATE_SPLITS as readonly string[]).includes(split)) throw new InputError(`split '${split}': env template has the splits ${TEMPLATE_SPLITS.join(', ')} (or all)`);
  return TEMPLATE_TASKS.filter((t) => t.meta?.['split'] === split);
}
