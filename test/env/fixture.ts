/**
 * Test fixture: real HotpotQA dev questions and paragraphs (../shared/data, CC BY-SA 4.0) as tasks
 * and a small in-memory Searcher over them. The Searcher is deliberately plain (term-overlap
 * scoring, JavaScript RegExp grep) but honours the contract of src/search/types.ts: empty or
 * stopword-only queries and invalid regexes throw InputError naming them.
 */
import { readFileSync } from 'node:fs';
import { contentChunkId, normalizeWhitespace, type Chunk } from '../../src/corpus/chunk.js';
import { InputError } from '../../src/errors.js';
import type { GrepOptions, GrepResult, SearchHit, Searcher } from '../../src/search/types.js';
import type { Task } from '../../src/tasks/task.js';

export const HOTPOT = '/work/shared/data/hotpotqa/dev500.ircot.jsonl';

interface IrcotRow {
  question_id: string;
  question_text: string;
  answers_objects: { spans: string[] }[];
  contexts: { title: string; paragraph_text: string; is_supporting: boolean }[];
}

const STOP = new Set('a an the of in on at to for and or is was were be by with what who which when where how did does do from as that this'.split(' '));
const terms = (s: string) => s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t && !STOP.has(t));

export class MemorySearcher implements Searcher {
  private readonly byId = new Map<string, Chunk>();
  private readonly df = new Map<string, number>();
  private readonly bags: { chunk: Chunk; tf: Map<string, number> }[] = [];
  private readonly postings = new Map<string, number[]>();

  constructor(chunks: Chunk[]) {
    for (const chunk of chunks) {
      if (this.byId.has(chunk.id)) continue;
      this.byId.set(chunk.id, chunk);
      const tf = new Map<string, number>();
      for (const t of terms(`${chunk.title} ${chunk.text}`)) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) {
        this.df.set(t, (this.df.get(t) ?? 0) + 1);
        if (!this.postings.has(t)) this.postings.set(t, []);
        this.postings.get(t)!.push(this.bags.length);
      }
      this.bags.push({ chunk, tf });
    }
  }

  get size(): number {
    return this.bags.length;
  }

  search(query: string, k = 10): SearchHit[] {
    const q = [...new Set(terms(query))];
    if (q.length === 0) throw new InputError(`query '${query}' has no searchable terms (empty or only stopwords)`);
    const n = this.bags.length;
    const candidates = new Set(q.flatMap((t) => this.postings.get(t) ?? []));
    const scored = [...candidates]
      .map((doc) => this.bags[doc]!)
      .map(({ chunk, tf }) => ({ chunk, score: q.reduce((s, t) => s + (tf.has(t) ? Math.log(1 + n / this.df.get(t)!) * (1 + Math.log(tf.get(t)!)) : 0), 0) }))
      .sort((a, b) => b.score - a.score || (a.chunk.id < b.chunk.id ? -1 : 1))
      .slice(0, k);
    return scored.map(({ chunk, score }) => ({ id: chunk.id, title: chunk.title, score, snippet: chunk.text.slice(0, 300) }));
  }

  grep(pattern: string, options: GrepOptions = {}): GrepResult {
    let re: RegExp;
    try {
      // Python's inline (?i) at the start is the one flag form these tests use.
      const caseless = pattern.startsWith('(?i)');
      re = new RegExp(caseless ? pattern.slice(4) : pattern, caseless ? 'iu' : 'u');
    } catch (err) {
      throw new InputError(`invalid regex '${pattern}': ${(err as Error).message}`);
    }
    const hits = [];
    for (const { chunk } of this.bags) {
      const m = re.exec(chunk.text);
      if (!m) continue;
      hits.push({ id: chunk.id, title: chunk.title, snippet: chunk.text.slice(Math.max(0, m.index - 40), m.index + 80) });
      if (hits.length >= (options.k ?? 10)) break;
    }
    return { hits, timedOut: false, scanned: this.bags.length };
  }

  read(id: string): Chunk | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }
}

/** The first `limit` HotpotQA dev questions as tasks, and every paragraph of all 500 as the corpus. */
export function hotpotFixture(limit = 40): { tasks: Task[]; chunks: Chunk[]; searcher: MemorySearcher } {
  const rows = readFileSync(HOTPOT, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as IrcotRow);
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
  return { tasks, chunks, searcher: new MemorySearcher(chunks) };
}
