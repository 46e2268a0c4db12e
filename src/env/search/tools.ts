import { z } from 'zod';
import type { ToolSpec } from '../types.js';

/** Most hits one bm25_search or grep_corpus call may ask for. */
export const MAX_K = 50;

const k = z.number().int().min(1).max(MAX_K).optional();
const ids = z.array(z.string().min(1)).min(1).max(100);

/** Argument schemas, checked on every call (unknown keys are ignored, wrong types are errors). */
export const ARGS = {
  bm25_search: z.object({ query: z.string().trim().min(1, 'query must not be empty'), k }),
  grep_corpus: z.object({ pattern: z.string().min(1, 'pattern must not be empty'), k }),
  read_document: z.object({ id: z.string().min(1) }),
  curate: z.object({ ids }),
  drop_curated: z.object({ ids }),
  finish: z.object({}),
} as const;

export type SearchToolName = keyof typeof ARGS;

export function isSearchTool(name: string): name is SearchToolName {
  return Object.hasOwn(ARGS, name);
}

/** The six tools as declared to models: JSON Schema parameters and a one-line description each. */
export function searchToolSpecs(curateCap: number, defaultK: number): ToolSpec[] {
  const kParam = { type: 'integer', minimum: 1, maximum: MAX_K, description: `Number of hits (default ${defaultK}).` };
  const idsParam = { type: 'array', items: { type: 'string' }, minItems: 1, description: 'Chunk ids.' };
  const object = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });
  return [
    {
      name: 'bm25_search',
      description: 'Keyword (BM25) search over every chunk; returns id, title, score and snippet per hit, plus counts of chunks seen and curated so far.',
      parameters: object({ query: { type: 'string', description: 'Keywords to search for.' }, k: kParam }, ['query']),
    },
    {
      name: 'grep_corpus',
      description: 'Scan the corpus with a short Python-syntax regular expression; returns id, title and a snippet around the match per hit.',
      parameters: object({ pattern: { type: 'string', description: 'Python regex, e.g. (?i)annual\\s+revenue.' }, k: kParam }, ['pattern']),
    },
    {
      name: 'read_document',
      description: 'Title and full text of one chunk; only ids already seen in a search or grep result of this episode.',
      parameters: object({ id: { type: 'string', description: 'A chunk id from a result list.' } }, ['id']),
    },
    {
      name: 'curate',
      description: `Add chunk ids (seen in results) to the curated result set (at most ${curateCap} in total).`,
      parameters: object({ ids: idsParam }, ['ids']),
    },
    {
      name: 'drop_curated',
      description: 'Remove chunk ids from the curated result set.',
      parameters: object({ ids: idsParam }, ['ids']),
    },
    {
      name: 'finish',
      description: 'End the episode and return the curated set.',
      parameters: object({}, []),
    },
  ];
}
