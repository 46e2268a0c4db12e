import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The shared Harmony vectors (../shared/data/harmony next to the repository), newline-normalised, trailing whitespace trimmed. */
export const HARMONY_VECTORS = fileURLToPath(new URL('../../../shared/data/harmony/', import.meta.url));

export function harmonyVector(name: string): string {
  return readFileSync(`${HARMONY_VECTORS}${name}`, 'utf8').replace(/\r\n/g, '\n').trimEnd();
}
