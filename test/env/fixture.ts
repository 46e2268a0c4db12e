/**
 * Test fixture: real HotpotQA dev questions and paragraphs (../shared/data, CC BY-SA 4.0) as tasks,
 * and the real search index (BM25 and grep of src/search) built over all their paragraphs into a
 * temporary directory, once per test file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentChunkId, normalizeWhitespace, type Chunk } from '../../src/corpus/chunk.js';
import { buildIndex, openIndex, type SearchIndex } from '../../src/search/index.js';
import type { Task } from '../../src/tasks/task.js';
import { sharedText } from '../fixtures/shared.js';

export const HOTPOT = 'hotpotqa/dev500.ircot.jsonl';

interface IrcotRow {
  question_id: string;
  question_text: string;
  answers_objects: { spans: string[] }[];
  contexts: { title: string; paragraph_text: string; is_supporting: boolean }[];
}

let built: Promise<SearchIndex> | undefined;

function indexOf(chunks: Chunk[]): Promise<SearchIndex> {
  built ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-env-fixture-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    const unique = [...new Map(chunks.map((c) => [c.id, c])).values()];
    await buildIndex((async function* () { yield* unique; })(), join(dir, 'index'));
    return openIndex(join(dir, 'index'));
  })();
  return built;
}

/** The first `limit` HotpotQA dev questions as tasks, and every paragraph of all 500 as the corpus. */
export function hotpotData(limit = 40): { tasks: Task[]; chunks: Chunk[] } {
  const rows = sharedText(HOTPOT).trim().split('\n').map((l) => JSON.parse(l) as IrcotRow);
  const chunks: Chunk[] = [];
  const tasks: Task[] = [];
  for (const row of rows) {
    const facts = [];
    for (const c of row.contexts) {
      const chunk = { id: contentChunkId(c.title, c.paragraph_text), title: c.title, text: normalizeWhitespace(c.paragraph_text) };
      chunks.push(chunk);
      if (c.is_supporting) facts.push({ text: `supporting paragraph '${c.title}'`, chunkIds: [chunk.id] });
    }
    if (tasks.length < limit) tasks.push({ id: row.question_id, query: row.question_text, facts, answers: row.answers_objects.flatMap((a) => a.spans) });
  }
  return { tasks, chunks };
}

/** hotpotData with the real index over its chunks. */
export async function hotpotFixture(limit = 40): Promise<{ tasks: Task[]; chunks: Chunk[]; searcher: SearchIndex }> {
  const data = hotpotData(limit);
  return { ...data, searcher: await indexOf(data.chunks) };
}
