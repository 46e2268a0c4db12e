import type { Chunk } from '../../src/corpus/chunk.js';
import { InputError } from '../../src/errors.js';
import type { GrepResult, SearchHit } from '../../src/search/types.js';
import type { SearchBackend } from '../../src/suites/search/env.js';
import type { Task } from '../../src/tasks/task.js';

/**
 * A handful of chunks and a plain term-overlap search over them: enough corpus for the search
 * environment that the agent tests drive (the index itself is tested in test/search).
 */
export const CHUNKS: Chunk[] = [
  { id: 'c-nixon', title: 'Richard Nixon', text: 'Richard Nixon was the 37th president of the United States, serving from 1969 to 1974.' },
  { id: 'c-ford', title: 'Gerald Ford', text: 'Gerald Ford was the 38th president of the United States, succeeding Richard Nixon in 1974.' },
  { id: 'c-carter', title: 'Jimmy Carter', text: 'Jimmy Carter was the 39th president, a peanut farmer from Georgia.' },
  { id: 'c-apollo', title: 'Apollo 11', text: 'Apollo 11 landed on the Moon in July 1969, during the Nixon presidency.' },
  { id: 'c-rotterdam', title: 'Rotterdam', text: 'Rotterdam is a port city in the Netherlands on the Nieuwe Maas.' },
];

export const TASKS: Task[] = [
  { id: 'q-nixon', query: 'Who was president when Apollo 11 landed?', facts: [{ text: 'Apollo 11 landed in 1969', chunkIds: ['c-apollo'] }, { text: 'Nixon was president 1969-1974', chunkIds: ['c-nixon'] }], answers: ['Richard Nixon'] },
  { id: 'q-ford', query: 'Who succeeded Richard Nixon?', facts: [{ text: 'Ford succeeded Nixon', chunkIds: ['c-ford'] }], answers: ['Gerald Ford'] },
  { id: 'q-port', query: 'Which port city lies on the Nieuwe Maas?', facts: [{ text: 'Rotterdam is on the Nieuwe Maas', chunkIds: ['c-rotterdam'] }], answers: ['Rotterdam'] },
];

const words = (s: string) => s.toLowerCase().match(/[a-z0-9]+/gu) ?? [];

export const backend: SearchBackend = {
  search(query: string, k = 10): SearchHit[] {
    const q = new Set(words(query));
    if (q.size === 0) throw new InputError(`query '${query}' has no searchable terms`);
    return CHUNKS.map((c) => ({ c, score: words(`${c.title} ${c.text}`).filter((w) => q.has(w)).length }))
      .filter((h) => h.score > 0)
      .sort((a, b) => b.score - a.score || a.c.id.localeCompare(b.c.id))
      .slice(0, k)
      .map(({ c, score }) => ({ id: c.id, title: c.title, score, snippet: c.text }));
  },
  grep(pattern: string): GrepResult {
    const re = new RegExp(pattern, 'u');
    const hits = CHUNKS.filter((c) => re.test(c.text)).map((c) => ({ id: c.id, title: c.title, snippet: c.text }));
    return { hits, timedOut: false, scanned: CHUNKS.length };
  },
  read: (id) => CHUNKS.find((c) => c.id === id),
  has: (id) => CHUNKS.some((c) => c.id === id),
};
