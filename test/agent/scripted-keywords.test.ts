import { describe, expect, it } from 'vitest';
import { keywordQuery } from '../../src/suites/search/agents.js';
import { buildIndex, openIndex } from '../../src/search/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('keywordQuery', () => {
  it('keeps the words BM25 reads, as written and in order', () => {
    expect(keywordQuery('What government position was held by the woman who portrayed Corliss Archer in the film "Kiss and Tell"?')).toBe('government position held woman portrayed Corliss Archer film Kiss Tell');
    expect(keywordQuery("Who is O'Neill's father?")).toBe("O'Neill's father");
    // A query of stopwords only is left whole (the search tool reports it).
    expect(keywordQuery('Who was it?')).toBe('Who was it?');
  });

  it('finds exactly what the whole question finds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-kw-'));
    try {
      const chunks = [
        { id: 'c1', title: 'Kiss and Tell (1945 film)', text: 'Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss Archer.' },
        { id: 'c2', title: 'Shirley Temple', text: 'Shirley Temple Black was an American actress and later a diplomat, ambassador to Ghana.' },
        { id: 'c3', title: 'Corliss Archer', text: 'Meet Corliss Archer is a radio comedy about a teenage girl.' },
        { id: 'c4', title: 'Ghana', text: 'Ghana is a country in West Africa; its government is a republic.' },
      ];
      await buildIndex((async function* () { yield* chunks; })(), join(dir, 'idx'));
      const index = await openIndex(join(dir, 'idx'));
      for (const q of ['What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?', 'Which country was Shirley Temple an ambassador to?']) {
        const whole = index.search(q, 4).map((h) => [h.id, h.score]);
        expect(whole.length).toBeGreaterThan(0);
        expect(index.search(keywordQuery(q), 4).map((h) => [h.id, h.score])).toEqual(whole);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
