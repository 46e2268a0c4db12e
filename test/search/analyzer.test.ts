import { describe, expect, it } from 'vitest';
import { porter2 } from '../../src/search/porter2.js';
import { Analyzer } from '../../src/search/analyzer.js';

// Input/output pairs from the published Porter2 description and its sample vocabulary
// (snowballstem.org/algorithms/english/stemmer.html).
const PUBLISHED: [string, string][] = [
  ['consign', 'consign'], ['consigned', 'consign'], ['consigning', 'consign'], ['consignment', 'consign'],
  ['consist', 'consist'], ['consisted', 'consist'], ['consistency', 'consist'], ['consistent', 'consist'],
  ['consistently', 'consist'], ['consisting', 'consist'], ['consists', 'consist'], ['consolation', 'consol'],
  ['consolations', 'consol'], ['consolatory', 'consolatori'], ['console', 'consol'], ['consoled', 'consol'],
  ['consoles', 'consol'], ['consolidate', 'consolid'], ['consolidated', 'consolid'], ['consolidating', 'consolid'],
  ['consoling', 'consol'], ['consolingly', 'consol'], ['consols', 'consol'], ['consonant', 'conson'],
  ['consort', 'consort'], ['consorted', 'consort'], ['consorting', 'consort'], ['conspicuous', 'conspicu'],
  ['conspicuously', 'conspicu'], ['conspiracy', 'conspiraci'], ['conspirator', 'conspir'], ['conspirators', 'conspir'],
  ['conspire', 'conspir'], ['conspired', 'conspir'], ['conspiring', 'conspir'], ['constable', 'constabl'],
  ['constables', 'constabl'], ['constance', 'constanc'], ['constancy', 'constanc'], ['constant', 'constant'],
  ['knack', 'knack'], ['knackeries', 'knackeri'], ['knacks', 'knack'], ['knag', 'knag'], ['knave', 'knave'],
  ['knaves', 'knave'], ['knavish', 'knavish'], ['kneaded', 'knead'], ['kneading', 'knead'], ['knee', 'knee'],
  ['kneel', 'kneel'], ['kneeled', 'kneel'], ['kneeling', 'kneel'], ['kneels', 'kneel'], ['knees', 'knee'],
  ['knell', 'knell'], ['knelt', 'knelt'], ['knew', 'knew'], ['knick', 'knick'], ['knif', 'knif'], ['knife', 'knife'],
  ['knight', 'knight'], ['knightly', 'knight'], ['knights', 'knight'], ['knit', 'knit'], ['knits', 'knit'],
  ['knitted', 'knit'], ['knitting', 'knit'], ['knives', 'knive'], ['knob', 'knob'], ['knobs', 'knob'],
  ['knock', 'knock'], ['knocked', 'knock'], ['knocker', 'knocker'], ['knockers', 'knocker'], ['knocking', 'knock'],
  ['knocks', 'knock'], ['knopp', 'knopp'], ['knot', 'knot'], ['knots', 'knot'],
  // Examples given in the rule descriptions.
  ['ties', 'tie'], ['cries', 'cri'], ['gas', 'gas'], ['this', 'this'], ['gaps', 'gap'], ['kiwis', 'kiwi'],
  ['cry', 'cri'], ['by', 'by'], ['say', 'say'], ['generous', 'generous'], ['communism', 'communism'],
  ['arsenal', 'arsenal'], ['skies', 'sky'], ['dying', 'die'], ['news', 'news'], ['inning', 'inning'],
  ['proceed', 'proceed'], ['hopping', 'hop'], ['hoped', 'hope'], ['luxuriating', 'luxuri'], ['agreed', 'agre'],
  ["kiss's", 'kiss'], ['youth', 'youth'], ['played', 'play'], ['happily', 'happili'],
  ['generalization', 'general'], ['relational', 'relat'], ['national', 'nation'], ['hopefulness', 'hope'],
  ['electrical', 'electr'], ['adoption', 'adopt'], ['controll', 'control'], ['rate', 'rate'],
];

describe('porter2', () => {
  it('matches the published examples', () => {
    const wrong = PUBLISHED.filter(([w, s]) => porter2(w) !== s).map(([w, s]) => `${w}: want ${s}, got ${porter2(w)}`);
    expect(wrong).toEqual([]);
  });
  it('leaves words of two letters or fewer alone', () => {
    expect(porter2('is')).toBe('is');
    expect(porter2('a')).toBe('a');
  });
});

describe('Analyzer', () => {
  it('splits Unicode words, lower-cases, drops stopwords and stems', () => {
    const a = new Analyzer();
    expect(a.terms('The Café in São Paulo was running, Kiss’s films!')).toEqual(['café', 'são', 'paulo', 'run', 'kiss', 'film']);
    expect(a.terms('1945 film — 東京')).toEqual(['1945', 'film', '東京']);
  });
  it('is configurable', () => {
    const a = new Analyzer({ stopwords: 'none', stemmer: 'none', minTokenLength: 2 });
    expect(a.terms('The running a Men')).toEqual(['the', 'running', 'men']);
    const b = new Analyzer({ stopwords: ['running'], lowercase: false, stemmer: 'none' });
    expect(b.terms('The running')).toEqual(['The']);
  });
  it('reports offsets into the original text', () => {
    const a = new Analyzer();
    const text = 'Ünïcode Kiss’s film';
    const spans = a.spans(text);
    expect(spans.map((s) => text.slice(s.start, s.end))).toEqual(['Ünïcode', 'Kiss’s', 'film']);
  });
});
