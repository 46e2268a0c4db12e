import { beforeAll, describe, expect, it } from 'vitest';
import { extractAnswer, QaEnvironment } from '../../src/suites/qa/env.js';
import type { Task } from '../../src/tasks/task.js';
import type { SearchIndex } from '../../src/search/index.js';
import { hotpotFixture } from './fixture.js';

let searcher: SearchIndex;
let task: Task;

beforeAll(async () => {
  const f = await hotpotFixture(3);
  searcher = f.searcher;
  task = f.tasks[0]!;
}, 60_000);

describe('QA environment', () => {
  it('declares search and answer, and prompts with the question', () => {
    const env = new QaEnvironment(searcher);
    expect(env.tools.map((t) => t.name)).toEqual(['search', 'answer']);
    expect(env.userPrompt(task)).toBe(`Question: ${task.query}`);
    expect(env.systemPrompt()).toContain('<answer></answer>');
  });

  it('returns the top 3 paragraphs in Search-R1 form and puts them in the trajectory', async () => {
    const ep = new QaEnvironment(searcher).start(task);
    const r = await ep.call({ name: 'search', arguments: { query: 'Kiss and Tell 1945 film Corliss Archer' } });
    expect(r.outcome).toBe('ok');
    expect(r.chunkIds).toHaveLength(3);
    expect(r.content.split('\n')).toHaveLength(3);
    expect(r.content).toMatch(/^Doc 1\(Title: Kiss and Tell \(1945 film\)\) Kiss and Tell is a 1945/);
    expect(ep.trajectory).toEqual(r.chunkIds);
  });

  it('allows 5 searches, warns on the last, and a sixth ends the episode without an answer (the tutorial\'s budget end)', async () => {
    const ep = new QaEnvironment(searcher).start(task);
    for (let i = 1; i <= 5; i++) {
      const r = await ep.call({ name: 'search', arguments: { query: `Shirley Temple ${i}` } });
      expect(r.outcome).toBe('ok');
      expect(r.content.includes('That was your last search')).toBe(i === 5);
    }
    const sixth = await ep.call({ name: 'search', arguments: { query: 'Shirley Temple' } });
    expect(sixth).toMatchObject({ outcome: 'error', errorKind: 'search_budget' });
    expect(ep.searches).toHaveLength(5);
    expect(ep.ended).toBe('budget');
    expect(ep.answer).toBeUndefined();
    expect((await ep.call({ name: 'answer', arguments: { answer: 'too late' } })).errorKind).toBe('episode_over');
  });

  it('closed book: only the answer tool is offered, the prompt says so, and a search is refused without using anything', async () => {
    const env = new QaEnvironment(searcher, { closedBook: true });
    expect(env.tools.map((t) => t.name)).toEqual(['answer']);
    expect(env.systemPrompt()).toContain('from memory');
    expect(env.systemPrompt()).not.toContain('search');
    expect(env.defaultBudgets.maxTurns).toBe(3);
    const ep = env.start(task);
    const r = await ep.call({ name: 'search', arguments: { query: 'Shirley Temple' } });
    expect(r).toMatchObject({ outcome: 'error', errorKind: 'closed_book', chunkIds: [] });
    expect(ep.searches).toHaveLength(0);
    expect(ep.trajectory).toHaveLength(0);
    expect(ep.ended).toBeUndefined();
    expect((await ep.call({ name: 'answer', arguments: { answer: 'Chief of Protocol' } })).outcome).toBe('ok');
    expect(ep.answer).toBe('Chief of Protocol');
  });

  it('search budget and top-k are configurable; bad queries do not use the budget', async () => {
    const ep = new QaEnvironment(searcher, { topK: 2, maxSearches: 1 }).start(task);
    expect((await ep.call({ name: 'search', arguments: { query: 'of the' } })).errorKind).toBe('bad_query');
    expect((await ep.call({ name: 'search', arguments: {} })).errorKind).toBe('bad_arguments');
    expect((await ep.call({ name: 'search', arguments: { query: 'Shirley Temple' } })).chunkIds).toHaveLength(2);
    expect((await ep.call({ name: 'search', arguments: { query: 'Shirley Temple' } })).errorKind).toBe('search_budget');
  });

  it('the answer tool records the answer and ends the episode', async () => {
    const ep = new QaEnvironment(searcher).start(task);
    expect((await ep.call({ name: 'answer', arguments: { answer: ' Chief of Protocol ' } })).outcome).toBe('ok');
    expect(ep.answer).toBe('Chief of Protocol');
    expect(ep.ended).toBe('answer');
    expect((await ep.call({ name: 'lookup', arguments: {} })).errorKind).toBe('episode_over');
  });

  it('a final message gives the answer from <answer>…</answer> or <<…>>; without one there is no answer', () => {
    const env = new QaEnvironment(searcher);
    const a = env.start(task);
    expect(a.finalMessage('I think <answer> Chief of Protocol </answer>.')).toBe('answer');
    expect(a.answer).toBe('Chief of Protocol');
    const b = env.start(task);
    expect(b.finalMessage('So it is <<Ghana>>')).toBe('answer');
    expect(b.answer).toBe('Ghana');
    const c = env.start(task);
    expect(c.finalMessage('no idea')).toBe('finish');
    expect(c.answer).toBeUndefined();
  });

  it('extractAnswer reads each form as its seed does: the first <answer> tag (the tutorial), else the last <<…>> block (the blog)', () => {
    expect(extractAnswer('<answer>a\nb</answer> <answer>c</answer>')).toBe('a\nb');
    expect(extractAnswer('<<x>> <answer>y</answer>')).toBe('y');
    expect(extractAnswer('first <<Accra>>, no: <<Ghana>>')).toBe('Ghana');
    expect(extractAnswer('<answer>unclosed')).toBeUndefined();
  });
});
