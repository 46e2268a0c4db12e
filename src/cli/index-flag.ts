import { existsSync } from 'node:fs';
import { InputError } from '../errors.js';
import { defaultIndexDir } from '../search/index.js';
import { ensureShippedIndex, readTaskSet } from '../tasks/registry.js';
import type { ShippedTaskSetName } from '../tasks/store.js';

/** The flags `search`, `grep` and `read` share to say which index they read. */
export const INDEX_FLAGS = { index: { type: 'string' }, tasks: { type: 'string' } } as const;

/** Their help lines, with the descriptions starting at `column` to line up with the command's own. */
export function indexFlagsUsage(column = 11): string {
  const indent = ' '.repeat(column + 2);
  return [
    `  ${'--index'.padEnd(column)}index directory (default ${defaultIndexDir()})`,
    `  ${'--tasks'.padEnd(column)}the index of task set NAME instead: .sleuth/tasks/NAME/index for a set made`,
    `${indent}by \`sleuth tasks import|subset\`, .sleuth/index/NAME for a shipped one (default, musique)`,
  ].join('\n');
}

/**
 * The index directory the flags name. A task set is looked up as every command that takes
 * --tasks looks it up, so an unknown name is an error naming the known ones; a shipped set's index
 * is built on first use, as eval builds it.
 */
export async function indexDirOf(values: { index?: string; tasks?: string }): Promise<string> {
  if (values.tasks === undefined) return values.index ?? defaultIndexDir();
  if (values.index !== undefined) throw new InputError(`--index ${values.index} and --tasks ${values.tasks} both name an index: give one of them`);
  const set = readTaskSet(values.tasks);
  const dir = set.indexDir ?? (await ensureShippedIndex(set.name as ShippedTaskSetName));
  if (!existsSync(dir)) throw new InputError(`task set '${set.name}': its index ${dir} is missing (make the set again with \`sleuth tasks import\` or \`tasks subset\`)`);
  return dir;
}
