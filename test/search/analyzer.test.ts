import { describe, expect, it } from 'vitest';
import { porter2 } from '../../src/search/porter2.js';
import { Analyzer } from '../../src/search/analyzer.js';
import { scanWords, WordTable } from '../../src/search/tokenize.js';

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
  it("stems the names of Object.prototype's members as words, not as the members", () => {
    // The exceptions table once was an object literal: 'constructor' returned Object itself.
    expect(porter2('constructor')).toBe('constructor');
    expect(porter2('constructors')).toBe('constructor');
    expect(porter2('tostring')).toBe('tostr');
    for (const name of Object.getOwnPropertyNames(Object.prototype)) expect(typeof porter2(name.toLowerCase())).toBe('string');
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

describe('scanWords', () => {
  const REFERENCE = /[\p{L}\p{M}\p{N}]+(?:['\u2019\u02bc][\p{L}\p{M}\p{N}]+)*/gu;
  const spans = (text: string) => {
    const out: [number, number][] = [];
    scanWords(text, (s, e) => out.push([s, e]));
    return out;
  };
  it('splits exactly like the Unicode word pattern, on random text', () => {
    const alphabet = ['a', 'Z', '7', ' ', "'", '’', '-', '.', 'é', 'e\u0301', '東', '\u{1d400}', '\u{1f600}', '٣', '\ud800', '\n', 'ß'];
    let seed = 42;
    const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let n = 0; n < 500; n++) {
      const text = Array.from({ length: Math.floor(next() * 30) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
      const want = [...text.matchAll(REFERENCE)].map((m) => [m.index, m.index + m[0].length]);
      expect(spans(text), JSON.stringify(text)).toEqual(want);
      // The indexer's specialised loop sees the same words.
      const table = new WordTable();
      const seen: string[] = [];
      const out = new Int32Array(64);
      const n2 = table.lookupAll(text, (w) => seen.push(w) - 1, out, 0);
      const words = want.map(([s, e]) => text.slice(s!, e!));
      expect([...out.subarray(0, n2)].map((v) => seen[v]), JSON.stringify(text)).toEqual(words);
    }
  });
  it('gives equal words equal hashes, so WordTable finds them in place', () => {
    const table = new WordTable();
    const text = 'film Film film films';
    const found: (number | undefined)[] = [];
    scanWords(text, (s, e, h) => {
      const v = table.get(text, s, e, h);
      found.push(v);
      if (v === undefined) table.add(text.slice(s, e), h, table.size);
    });
    expect(found).toEqual([undefined, undefined, 0, undefined]);
    for (let i = 0; i < 100_000; i++) table.add(`w${i}`, i * 2654435761 >>> 0, i);
    expect(table.get('x w77777 y', 2, 8, 77777 * 2654435761 >>> 0)).toBe(77777);
  });
});
