import { beforeAll, describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/agent/episode.js';
import type { Agent } from '../../src/agent/types.js';
import { SearchEnvironment } from '../../src/suites/search/env.js';
import { trainBpe } from '../../src/protocol/compact/bpe.js';
import { EpisodeReferences, literalPattern, spanString } from '../../src/protocol/compact/references.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';
import { localRenderer } from '../../src/protocol/compact/local.js';
import { writeTurnTokens } from '../../src/protocol/write-turn.js';
import type { Task } from '../../src/tasks/task.js';
import { TEXTS } from '../backend/helpers.js';
import { hotpotFixture } from '../env/fixture.js';

const QUESTION = 'What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?';
const tok = trainBpe([...TEXTS, QUESTION], 400, [...SPECIALS]);
const enc = (s: string) => tok.encode(s);

function refsWithHits(): EpisodeReferences {
  const refs = new EpisodeReferences();
  refs.setQuestion(QUESTION);
  refs.noteTitle(1, 'Kiss and Tell (1945 film)');
  refs.noteTitle(2, 'Shirley Temple');
  return refs;
}

describe('references in the compact format', () => {
  it('numbers the question words BM25 keeps, each distinct word once, in order', () => {
    const refs = refsWithHits();
    expect(refs.words).toEqual(['government', 'position', 'held', 'woman', 'portrayed', 'Corliss', 'Archer', 'film', 'Kiss', 'Tell']);
    expect(refs.wordsLine()).toBe('words: 1 government 2 position 3 held 4 woman 5 portrayed 6 Corliss 7 Archer 8 film 9 Kiss 10 Tell');
    const repeated = new EpisodeReferences();
    repeated.setQuestion('Tell, tell me: telling?');
    expect(repeated.words).toEqual(['Tell']);
    expect(spanString([1, 2, 3, 4, 7, 9, 10])).toBe('1-4,7,9-10');
    expect(spanString([1, 2, 3, 4, 7, 9, 10], 10)).toBe('1-4,7,9-');
    expect(spanString([10], 10)).toBe('10');
    // The question words a title contains, as a search engine highlights matched terms.
    expect(refs.matchedWords('Kiss and Tell (1945 film)')).toBe('8-10');
    expect(refs.matchedWords('Corliss Archer in Kiss')).toBe('6-7,9');
    expect(refs.matchedWords('Shirley Temple')).toBe('');
  });

  it('expands words (a number, a list, spans), titles, and both, into the real query', () => {
    const refs = refsWithHits();
    expect(refs.expand('bm25_search', { q: '1-10' })).toEqual({ ok: true, arguments: { query: 'government position held woman portrayed Corliss Archer film Kiss Tell' } });
    expect(refs.expand('bm25_search', { q: '1-' })).toEqual({ ok: true, arguments: { query: 'government position held woman portrayed Corliss Archer film Kiss Tell' } });
    expect(refs.expand('bm25_search', { q: '2,8-' })).toEqual({ ok: true, arguments: { query: 'position film Kiss Tell' } });
    expect(refs.expand('bm25_search', { q: [6, 7], k: 5 })).toEqual({ ok: true, arguments: { query: 'Corliss Archer', k: 5 } });
    expect(refs.expand('bm25_search', { q: 9 })).toEqual({ ok: true, arguments: { query: 'Kiss' } });
    expect(refs.expand('bm25_search', { q: '1-2, 9' })).toEqual({ ok: true, arguments: { query: 'government position Kiss' } });
    expect(refs.expand('bm25_search', { t: 2, q: '1-2' })).toEqual({ ok: true, arguments: { query: 'Shirley Temple government position' } });
    expect(refs.expand('bm25_search', { t: [1, '2'] })).toEqual({ ok: true, arguments: { query: 'Kiss and Tell (1945 film) Shirley Temple' } });
    expect(refs.expand('grep_corpus', { t: 1 })).toEqual({ ok: true, arguments: { pattern: 'Kiss\\s+and\\s+Tell\\s+\\(1945\\s+film\\)' } });
    expect(refs.expand('grep_corpus', { q: '6-7', k: 3 })).toEqual({ ok: true, arguments: { pattern: '(?i)Corliss\\s+Archer', k: 3 } });
    // Calls without references pass through untouched.
    expect(refs.expand('bm25_search', { query: 'as written' })).toEqual({ ok: true, arguments: { query: 'as written' } });
    expect(refs.expand('curate', { ids: ['a'] })).toEqual({ ok: true, arguments: { ids: ['a'] } });
  });

  it('answers a reference to nothing with an error naming it, never a crash', () => {
    const refs = refsWithHits();
    const error = (name: string, args: unknown) => {
      const e = refs.expand(name, args);
      return e.ok ? undefined : e.error;
    };
    expect(error('bm25_search', { q: '11' })).toBe('q: "11" is not a question word (words are numbered 1 to 10)');
    expect(error('bm25_search', { q: [0] })).toBe('q: 0 is not a question word (words are numbered 1 to 10)');
    expect(error('bm25_search', { q: '3-2' })).toContain('"3-2" is not a question word');
    expect(error('bm25_search', { q: '11-' })).toContain('"11-" is not a question word');
    expect(error('bm25_search', { q: '-3' })).toContain('"-3" is not a question word');
    expect(error('bm25_search', { q: 'x' })).toContain('"x" is not a question word');
    expect(error('bm25_search', { q: [] })).toContain('is not a question word');
    expect(error('bm25_search', { q: { a: 1 } })).toContain('is not a question word');
    expect(error('bm25_search', { t: 3 })).toBe('t: 3 is not a hit shown in this episode (hits are numbered 1 to 2)');
    expect(error('grep_corpus', { t: 1, q: 2 })).toContain('one reference');
    expect(error('read_document', { q: 1 })).toContain("read_document takes no q, t, h or s references");
  });

  it("writes a teacher's searches as references, and they expand back to the same BM25 terms", () => {
    const refs = refsWithHits();
    // A span that reaches the last word is written open: "1-" is the whole question.
    expect(refs.compress('bm25_search', { query: 'government position held woman portrayed Corliss Archer film Kiss Tell', k: 10 })).toEqual({ q: '1-', k: 10 });
    // The whole question: its stopwords drop out, every kept word is numbered.
    expect(refs.compress('bm25_search', { query: QUESTION })).toEqual({ q: '1-' });
    expect(refs.compress('bm25_search', { query: 'Archer film Kiss Tell' })).toEqual({ q: '7-' });
    expect(refs.compress('bm25_search', { query: 'government position held' })).toEqual({ q: '1-3' });
    expect(refs.compress('bm25_search', { query: 'Shirley Temple government position' })).toEqual({ t: 2, q: '1-2' });
    expect(refs.compress('bm25_search', { query: 'Kiss and Tell (1945 film)' })).toEqual({ t: 1 });
    expect(refs.compress('grep_corpus', { pattern: literalPattern('Shirley Temple', 12) })).toEqual({ t: 2 });
    // What cannot be written as references stays as written.
    expect(refs.compress('bm25_search', { query: 'Temple Black ambassador' })).toEqual({ query: 'Temple Black ambassador' });
    expect(refs.compress('bm25_search', { query: 'Kiss Kiss' })).toEqual({ query: 'Kiss Kiss' });
    expect(refs.compress('grep_corpus', { pattern: '(?i)ambassador' })).toEqual({ pattern: '(?i)ambassador' });
    for (const query of ['Shirley Temple government position', QUESTION, 'Kiss and Tell (1945 film) Corliss']) {
      const back = refs.expand('bm25_search', refs.compress('bm25_search', { query }));
      expect(back.ok).toBe(true);
      const terms = (q: string) => new Set(q.toLowerCase().match(/[a-z0-9]+/g)!.filter((w) => !['what', 'was', 'by', 'the', 'who', 'in', 'and'].includes(w)));
      expect(terms((back as { arguments: { query: string } }).arguments.query)).toEqual(terms(query));
    }
  });

  it("expands h, a shown hit's text or some of its words, and answers a bad one with an error naming it", () => {
    const refs = refsWithHits();
    refs.noteText(2, 'Shirley Temple Black (April 23, 1928 – February 10, 2014) was an  American actress');
    // A later snippet of the same hit does not replace the text it was first shown with.
    refs.noteText(2, 'another snippet');
    expect(refs.expand('bm25_search', { h: 2 })).toEqual({ ok: true, arguments: { query: 'Shirley Temple Black (April 23, 1928 – February 10, 2014) was an American actress' } });
    expect(refs.expand('bm25_search', { h: '2:1-3', q: '1-2' })).toEqual({ ok: true, arguments: { query: 'Shirley Temple Black government position' } });
    expect(refs.expand('bm25_search', { h: ['2:1-2', '2:13-'], k: 5 })).toEqual({ ok: true, arguments: { query: 'Shirley Temple American actress', k: 5 } });
    expect(refs.expand('grep_corpus', { h: '2:1-3' })).toEqual({ ok: true, arguments: { pattern: 'Shirley\\s+Temple\\s+Black' } });
    const error = (args: unknown) => {
      const e = refs.expand('bm25_search', args);
      return e.ok ? undefined : e.error;
    };
    expect(error({ h: 1 })).toBe(`h: 1 is not a shown hit's text (write a hit number, or HIT:WORDS such as "2:5-7"; hits with text are 2)`);
    expect(error({ h: '2:15-16' })).toBe(`h: "2:15-16": "15-16" is not a word of hit 2's text (its words are numbered 1 to 14)`);
    expect(error({ h: '2:x' })).toContain('is not a word of hit 2');
    expect(error({ h: ':3' })).toContain("is not a shown hit's text");
    expect(error({ h: { a: 1 } })).toContain("is not a shown hit's text");
    expect(refs.expand('curate', { h: 2 })).toEqual({ ok: false, error: 'curate takes no q, t, h or s references (only bm25_search and grep_corpus do; curate takes s)' });
    expect(refs.expand('grep_corpus', { h: 2, t: 1 })).toMatchObject({ ok: false, error: expect.stringContaining('one reference') });
  });

  it("writes a teacher's follow-up of a hit's text as h, and it expands back to the same query", () => {
    const refs = refsWithHits();
    const text = 'Shirley Temple Black was an American actress, singer, dancer and diplomat';
    refs.noteText(2, text);
    // The whole text with question words, as the hit-text scripts search it.
    expect(refs.compress('bm25_search', { query: `${text} government position`, k: 5 })).toEqual({ k: 5, h: 2, q: '1-2' });
    // A run of its words (an entity), as a teacher that picks the bridge writes it.
    expect(refs.compress('bm25_search', { query: 'Temple Black was an American Corliss Archer' })).toEqual({ h: '2:2-6', q: '6-7' });
    for (const query of [`${text} government position`, 'Temple Black was an American Corliss Archer', `${text}`]) {
      const back = refs.expand('bm25_search', refs.compress('bm25_search', { query }));
      expect(back).toEqual({ ok: true, arguments: { query } });
    }
    // One word of a text is not a reference (it would rarely be shorter than the word).
    expect(refs.compress('bm25_search', { query: 'diplomat Corliss' })).toEqual({ query: 'diplomat Corliss' });
  });

  it('round-trips through the local renderer: numbered words in the prompt, titles from results, real queries out', () => {
    const r = localRenderer(tok).forEpisode();
    const tools = [{ name: 'bm25_search', description: '', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } }];
    const prompt = r.decode(r.prompt({ system: 'S', user: QUESTION, tools }));
    expect(prompt).toContain(`${QUESTION}\nwords: 1 government 2 position`);
    // An environment without search tools (the invoice emails) gets no numbered words.
    expect(localRenderer(tok).forEpisode().decode(localRenderer(tok).forEpisode().prompt({ system: 'S', user: QUESTION, tools: [] }))).not.toContain('words:');
    const hits = { outcome: 'ok' as const, content: JSON.stringify({ hits: [{ id: 'a1b2c3d4e5', title: 'Kiss and Tell (1945 film)', snippet: 's' }, { id: 'ffeeddccbb', title: 'Shirley Temple', snippet: 's' }], seen: 2, curated: 0 }), chunkIds: ['a1b2c3d4e5', 'ffeeddccbb'] };
    const first = r.parse(enc('<|call|>{"name":"bm25_search","arguments":{"q":"1-10"}}<|end|>'));
    expect(first.calls[0]).toMatchObject({ status: 'ok', arguments: { query: 'government position held woman portrayed Corliss Archer film Kiss Tell' } });
    r.toolResults(enc('<|call|>{"name":"bm25_search","arguments":{"q":"1-10"}}<|end|>'), [{ call: first.calls[0]!, result: hits }]);
    const second = r.parse(enc('<|call|>{"name":"bm25_search","arguments":{"t":2,"q":"1-2"}}<|call|>{"name":"curate","arguments":{"ids":[1,2]}}<|call|>{"name":"bm25_search","arguments":{"t":9}}<|end|>'));
    expect(second.calls.map((c) => c.arguments)).toEqual([{ query: 'Shirley Temple government position' }, { ids: ['a1b2c3d4e5', 'ffeeddccbb'] }, { t: 9 }]);
    expect(second.calls[2]!.argumentError).toContain('t: 9 is not a hit shown');
    // Hit numbers in curate and drop may be a span string; a number never shown is an error to the model.
    const spans = r.parse(enc('<|call|>{"name":"curate","arguments":{"ids":"1-2"}}<|call|>{"name":"drop","arguments":{"ids":"2-"}}<|call|>{"name":"curate","arguments":{"ids":"1,3"}}<|end|>'));
    expect(spans.calls.map((c) => c.arguments)).toEqual([{ ids: ['a1b2c3d4e5', 'ffeeddccbb'] }, { ids: ['ffeeddccbb'] }, { ids: '1,3' }]);
    expect(spans.calls[2]!.argumentError).toBe('ids: "3" is not a shown hit (hits are numbered 1 to 2)');
    // Hit lines carry the numbers of the question words in their titles.
    expect(r.renderToolContent(hits.content)).toContain('1 Kiss and Tell (1945 film) [8-10]');
    // A teacher's curate is written as spans of hit numbers; one that reaches the last hit shown is open.
    expect(r.decode(writeTurnTokens(r, { calls: [{ name: 'curate', arguments: { ids: ['a1b2c3d4e5', 'ffeeddccbb'] } }] }))).toBe('<|call|>{"name":"curate","arguments":{"ids":"1-"}}<|end|>');
    expect(r.decode(writeTurnTokens(r, { calls: [{ name: 'curate', arguments: { ids: ['a1b2c3d4e5'] } }] }))).toBe('<|call|>{"name":"curate","arguments":{"ids":"1"}}<|end|>');
    // A teacher's turn is written with references and parses back to its real calls.
    const written = writeTurnTokens(r, { calls: [{ name: 'bm25_search', arguments: { query: 'Shirley Temple government position', k: 5 } }] });
    expect(r.decode(written)).toBe('<|call|>{"name":"bm25_search","arguments":{"k":5,"t":2,"q":"1-2"}}<|end|>');
    expect(r.parse(written).calls[0]!.arguments).toEqual({ k: 5, query: 'Shirley Temple government position' });
  });

  describe('in a real episode', () => {
    let env: SearchEnvironment;
    let task: Task;
    beforeAll(async () => {
      const f = await hotpotFixture(5);
      env = new SearchEnvironment(f.searcher);
      task = f.tasks[0]!;
    });

    it('runs the expanded query, records it, and answers a bad reference with a bad_reference error', async () => {
      const r = localRenderer(tok).forEpisode();
      // Turns the model might write, parsed by the renderer the way a TokenAgent's are.
      const written = ['<|call|>{"name":"bm25_search","arguments":{"q":"1-3"}}<|end|>', '<|call|>{"name":"bm25_search","arguments":{"q":"99"}}<|call|>{"name":"bm25_search","arguments":{"t":1}}<|end|>'];
      const agent: Agent = {
        spec: 'refs',
        start: (ctx) => {
          r.prompt({ system: ctx.system, user: ctx.user, tools: ctx.tools });
          let turn = 0;
          return {
            async next(results) {
              if (turn > 0) r.toolResults(enc(written[turn - 1]!), results.map((x) => ({ call: { ...x.call, raw: '' }, result: x.result })));
              if (turn >= written.length) return { text: 'done', calls: [] };
              return { text: '', calls: r.parse(enc(written[turn++]!)).calls };
            },
          };
        },
      };
      const rollout = await runEpisode(agent, env, task);
      const [search, bad, title] = rollout.turns.flatMap((t) => t.calls);
      const refs = new EpisodeReferences();
      refs.setQuestion(task.query);
      expect(search!.arguments).toEqual({ query: refs.words.slice(0, 3).join(' ') });
      expect(search!.result.outcome).toBe('ok');
      expect(bad!.result).toMatchObject({ outcome: 'error', errorKind: 'bad_reference' });
      expect(bad!.result.content).toContain(`q: "99" is not a question word (words are numbered 1 to ${refs.words.length})`);
      const firstTitle = (JSON.parse(search!.result.content) as { hits: { title: string }[] }).hits[0]!.title;
      expect(title!.arguments).toEqual({ query: firstTitle });
      expect(title!.result.outcome).toBe('ok');
      expect(rollout.endReason).toBe('finish');
    });
  });
});
