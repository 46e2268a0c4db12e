import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Analyzer } from '../../src/search/index.js';
import { embeddedQuestions, embeddedTopics, embeddedWordDistribution, MAIN_TOPIC_SHARE, synthChunks, synthQueries, synthSource, topicalChunks } from '../../bench/synth.js';

describe('bench synthetic corpus', () => {
  it('is deterministic, ~150 words a chunk, drawn from the embedded vocabulary', async () => {
    const d = await embeddedWordDistribution();
    expect(d.words.length).toBe(d.cdf.length);
    expect(d.cdf[d.cdf.length - 1]).toBeCloseTo(1, 9);
    const a = [...synthChunks(50, d, 7)];
    const b = [...synthChunks(50, d, 7)];
    const c = [...synthChunks(50, d, 8)];
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const lengths = a.map((x) => x.text.split(' ').length);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(120);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(180);
    const vocab = new Set(d.words);
    expect(a.every((x) => x.text.split(' ').every((w) => vocab.has(w)))).toBe(true);
    expect(a[3]!.id).toBe('syn00000003');
  });
  it('uses the embedded questions as queries', () => {
    const qs = embeddedQuestions();
    expect(qs.length).toBeGreaterThan(100);
    expect(qs).toContain('What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?');
  });
  it('topical: deterministic, each chunk about its topic, queries from the topics', async () => {
    const d = await embeddedWordDistribution();
    const topics = await embeddedTopics();
    expect(topics.length).toBeGreaterThan(1000);
    const a = [...topicalChunks(200, topics, d, 7)];
    expect([...topicalChunks(200, topics, d, 7)]).toEqual(a);
    expect([...topicalChunks(200, topics, d, 8)]).not.toEqual(a);
    expect(a[3]!.id).toBe('top00000003');
    const lengths = a.map((x) => x.text.split(' ').length);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(120);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(180);
    // Each chunk's title is its main topic's, and about MAIN_TOPIC_SHARE of its words (at least)
    // are that topic's words: the text is about something, unlike the i.i.d. corpus's.
    const byTitle = new Map(topics.map((t) => [t.title, new Set(t.words)]));
    const shares = a.map((c) => {
      const own = byTitle.get(c.title)!;
      const words = c.text.split(' ');
      return words.filter((w) => own.has(w)).length / words.length;
    });
    const mean = shares.reduce((s, x) => s + x, 0) / shares.length;
    expect(mean).toBeGreaterThan(MAIN_TOPIC_SHARE);
    const iid = [...synthChunks(200, d, 7)];
    const iidMean = iid.reduce((s, c) => s + c.text.split(' ').filter((w) => byTitle.get(topics[0]!.title)!.has(w)).length / c.text.split(' ').length, 0) / iid.length;
    expect(mean).toBeGreaterThan(iidMean + 0.2);
    // The stream the benchmarks write is the same generator: a fixed digest pins it across runs.
    const digest = createHash('sha256');
    for (const c of await synthSource('topical', 1000, 1)) digest.update(JSON.stringify(c) + '\n');
    const again = createHash('sha256');
    for (const c of await synthSource('topical', 1000, 1)) again.update(JSON.stringify(c) + '\n');
    expect(digest.digest('hex')).toBe(again.digest('hex'));
    const queries = await synthQueries('topical');
    expect(queries).toEqual(await synthQueries('topical'));
    expect(queries.length).toBe(1000);
    const analyzer = new Analyzer();
    const words = new Set(topics.flatMap((t) => t.words));
    for (const q of queries) {
      const n = q.split(' ').length;
      expect(n).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThanOrEqual(5);
      expect(q.split(' ').every((w) => words.has(w) && analyzer.terms(w).length > 0)).toBe(true);
    }
  });
});
