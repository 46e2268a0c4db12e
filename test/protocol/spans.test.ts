import { describe, expect, it } from 'vitest';
import { trainBpe } from '../../src/protocol/compact/bpe.js';
import { EpisodeReferences } from '../../src/protocol/compact/references.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';
import { localRenderer, LOCAL_SPANS } from '../../src/protocol/compact/local.js';
import { candidateSpans, rawSpans } from '../../src/protocol/compact/spans.js';
import { Analyzer } from '../../src/search/analyzer.js';
import { writeTurnTokens } from '../../src/protocol/write-turn.js';
import { TEXTS } from '../backend/helpers.js';

const QUESTION = 'Who was the first president of the association which published Journal of Psychotherapy Integration?';
const HIT1 = 'Journal of Psychotherapy Integration is a quarterly journal published by the American Psychological Association on behalf of the Society for the Exploration of Psychotherapy Integration. It was established in 1991. Although small, it is read widely.';
const HIT2 = 'The American Psychological Association (APA) is the largest organization of psychologists in the United States. Its first president was G. Stanley Hall, elected in July 1892.';
const tok = trainBpe([...TEXTS, QUESTION, HIT1, HIT2], 500, [...SPECIALS]);
const enc = (s: string) => tok.encode(s);
const terms = (s: string) => new Set(new Analyzer().terms(s));

describe('candidate spans of a hit text', () => {
  it('finds capitalised runs with their connectors, quoted phrases and numbers with a month, in order', () => {
    expect(rawSpans(HIT1).map((s) => s.text)).toEqual(['Journal of Psychotherapy Integration', 'American Psychological Association', 'Society', 'Exploration of Psychotherapy Integration', '1991']);
    expect(rawSpans(HIT2).map((s) => s.text)).toEqual(['American Psychological Association', 'APA', 'United States', 'G. Stanley Hall', 'July 1892']);
    // A quoted title is one span (the capitalised run inside it is the title's); a lone capitalised word opening a sentence is none.
    expect(rawSpans('Actor David "Tarw" Jones played in "Kiss and Tell". Players came. Paris won.').map((s) => s.text)).toEqual(['Actor David', 'Tarw', 'Jones', 'Kiss and Tell']);
    // Stopwords at either end are cut: "The", "In"; runs stop at a comma.
    expect(rawSpans('In The Hague, Dutch law applies').map((s) => s.text)).toEqual(['Hague', 'Dutch']);
    expect(rawSpans('')).toEqual([]);
  });

  it('keeps spans that bring a word the question and the title lack, once per episode, at most max', () => {
    const seen = new Set<string>();
    const first = candidateSpans(HIT1, { question: terms(QUESTION), title: 'Journal of Psychotherapy Integration', seen, max: 3 });
    // Nearest a question word first: "published by the American Psychological Association", "Integration. It was established in 1991".
    expect(first).toEqual(['American Psychological Association', 'Society', '1991']);
    // The same span in a later hit is not shown again; max bounds the rest. G. Stanley Hall stands by "first president".
    expect(candidateSpans(HIT2, { question: terms(QUESTION), title: 'American Psychological Association', seen, max: 2 })).toEqual(['APA', 'G. Stanley Hall']);
    // A snippet cut mid-text opens with an ellipsis, which is no part of the first name.
    expect(rawSpans('…America Corporation completed its purchase of Countrywide Financial').map((x) => x.text)).toEqual(['America Corporation', 'Countrywide Financial']);
    expect(candidateSpans(HIT2, { question: terms(QUESTION), title: '', seen: new Set(), max: 0 })).toEqual([]);
  });
});

function refsWithSpans(): EpisodeReferences {
  const refs = new EpisodeReferences();
  refs.setQuestion(QUESTION);
  refs.noteTitle(1, 'Journal of Psychotherapy Integration');
  refs.noteText(1, HIT1);
  refs.noteSpans(1, 'Journal of Psychotherapy Integration', HIT1, 3);
  refs.noteTitle(2, 'American Psychological Association');
  refs.noteText(2, HIT2);
  refs.noteSpans(2, 'American Psychological Association', HIT2, 3);
  return refs;
}

describe('span references', () => {
  it('expand s with the words its hit lacks, or with the words named, and a grep for the span itself', () => {
    const refs = refsWithSpans();
    expect(refs.words).toEqual(['first', 'president', 'association', 'published', 'Journal', 'Psychotherapy', 'Integration']);
    expect(refs.spans.map((s) => `${s.hit}:${s.text}`)).toEqual(['1:American Psychological Association', '1:Society', '1:1991', '2:APA', '2:G. Stanley Hall', '2:United States']);
    // Hit 1 has association, published, Journal, Psychotherapy, Integration: first and president are left to ask.
    expect(refs.missingWords(1)).toEqual([1, 2]);
    expect(refs.expand('bm25_search', { s: 1 })).toEqual({ ok: true, arguments: { query: 'American Psychological Association first president' } });
    expect(refs.expand('bm25_search', { s: 1, q: '1-', k: 5 })).toEqual({ ok: true, arguments: { query: 'American Psychological Association first president association published Journal Psychotherapy Integration', k: 5 } });
    expect(refs.expand('bm25_search', { s: '1,4', q: 2 })).toEqual({ ok: true, arguments: { query: 'American Psychological Association APA president' } });
    expect(refs.expand('grep_corpus', { s: 5 })).toEqual({ ok: true, arguments: { pattern: 'G\\.\\s+Stanley\\s+Hall' } });
  });

  it('answer a span that was never shown with an error naming it', () => {
    const refs = refsWithSpans();
    expect(refs.expand('bm25_search', { s: 7 })).toEqual({ ok: false, error: 's: 7 is not a shown span (spans are numbered 1 to 6)' });
    expect(refs.expand('bm25_search', { s: 'x' })).toMatchObject({ ok: false });
    expect(refs.expand('grep_corpus', { s: '1-2' })).toMatchObject({ ok: false, error: expect.stringContaining('takes one reference') });
    expect(refs.expand('read_document', { s: 1 })).toMatchObject({ ok: false, error: expect.stringContaining('read_document takes no q, t, h or s references') });
    const empty = new EpisodeReferences();
    empty.setQuestion(QUESTION);
    expect(empty.expand('bm25_search', { s: 1 })).toEqual({ ok: false, error: 's: 1 is not a shown span (spans are numbered from 1, and none is shown yet)' });
  });

  it("write a teacher's follow-up of a span as s, and it expands back to the same query", () => {
    const refs = refsWithSpans();
    for (const query of ['American Psychological Association first president', 'American Psychological Association first president Journal', 'G. Stanley Hall']) {
      const written = refs.compress('bm25_search', { query, k: 5 });
      const back = refs.expand('bm25_search', written);
      expect(back.ok && (back.arguments as { query: string }).query).toBe(query);
    }
    expect(refs.compress('bm25_search', { query: 'American Psychological Association first president', k: 5 })).toEqual({ k: 5, s: 1 });
    expect(refs.compress('bm25_search', { query: 'American Psychological Association first president Journal' })).toEqual({ s: 1, q: '1-2,5' });
    // A span alone (no question word) cannot be written as s, which adds the missing words: kept as text.
    expect(refs.compress('bm25_search', { query: 'American Psychological Association' })).toEqual({ query: 'American Psychological Association' });
  });

  it('curate s: every shown hit whose title or text holds the span', () => {
    const refs = refsWithSpans();
    expect(refs.hitsWithSpan(1)).toEqual([1, 2]);
    expect(refs.hitsWithSpan(5)).toEqual([2]);
    expect(refs.expandCurate({ s: 1 })).toEqual({ ok: true, arguments: { ids: [1, 2] } });
    expect(refs.expandCurate({ s: '5', ids: [1] })).toEqual({ ok: true, arguments: { ids: [1, 2] } });
    expect(refs.expandCurate({ s: 9 })).toMatchObject({ ok: false, error: expect.stringContaining('s: 9 is not a shown span') });
    expect(refs.spanCovering([2, 1])).toBe(1);
    expect(refs.spanCovering([2])).toBe(4);
  });

  it('curate top: the top k of every result list, or of each list by its own number, and a teacher\'s set written that way', () => {
    const r = localRenderer(tok).forEpisode();
    r.prompt({ system: 'S', user: QUESTION, tools: [{ name: 'bm25_search', description: '', parameters: {} }] });
    const list = (ids: string[]) => JSON.stringify({ hits: ids.map((id) => ({ id, title: `T ${id}`, snippet: 'x' })) });
    r.renderToolContent(list(['a1', 'a2', 'a3', 'a4']));
    // The second search shows a2 again (number 2) and two new hits (5, 6).
    r.renderToolContent(list(['b5', 'a2', 'b6']));
    const parsed = r.parse(enc('<|call|>{"name":"curate","arguments":{"top":"2,1"}}<|call|>{"name":"curate","arguments":{"top":1}}<|call|>{"name":"curate","arguments":{"top":"3,9,1"}}<|call|>{"name":"curate","arguments":{"top":"x"}}<|end|>'));
    expect(parsed.calls.map((c) => c.arguments)).toEqual([{ ids: ['a1', 'a2', 'b5'] }, { ids: ['a1', 'b5'] }, { top: '3,9,1' }, { top: 'x' }]);
    expect(parsed.calls[2]!.argumentError).toContain('top: "3,9,1" is not a number of hits per result list (2 result lists shown');
    expect(parsed.calls[3]!.argumentError).toContain('top: "x"');
    const written = (ids: string[]) => r.decode(writeTurnTokens(r, { calls: [{ name: 'curate', arguments: { ids } }] }));
    // The simplest form that names the set: top 3 of the first list, top 1 of the later one.
    expect(written(['a1', 'a2', 'a3', 'b5'])).toBe('<|call|>{"name":"curate","arguments":{"top":"3,1"}}<|end|>');
    expect(written(['a1', 'b5'])).toBe('<|call|>{"name":"curate","arguments":{"top":"1"}}<|end|>');
    expect(written(['a1', 'a2', 'a3', 'b5', 'b6'])).toBe('<|call|>{"name":"curate","arguments":{"top":"3"}}<|end|>');
    // Every hit shown stays "1-"; a set that is no list's top stays hit numbers.
    expect(written(['a1', 'a2', 'a3', 'a4', 'b5', 'b6'])).toBe('<|call|>{"name":"curate","arguments":{"ids":"1-"}}<|end|>');
    expect(written(['a3'])).toBe('<|call|>{"name":"curate","arguments":{"ids":"3"}}<|end|>');
    // Two runs that are no list's top stay hit numbers too.
    expect(written(['a2', 'a4'])).toBe('<|call|>{"name":"curate","arguments":{"ids":"2,4"}}<|end|>');
    // A third list: "2,1" is the top 2 of the first and the top 1 of each later one.
    r.renderToolContent(list(['c7', 'c8']));
    expect(r.parse(enc('<|call|>{"name":"curate","arguments":{"top":"2,1"}}<|end|>')).calls[0]!.arguments).toEqual({ ids: ['a1', 'a2', 'b5', 'c7'] });
    expect(written(['a1', 'a2', 'b5', 'c7'])).toBe('<|call|>{"name":"curate","arguments":{"top":"2,1"}}<|end|>');
  });

  it('round-trip through the local renderer: spans on hit lines, s in searches and curates, real calls out', () => {
    const r = localRenderer(tok).forEpisode();
    const tools = [{ name: 'bm25_search', description: '', parameters: {} }];
    r.prompt({ system: 'S', user: QUESTION, tools });
    const hits = { outcome: 'ok' as const, content: JSON.stringify({ hits: [{ id: 'aaaaaaaaaa', title: 'Journal of Psychotherapy Integration', snippet: HIT1 }, { id: 'bbbbbbbbbb', title: 'American Psychological Association', snippet: HIT2 }], seen: 2, curated: 0 }), chunkIds: ['aaaaaaaaaa', 'bbbbbbbbbb'] };
    const shown = r.renderToolContent(hits.content);
    expect(LOCAL_SPANS).toBe(3);
    expect(shown).toBe('seen=2 curated=0\n1 Journal of Psychotherapy Integration [5-7]: 1 American Psychological Association; 2 Society; 3 1991\n2 American Psychological Association [3]: 4 APA; 5 G. Stanley Hall; 6 United States');
    // A hit shown again is its number and title only, with no new spans.
    expect(r.renderToolContent(hits.content)).toBe('seen=2 curated=0\n1 Journal of Psychotherapy Integration [5-7]\n2 American Psychological Association [3]');
    const turn = r.parse(enc('<|call|>{"name":"bm25_search","arguments":{"k":5,"s":1}}<|call|>{"name":"curate","arguments":{"s":5}}<|call|>{"name":"curate","arguments":{"s":8}}<|end|>'));
    expect(turn.calls.map((c) => c.arguments)).toEqual([{ k: 5, query: 'American Psychological Association first president' }, { ids: ['bbbbbbbbbb'] }, { s: 8 }]);
    expect(turn.calls[2]!.argumentError).toContain('s: 8 is not a shown span');
    // A teacher's curate of one run of hit numbers stays hit numbers, even where a span names the same hits.
    expect(r.decode(writeTurnTokens(r, { calls: [{ name: 'curate', arguments: { ids: ['bbbbbbbbbb'] } }] }))).toBe('<|call|>{"name":"curate","arguments":{"ids":"2"}}<|end|>');
    expect(r.decode(writeTurnTokens(r, { calls: [{ name: 'bm25_search', arguments: { query: 'American Psychological Association first president', k: 5 } }] }))).toBe('<|call|>{"name":"bm25_search","arguments":{"k":5,"s":1}}<|end|>');
  });
});
