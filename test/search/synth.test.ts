import { describe, expect, it } from 'vitest';
import { embeddedQuestions, embeddedWordDistribution, synthChunks } from '../../bench/synth.js';

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
});
