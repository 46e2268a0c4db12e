import { InputError } from './errors.js';

/**
 * The deepest nesting sleuth takes in one JSON record. JSON.parse nests without limit, but
 * JSON.stringify and every recursive walk after it (the index's meta column, zod, the explorer)
 * overflow the stack somewhere past 2,000 levels; no corpus or task record needs more than a few.
 */
export const MAX_JSON_DEPTH = 256;

/** How deep `value` nests (a scalar is 0, `[]` is 1), counted without recursion, stopping past `limit`. */
export function jsonDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === 'object' && child !== null) stack.push([child, here]);
  }
  return deepest;
}

/**
 * JSON.parse, refusing a record nested deeper than MAX_JSON_DEPTH; `where` names the input in the
 * error. `wrappers`: levels of nesting around the records (1 for a JSON array of them), not counted.
 */
export function parseJsonRecord(text: string, where: string, wrappers = 0): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InputError(`${where}: not valid JSON (${(err as Error).message})`);
  }
  if (jsonDepth(value, MAX_JSON_DEPTH + wrappers) > MAX_JSON_DEPTH + wrappers) throw new InputError(`${where}: JSON nested more than ${MAX_JSON_DEPTH} levels deep`);
  return value;
}
