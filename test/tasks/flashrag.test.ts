import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Chunk } from '../../src/corpus/chunk.js';
import { flashragChunk, readFlashragCorpus } from '../../src/corpus/flashrag.js';
import { InputError } from '../../src/errors.js';
import { FLASHRAG_BENCHMARKS, flashragQuestionsPath, loadFlashragQuestions } from '../../src/tasks/loaders/flashrag.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'flashrag');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-flashrag-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A file of the given lines in the temporary folder. */
function file(name: string, lines: string[]): string {
  const path = join(tmp, name);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

async function chunksOf(path: string): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for await (const batch of readFlashragCorpus(path)) out.push(...batch);
  return out;
}

async function errorOf(promise: Promise<unknown>): Promise<InputError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(InputError);
  return err as InputError;
}

describe('FlashRAG question files', () => {
  it('are where FlashRAG puts them: test for the single-hop sets and Bamboogle, dev for the multi-hop ones', () => {
    expect(FLASHRAG_BENCHMARKS.map((b) => flashragQuestionsPath('D', b))).toEqual([
      join('D', 'nq', 'test.jsonl'),
      join('D', 'triviaqa', 'test.jsonl'),
      join('D', 'popqa', 'test.jsonl'),
      join('D', 'hotpotqa', 'dev.jsonl'),
      join('D', '2wikimultihopqa', 'dev.jsonl'),
      join('D', 'musique', 'dev.jsonl'),
      join('D', 'bamboogle', 'test.jsonl'),
    ]);
  });

  it.each([
    ['nq', 3],
    ['triviaqa', 2],
    ['popqa', 2],
    ['2wikimultihopqa', 2],
    ['bamboogle', 2],
  ])('load %s from its fixture: question, golden answers, the benchmark as source, no facts', async (name, count) => {
    const benchmark = FLASHRAG_BENCHMARKS.find((b) => b.name === name)!;
    const tasks = await loadFlashragQuestions(flashragQuestionsPath(FIXTURES, benchmark), name);
    expect(tasks).toHaveLength(count);
    for (const t of tasks) {
      expect(t.query.length).toBeGreaterThan(0);
      expect(t.answers!.length).toBeGreaterThan(0);
      expect(t.meta).toEqual({ source: name });
      expect(t.facts).toEqual([]);
    }
  });

  it('keep every golden answer as an alias, and numbers as text', async () => {
    const path = file('aliases.jsonl', ['{"id": 7, "question": "How many strings?", "golden_answers": ["four", 4]}']);
    expect(await loadFlashragQuestions(path, 'nq')).toEqual([{ id: '7', query: 'How many strings?', facts: [], answers: ['four', '4'], meta: { source: 'nq' } }]);
  });

  it.each([
    ['no golden answers', '{"id": "a", "question": "Q?", "golden_answers": []}', /golden_answers/],
    ['an empty question', '{"id": "a", "question": "  ", "golden_answers": ["x"]}', /question/],
    ['no id', '{"question": "Q?", "golden_answers": ["x"]}', /id/],
    ['answers as a string', '{"id": "a", "question": "Q?", "golden_answers": "x"}', /golden_answers/],
    ['a line that is not JSON', '{"id": "a", "question": ', /not valid JSON/],
  ])('refuse a row with %s, naming the file and the line', async (_what, bad, field) => {
    const path = file('bad.jsonl', ['{"id": "ok", "question": "Fine?", "golden_answers": ["yes"], "metadata": {}}', bad]);
    const err = await errorOf(loadFlashragQuestions(path, 'nq'));
    expect(err.message).toContain(`${path} line 2`);
    expect(err.message).toMatch(field);
  });

  it('refuse a repeated id, naming both lines', async () => {
    const row = '{"id": "a", "question": "Q?", "golden_answers": ["x"]}';
    const path = file('twice.jsonl', [row, row]);
    expect((await errorOf(loadFlashragQuestions(path, 'nq'))).message).toMatch(/line 2: duplicate id 'a' \(first seen at .* line 1\)/);
  });
});

describe('the wiki-18 corpus', () => {
  it('takes the first line of contents as the title, unquoted, and the rest as the text', async () => {
    const chunks = await chunksOf(join(FIXTURES, 'wiki-18.jsonl'));
    expect(chunks).toHaveLength(10);
    expect(chunks[0]).toEqual({ id: '1', title: 'Jane Austen', text: expect.stringMatching(/^Jane Austen \(16 December 1775/) });
    // A numeric id becomes text; a title without quotes is kept as it is.
    expect(chunks[9]).toEqual({ id: '10', title: 'Piano Sonata No. 14', text: expect.stringMatching(/Moonlight Sonata/) });
  });

  it('reads a passage with no title line as all text, and keeps quotes inside a title', () => {
    expect(flashragChunk('1', 'just text')).toEqual({ id: '1', title: 'just text', text: 'just text' });
    expect(flashragChunk('2', '"The "Best" Song"\nIt is a song.')).toEqual({ id: '2', title: 'The "Best" Song', text: 'It is a song.' });
  });

  it.each([
    ['no contents', '{"id": "2", "text": "x"}', /contents/],
    ['an empty id', '{"id": "", "contents": "\\"T\\"\\nx"}', /id/],
    ['a line that is not JSON', '{"id": "2", "contents": ', /not valid JSON/],
  ])('refuses a passage with %s, naming the file and the line', async (_what, bad, field) => {
    const path = file('corpus.jsonl', ['{"id": "1", "contents": "\\"T\\"\\ntext"}', bad]);
    const err = await errorOf(chunksOf(path));
    expect(err.message).toContain(`${path} line 2`);
    expect(err.message).toMatch(field);
  });
});
