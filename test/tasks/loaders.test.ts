import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentChunkId } from '../../src/corpus/chunk.js';
import { InputError } from '../../src/errors.js';
import { coverageReport, requireCoverage } from '../../src/tasks/check.js';
import { harness1CorpusFiles, loadHarness1 } from '../../src/tasks/loaders/harness1.js';
import { loadHotpotQA } from '../../src/tasks/loaders/hotpotqa.js';
import { loadJsonlTasks } from '../../src/tasks/loaders/jsonl.js';
import { loadMusique } from '../../src/tasks/loaders/musique.js';
import { DEFAULT_ROWS, writeHarness1Download } from './harness1-fixture.js';

const FIX = 'test/fixtures/tasks';
const tmp = () => mkdtempSync(join(tmpdir(), 'sleuth-tasks-'));

/** Write records to a temp file, as a JSON array or as JSONL. */
function writeTemp(name: string, records: unknown[], layout: 'array' | 'jsonl'): string {
  const path = join(tmp(), name);
  writeFileSync(path, layout === 'array' ? JSON.stringify(records) : records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
}

async function expectInputError(fn: () => unknown, ...parts: string[]): Promise<void> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    for (const part of parts) expect((err as Error).message).toContain(part);
    return;
  }
  throw new Error('expected an InputError');
}

async function expectInputErrorAsync(promise: Promise<unknown>, ...parts: string[]): Promise<void> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(InputError);
  for (const part of parts) expect((err as Error).message).toContain(part);
}

describe('HotpotQA original layout', () => {
  const raw = JSON.parse(readFileSync(join(FIX, 'hotpotqa-original.json'), 'utf8')) as any[];

  it('makes one fact per supporting paragraph, its chunk the paragraph joined by single spaces', async () => {
    const { tasks, chunks } = await loadHotpotQA(join(FIX, 'hotpotqa-original.json'));
    expect(tasks.map((t) => t.id)).toEqual(raw.map((r) => r._id));
    const first = tasks[0]!;
    expect(first.query).toBe('If Gallu is a demon Lilu is what?');
    expect(first.answers).toEqual([raw[0].answer]);
    expect(first.meta).toMatchObject({ source: 'hotpotqa', level: 'easy' });
    const alu = raw[0].context.find((c: [string, string[]]) => c[0] === 'Alû')[1] as string[];
    expect(first.facts).toHaveLength(2);
    expect(first.facts[0]!.chunkIds).toEqual([contentChunkId('Alû', alu.join(' '))]);
    expect(first.facts[0]!.text).toBe(alu[3]!.trim());
    // every paragraph of every context is a chunk, once
    expect(chunks).toHaveLength(new Set(raw.flatMap((r) => r.context.map((c: [string, string[]]) => c[0]))).size);
    expect(chunks.find((c) => c.title === 'Alû')!.text).toBe(alu.join(' ').replace(/\s+/g, ' ').trim());
  });

  it('gives a paragraph the same id as IRCoT gives it (double-space join)', async () => {
    const r = raw[1];
    const ircot = {
      question_id: r._id,
      question_text: r.question,
      answers_objects: [{ spans: [r.answer], number: '' }],
      contexts: r.context.map(([title, sentences]: [string, string[]], i: number) => ({
        id: String(i),
        title,
        paragraph_text: sentences.map((s) => s.trim()).join('  '),
        is_supporting: r.supporting_facts.some((f: [string, number]) => f[0] === title),
      })),
    };
    const fromOriginal = (await loadHotpotQA(writeTemp('o.json', [r], 'array'))).tasks[0]!;
    const fromIrcot = (await loadHotpotQA(writeTemp('i.jsonl', [ircot], 'jsonl'))).tasks[0]!;
    expect(fromIrcot.facts.map((f) => f.chunkIds)).toEqual(fromOriginal.facts.map((f) => f.chunkIds));
  });

  it('finds a supporting paragraph missing from the context in the corpus, and fails naming the record without it', async () => {
    const r = structuredClone(raw[0]);
    r.context = r.context.filter((c: [string, string[]]) => c[0] !== 'Alû');
    const path = writeTemp('fullwiki.json', [r], 'array');
    await expectInputError(async () => await loadHotpotQA(path), 'fullwiki.json record 1', "'Alû'");
    const alu = raw[0].context.find((c: [string, string[]]) => c[0] === 'Alû')[1];
    const { tasks } = await loadHotpotQA(path, { corpusByTitle: new Map([['Alû', alu]]) });
    expect(tasks[0]!.facts[0]!.chunkIds).toEqual([contentChunkId('Alû', alu.join(' '))]);
  });

  it('names file and record of a malformed row', async () => {
    const bad = structuredClone(raw.slice(0, 2));
    bad[1].supporting_facts = [['Alû', 'three']];
    await expectInputError(async () => await loadHotpotQA(writeTemp('bad.json', bad, 'array')), 'bad.json record 2', 'supporting_facts');
  });

  it('rejects duplicate ids, empty queries and questions without supporting facts', async () => {
    await expectInputError(async () => await loadHotpotQA(writeTemp('dup.json', [raw[0], raw[1], raw[0]], 'array')), 'record 3', "duplicate task id '5a77ec115542992a6e59dff7'", 'record 1');
    const empty = { ...raw[0], question: '   ' };
    await expectInputError(async () => await loadHotpotQA(writeTemp('empty.json', [empty], 'array')), 'record 1', 'empty query');
    const nofacts = { ...raw[0], supporting_facts: [] };
    await expectInputError(async () => await loadHotpotQA(writeTemp('nofacts.json', [nofacts], 'array')), 'record 1', 'no facts');
  });
});

describe('HotpotQA IRCoT layout', () => {
  const lines = readFileSync(join(FIX, 'hotpotqa-ircot.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

  it('makes facts of the two supporting paragraphs and answers of the spans', async () => {
    const { tasks, chunks } = await loadHotpotQA(join(FIX, 'hotpotqa-ircot.jsonl'));
    expect(tasks).toHaveLength(3);
    const t = tasks[0]!;
    expect(t.id).toBe('5a8c7595554299585d9e36b6');
    expect(t.answers).toEqual(['Chief of Protocol']);
    const supporting = lines[0].contexts.filter((c: any) => c.is_supporting);
    expect(t.facts.map((f) => f.text)).toEqual(supporting.map((c: any) => c.title));
    expect(t.facts.map((f) => f.chunkIds[0])).toEqual(supporting.map((c: any) => contentChunkId(c.title, c.paragraph_text)));
    for (const task of tasks) for (const f of task.facts) expect(chunks.some((c) => c.id === f.chunkIds[0])).toBe(true);
    expect(chunks.every((c) => !c.text.includes('  '))).toBe(true);
  });

  it('names the line of a row that is not JSON, and of a row missing a field', async () => {
    const path = join(tmp(), 'broken.jsonl');
    writeFileSync(path, JSON.stringify(lines[0]) + '\n{"question_id": "x", \n');
    await expectInputError(async () => await loadHotpotQA(path), 'broken.jsonl line 2', 'not valid JSON');
    const { contexts: _c, ...noContexts } = lines[1];
    await expectInputError(async () => await loadHotpotQA(writeTemp('nocontexts.jsonl', [lines[0], noContexts], 'jsonl')), 'nocontexts.jsonl line 2', 'contexts');
  });

  it('rejects a question with no supporting paragraph', async () => {
    const r = { ...lines[0], contexts: lines[0].contexts.map((c: any) => ({ ...c, is_supporting: false })) };
    await expectInputError(async () => await loadHotpotQA(writeTemp('x.jsonl', [r], 'jsonl')), 'x.jsonl line 1', 'no facts');
  });
});

describe('MuSiQue official layout', () => {
  const raw = readFileSync(join(FIX, 'musique.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

  it('makes one fact per hop, supported by its paragraph, the last one the final answer', async () => {
    const { tasks, chunks } = await loadMusique(join(FIX, 'musique.jsonl'));
    expect(tasks.map((t) => t.facts.length)).toEqual([2, 3, 4]);
    const t = tasks[0]!;
    expect(t.id).toBe('2hop__150763_14904');
    expect(t.answers).toEqual(['G. Stanley Hall', 'Stanley Hall']);
    const support = (i: number) => raw[0].paragraphs.find((p: any) => p.idx === raw[0].question_decomposition[i].paragraph_support_idx);
    expect(t.facts[0]!.chunkIds).toEqual([contentChunkId(support(0).title, support(0).paragraph_text)]);
    expect(t.facts[1]!.chunkIds).toEqual([contentChunkId(support(1).title, support(1).paragraph_text)]);
    // "#1" is spelled out with the first hop's answer
    expect(t.facts[1]!.text).toBe('Who was the first president of American Psychological Association ? G. Stanley Hall');
    expect(t.facts.map((f) => f.isFinalAnswer)).toEqual([false, true]);
    expect(t.meta).toEqual({ source: 'musique', hops: 2 });
    expect(chunks.length).toBeGreaterThan(40);
  });

  it('skips unanswerable questions and reports them', async () => {
    const rows = [raw[0], { ...raw[1], answerable: false }];
    const { tasks, skipped } = await loadMusique(writeTemp('full.jsonl', rows, 'jsonl'));
    expect(tasks.map((t) => t.id)).toEqual([raw[0].id]);
    expect(skipped).toEqual([{ where: expect.stringContaining('full.jsonl line 2'), reason: expect.stringContaining('unanswerable') }]);
  });

  it('names the record and hop whose support paragraph does not exist', async () => {
    const bad = structuredClone(raw[1]);
    bad.question_decomposition[2].paragraph_support_idx = 99;
    await expectInputError(async () => await loadMusique(writeTemp('m.jsonl', [raw[0], bad], 'jsonl')), 'm.jsonl line 2', 'hop 3', 'paragraph 99');
  });

  it('rejects duplicate ids and malformed rows', async () => {
    await expectInputError(async () => await loadMusique(writeTemp('d.jsonl', [raw[0], raw[0]], 'jsonl')), 'd.jsonl line 2', 'duplicate task id');
    const bad = { ...raw[0], question_decomposition: 'two hops' };
    await expectInputError(async () => await loadMusique(writeTemp('b.jsonl', [bad], 'jsonl')), 'b.jsonl line 1', 'question_decomposition');
  });
});

describe('plain JSONL tasks', () => {
  it('reads tasks with their splits', async () => {
    const { tasks, splits } = await loadJsonlTasks(join(FIX, 'tasks.jsonl'));
    expect(tasks.map((t) => t.id)).toEqual(['own-1', 'own-2']);
    expect(tasks[0]).not.toHaveProperty('split');
    expect(tasks[0]!.facts[1]).toEqual({ text: 'The Danube flows through Vienna', chunkIds: ['c-danube', 'c-vienna'], isFinalAnswer: true });
    expect([...splits!]).toEqual([['own-1', 'train'], ['own-2', 'eval']]);
  });

  it('names the line of a malformed task, an empty query, missing facts, a duplicate id', async () => {
    const ok = { id: 'a', query: 'q?', facts: [{ text: 'f', chunkIds: ['c'] }] };
    await expectInputError(async () => await loadJsonlTasks(writeTemp('t.jsonl', [ok, { ...ok, id: 'b', facts: [{ text: 'f', chunkIds: [] }] }], 'jsonl')), 't.jsonl line 2', 'chunkIds');
    await expectInputError(async () => await loadJsonlTasks(writeTemp('t.jsonl', [ok, { ...ok, id: 'b', query: ' ' }], 'jsonl')), 't.jsonl line 2', "task 'b' has an empty query");
    await expectInputError(async () => await loadJsonlTasks(writeTemp('t.jsonl', [{ ...ok, facts: [] }], 'jsonl')), 't.jsonl line 1', 'no facts');
    await expectInputError(async () => await loadJsonlTasks(writeTemp('t.jsonl', [ok, ok], 'jsonl')), 't.jsonl line 2', "duplicate task id 'a'", 'first seen at');
    await expectInputError(async () => await loadJsonlTasks(writeTemp('t.jsonl', [{ ...ok, id: 7 }], 'jsonl')), 't.jsonl line 1', 'id');
  });

  it('reports facts none of whose chunks are in the corpus, and stops unless allowed', async () => {
    const { tasks } = await loadJsonlTasks(join(FIX, 'tasks.jsonl'));
    const corpus = new Set(['c-vienna']);
    const report = coverageReport(tasks, (id) => corpus.has(id));
    expect(report).toMatchObject({ tasks: 2, facts: 3, chunkIds: 3, missingChunkIds: 2, uncoverableFacts: 1 });
    expect(report.examples).toEqual(['own-2: Moby-Dick is set aboard the Pequod [c-moby]']);
    await expectInputError(() => requireCoverage(report, 'tasks.jsonl', false), '1 of 3 facts', 'own-2', '--allow-missing');
    expect(() => requireCoverage(report, 'tasks.jsonl', true)).not.toThrow();
  });
});

describe('Harness-1 download (Parquet)', () => {
  it('loads the RL stage rows as tasks with their facts, leaving the SFT rows out', async () => {
    const dir = writeHarness1Download(tmp());
    const { tasks } = await loadHarness1(dir);
    expect(tasks.map((t) => t.id)).toEqual(['sec_train_0001', 'sec_train_0002']);
    expect(tasks[0]!.facts).toEqual([
      { text: 'Total net sales decreased 3% in 2023', chunkIds: ['0000320193-23-000106_0'], isFinalAnswer: false },
      { text: 'iPhone net sales decreased in 2023', chunkIds: ['0000320193-23-000106_1', '0000320193-23-000106_0'], isFinalAnswer: true },
    ]);
    expect(tasks[0]!.answers).toEqual(['iPhone']);
    expect(tasks[0]!.meta).toEqual({ source: 'harness1', dataset: 'sec_1_4', origin: 'sec' });
    const sft = await loadHarness1(dir, { stage: 'sft' });
    expect(sft.tasks.map((t) => t.id)).toEqual(['sec_sft_0001']);
    expect(sft.tasks[0]!.answers).toBeUndefined();
    expect(harness1CorpusFiles(dir)).toEqual([join(dir, 'corpora', 'sec', 'part-00000.parquet')]);
    expect(harness1CorpusFiles(dir, 'patents')).toEqual([]);
  });

  it('names file and row of malformed document_ids_json, empty queries, duplicate ids', async () => {
    const badJson = [...DEFAULT_ROWS];
    badJson[1] = { ...badJson[1]!, document_ids_json: '[{"fact": "x", "chunk_ids": "not-a-list"}]' };
    await expectInputErrorAsync(loadHarness1(writeHarness1Download(tmp(), badJson)), 'train-00000-of-00001.parquet row 2', 'document_ids_json', 'chunk_ids');
    const notJson = [{ ...DEFAULT_ROWS[0]!, document_ids_json: '[{' }];
    await expectInputErrorAsync(loadHarness1(writeHarness1Download(tmp(), notJson)), 'row 1', 'not valid JSON');
    const empty = [DEFAULT_ROWS[0]!, { ...DEFAULT_ROWS[1]!, query: '' }];
    await expectInputErrorAsync(loadHarness1(writeHarness1Download(tmp(), empty)), 'row 2', 'empty query');
    const noFacts = [{ ...DEFAULT_ROWS[0]!, document_ids_json: '[]' }];
    await expectInputErrorAsync(loadHarness1(writeHarness1Download(tmp(), noFacts)), 'row 1', 'no facts');
    const dup = [DEFAULT_ROWS[0]!, DEFAULT_ROWS[0]!];
    await expectInputErrorAsync(loadHarness1(writeHarness1Download(tmp(), dup)), 'row 2', "duplicate task id 'sec_train_0001'");
  });

  it('says which stages exist when the chosen one has no rows, and names a missing download', async () => {
    const dir = writeHarness1Download(tmp());
    await expectInputErrorAsync(loadHarness1(dir, { stage: 'grpo' }), "no rows with stage 'grpo'", 'rl', 'sft');
    await expectInputErrorAsync(loadHarness1(join(dir, 'nope')), 'nope', 'no such file');
    const notParquet = join(tmp(), 'x.parquet');
    writeFileSync(notParquet, 'hello');
    await expectInputErrorAsync(loadHarness1(notParquet), 'x.parquet', 'not a readable parquet file');
  });
});
