import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The shared Harmony vectors (a copy of ../shared/data/harmony in test/fixtures/shared), newline-normalised, trailing whitespace trimmed. */
export const HARMONY_VECTORS = fileURLToPath(new URL('../fixtures/shared/harmony/', import.meta.url));

export function harmonyVector(name: string): string {
  return readFileSync(`${HARMONY_VECTORS}${name}`, 'utf8').replace(/\r\n/g, '\n').trimEnd();
}
