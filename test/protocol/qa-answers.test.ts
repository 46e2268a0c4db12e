import { describe, expect, it } from 'vitest';
import { trainBpe } from '../../src/protocol/compact/bpe.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';
import { localRenderer } from '../../src/protocol/compact/local.js';
import { docLine, parseDocLines } from '../../src/protocol/tags.js';
import { writeTurnTokens } from '../../src/protocol/write-turn.js';
import { TEXTS } from '../backend/helpers.js';

const QUESTION = 'Who was the first president of the association which published Journal of Psychotherapy Integration?';
const HIT1 = 'Journal of Psychotherapy Integration is a quarterly journal published by the American Psychological Association on behalf of the Society for the Exploration of Psychotherapy Integration. It was established in 1991.';
const HIT2 = 'The American Psychological Association (APA) is the largest organization of psychologists in the United States. Its first president was G. Stanley Hall, elected in July 1892.';
const tok = trainBpe([...TEXTS, QUESTION, HIT1, HIT2], 500, [...SPECIALS]);
const enc = (s: string) => tok.encode(s);
const QA_TOOLS = [
  { name: 'search', description: '', parameters: {} },
  { name: 'answer', description: '', parameters: {} },
];
const RESULT = {
  outcome: 'ok' as const,
  content: [docLine(1, { title: 'Journal of Psychotherapy Integration', text: HIT1 }), docLine(2, { title: 'American Psychological Association', text: HIT2 }), 'That was your last search. Answer now inside <answer></answer>.'].join('\n'),
  chunkIds: ['aaaaaaaaaa', 'bbbbbbbbbb'],
};

/** A renderer in the middle of a QA episode: the question asked and one search's result shown. */
function shownEpisode() {
  const r = localRenderer(tok).forEpisode();
  const prompt = r.decode(r.prompt({ system: 'S', user: QUESTION, tools: QA_TOOLS }));
  const shown = r.renderResults([RESULT]);
  return { r, prompt, shown };
}

describe('QA answers by reference (the local model points at what it was shown)', () => {
  it('Search-R1 document lines parse back into titles and texts; other lines are kept apart', () => {
    expect(parseDocLines(RESULT.content, RESULT.chunkIds)).toEqual({
      docs: [
        { id: 'aaaaaaaaaa', title: 'Journal of Psychotherapy Integration', text: HIT1 },
        { id: 'bbbbbbbbbb', title: 'American Psychological Association', text: HIT2 },
      ],
      other: ['That was your last search. Answer now inside <answer></answer>.'],
    });
    // Without the result's chunk ids, a document is known by its title.
    expect(parseDocLines(docLine(1, { title: 'Kiss and Tell (1945 film)', text: 'A film (1945).' }))!.docs[0]).toEqual({ id: 'title:Kiss and Tell (1945 film)', title: 'Kiss and Tell (1945 film)', text: 'A film (1945).' });
    expect(parseDocLines('Error (bad_query): no words')).toBeUndefined();
  });

  it('shows the QA search as hit lines with numbered spans, and numbers the question words', () => {
    const { prompt, shown } = shownEpisode();
    expect(prompt).toContain('words: 1 first 2 president');
    expect(shown).toBe(
      '<|tool|>1 Journal of Psychotherapy Integration [5-7]: 1 American Psychological Association; 2 Society; 3 1991\n' +
        '2 American Psychological Association [3]: 4 APA; 5 G. Stanley Hall; 6 United States\n' +
        'That was your last search. Answer now inside <answer></answer>.<|end|><|assistant|>',
    );
  });

  it('expands answer {"s":N} to the span and {"t":N} to the title before the environment sees it', () => {
    const { r } = shownEpisode();
    const turn = r.parse(enc('<|call|>{"name":"answer","arguments":{"s":5}}<|end|>'));
    expect(turn.calls[0]).toMatchObject({ name: 'answer', arguments: { answer: 'G. Stanley Hall' }, status: 'ok' });
    expect(r.parse(enc('<|call|>{"name":"answer","arguments":{"t":2}}<|end|>')).calls[0]!.arguments).toEqual({ answer: 'American Psychological Association' });
    expect(r.parse(enc('<|call|>{"name":"answer","arguments":{"answer":"yes"}}<|end|>')).calls[0]!.arguments).toEqual({ answer: 'yes' });
    // A follow-up search of a span works as in the search suite: the span and the question words its hit lacks.
    expect(r.parse(enc('<|call|>{"name":"search","arguments":{"s":1}}<|end|>')).calls[0]!.arguments).toEqual({ query: 'American Psychological Association first president' });
  });

  it('a bad answer reference is not run: the model is told what is wrong', () => {
    const { r } = shownEpisode();
    const bad = (args: string) => r.parse(enc(`<|call|>{"name":"answer","arguments":${args}}<|end|>`)).calls[0]!.argumentError;
    expect(bad('{"s":9}')).toContain('s: 9 is not a shown span (spans are numbered 1 to 6)');
    expect(bad('{"s":"1-2"}')).toContain('is not a shown span');
    expect(bad('{"t":7}')).toContain('t: 7 is not a hit shown in this episode');
    expect(bad('{"t":[1,2]}')).toContain('an answer names one hit');
    expect(bad('{"s":1,"t":1}')).toContain('answer takes one of');
    expect(bad('{"s":1,"answer":"x"}')).toContain('answer takes one of');
    expect(bad('{"q":"1-"}')).toContain('answer takes one of');
  });

  it('a teacher answer that is a shown span or title is written as the reference; anything else as text', () => {
    const { r } = shownEpisode();
    const written = (answer: string) => r.decode(writeTurnTokens(r, { calls: [{ name: 'answer', arguments: { answer } }] }));
    expect(written('G. Stanley Hall')).toBe('<|call|>{"name":"answer","arguments":{"s":5}}<|end|>');
    expect(written('American Psychological Association')).toBe('<|call|>{"name":"answer","arguments":{"s":1}}<|end|>');
    expect(written('Journal of Psychotherapy Integration')).toBe('<|call|>{"name":"answer","arguments":{"t":1}}<|end|>');
    expect(written('yes')).toBe('<|call|>{"name":"answer","arguments":{"answer":"yes"}}<|end|>');
  });
});
