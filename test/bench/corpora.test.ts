import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Analyzer } from '../../src/search/index.js';
import { corpusMissing, corpusQueries, corpusSource, CORPUS_KINDS, writeCorpus } from '../../bench/corpora/kinds.js';
import { fittedModel, loadFittedParams, pseudoWord, RankSampler } from '../../bench/corpora/fitted.js';
import { manPageFiles, manPassages, manQueries, PASSAGE_WORDS } from '../../bench/corpora/manpages.js';
import { StatsAccumulator, textStats } from '../../bench/corpora/stats.js';
import { readManPage, soTarget } from '../../bench/corpora/troff.js';
import { rng } from '../../bench/synth.js';

const MAN_ROOT = fileURLToPath(new URL('../fixtures/manpages', import.meta.url));
const page = (name: string) => gunzipSync(readFileSync(`${MAN_ROOT}/man1/${name}.1.gz`)).toString('utf8');
const digest = (xs: unknown[]) => createHash('sha256').update(JSON.stringify(xs)).digest('hex');

describe('fitted corpus', () => {
  it('gives the same bytes for the same seed, other bytes for another, and a prefix for a smaller size', () => {
    const model = fittedModel();
    const a = [...model.passages(400, 7)];
    expect(digest([...model.passages(400, 7)])).toBe(digest(a));
    expect(digest([...model.passages(400, 8)])).not.toBe(digest(a));
    expect([...model.passages(150, 7)]).toEqual(a.slice(0, 150));
    expect(model.queries(400, 50, 7)).toEqual(model.queries(400, 50, 7));
    expect(model.queries(400, 50, 7)).not.toEqual(model.queries(400, 50, 8));
    expect(new Set(a.map((c) => c.id)).size).toBe(a.length);
  });

  it('has every profile in the committed parameters, and names an unknown one', () => {
    const params = loadFittedParams();
    expect(Object.keys(params.profiles).sort()).toEqual(['embedded', 'manpages']);
    expect(() => fittedModel('nope', params)).toThrow(/no profile 'nope'.*known: embedded, manpages/);
  });

  it('reads like text at a small size: growing vocabulary, bursty terms, selective queries', async () => {
    const model = fittedModel();
    const n = 3000;
    const s = await textStats(model.passages(n, 1), model.queries(n, 300, 1));
    // The embedded profile's real corpus measures beta 0.61, burstiness 0.78, query-term df 1.2%
    // (bench/results/corpus-stats.json); i.i.d. words measure burstiness 1.0 and df 3%.
    expect(s.heaps_beta).toBeGreaterThan(0.5);
    expect(s.heaps_beta).toBeLessThan(0.8);
    expect(s.burstiness).toBeGreaterThan(0.6);
    expect(s.burstiness).toBeLessThan(0.9);
    expect(s.query_df_median).toBeLessThan(0.025);
    expect(s.query_terms).toBeGreaterThan(4);
    expect(s.chunk_terms).toBeGreaterThan(40);
    expect(s.chunk_terms).toBeLessThan(80);
  });

  it('keeps its vocabulary growing and its words bursty past the real corpus size', () => {
    const model = fittedModel();
    const at = (n: number) => {
      const acc = new StatsAccumulator([]);
      for (const p of model.rankPassages(n, 1)) acc.addChunk([...p.title, ...p.text]);
      return acc.result();
    };
    // The real corpus has 7,720 passages; sixteen times as many. Heaps: V grows as n^beta, beta
    // near the real 0.61 (a vocabulary that ran out would stay flat). Burstiness stays near the
    // real 0.78 (rare words scattered at random would take it to 1 at this size).
    const real = at(7720);
    const large = at(16 * 7720);
    expect(Math.log(large.vocabulary / real.vocabulary) / Math.log(16)).toBeGreaterThan(0.55);
    expect(large.burstiness).toBeLessThan(0.85);
  });

  it('samples ranks at their probabilities, head and tail', () => {
    const sampler = new RankSampler(Float64Array.from([0.4, 0.2, 0.1]), 0.3, 2);
    expect(sampler.probability(0)).toBeCloseTo(0.4, 9);
    let tail = 0;
    for (let r = 3; r < 1e6; r++) tail += sampler.probability(r);
    expect(tail).toBeCloseTo(0.3, 3);
    const r = rng(3);
    const counts = new Map<number, number>();
    const draws = 200_000;
    for (let i = 0; i < draws; i++) {
      const rank = sampler.sample(r());
      counts.set(rank, (counts.get(rank) ?? 0) + 1);
    }
    for (const rank of [0, 1, 2, 3, 4, 10]) expect((counts.get(rank) ?? 0) / draws).toBeCloseTo(sampler.probability(rank), 2);
  });

  it('makes up distinct words past the head that the analyzer keeps whole', () => {
    const analyzer = new Analyzer();
    const words = Array.from({ length: 2000 }, (_, i) => pseudoWord(20_000 + i * 7919));
    expect(new Set(words).size).toBe(words.length);
    for (const w of words.slice(0, 200)) expect(analyzer.terms(w)).toEqual([w]);
  });
});

describe('corpus statistics', () => {
  it('measures i.i.d. words as not bursty and repeated words as bursty', () => {
    const r = rng(5);
    const iid = new StatsAccumulator([]);
    const bursty = new StatsAccumulator([]);
    for (let d = 0; d < 2000; d++) {
      iid.addChunk(Array.from({ length: 50 }, () => Math.floor(r() * 500)));
      // Ten words of the chunk's own topic, five times each.
      const base = Math.floor(r() * 50) * 10;
      bursty.addChunk(Array.from({ length: 50 }, (_, i) => base + (i % 10)));
    }
    expect(iid.result().burstiness).toBeCloseTo(1, 1);
    expect(bursty.result().burstiness).toBeLessThan(0.5);
  });
});

describe('man pages', () => {
  it('reads a help2man page and an mdoc page as text by section', () => {
    const yes = readManPage(page('yes'));
    expect(yes).toMatchObject({ name: 'yes', section: '1', description: 'output a string repeatedly until killed' });
    expect(yes.sections.map((s) => s.heading)).toContain('REPORTING BUGS');
    expect(yes.sections.find((s) => s.heading === 'DESCRIPTION')!.paragraphs[0]).toBe("Repeatedly output a line with all specified STRING(s), or 'y'.");
    expect(yes.sections.find((s) => s.heading === 'COPYRIGHT')!.paragraphs[0]).toMatch(/^Copyright © 2022 Free Software Foundation/);
    const argv0 = readManPage(page('ssh-argv0'));
    expect(argv0).toMatchObject({ name: 'ssh-argv0', section: '1', description: 'replaces the old ssh command-name as hostname handling' });
    expect(argv0.sections.find((s) => s.heading === 'DESCRIPTION')!.paragraphs[0]).toMatch(/^ssh-argv0 replaces the old ssh command-name as hostname handling\. If you link/);
    expect(JSON.stringify(argv0)).not.toMatch(/\\f|^\./m);
  });

  it('knows an alias page and leaves it out of the corpus', () => {
    expect(soTarget(page('init'))).toBe('man1/systemd.1');
    expect(soTarget(page('yes'))).toBeUndefined();
    expect(manPageFiles(MAN_ROOT).map((f) => f.replace(/^.*\//, ''))).toEqual(['init.1.gz', 'ssh-argv0.1.gz', 'yes.1.gz']);
    const passages = [...manPassages(MAN_ROOT)];
    expect(new Set(passages.map((p) => p.id.replace(/#.*/, '')))).toEqual(new Set(['ssh-argv0.1', 'yes.1']));
    for (const p of passages) expect(p.text.split(' ').length).toBeLessThanOrEqual(PASSAGE_WORDS);
    expect(passages[0]!.title).toBe('ssh-argv0(1) NAME');
    const analyzer = new Analyzer();
    expect(manQueries(MAN_ROOT, (s) => analyzer.terms(s).length).sort()).toEqual(['output a string repeatedly until killed', 'replaces the old ssh command-name as hostname handling']);
  });

  it('names a missing man root', () => {
    expect(() => manPageFiles('no-such-man-root')).toThrow(/no-such-man-root is not a directory/);
  });
});

describe('corpus kinds', () => {
  it('streams every kind deterministically, the man pages up to the size they reach', async () => {
    for (const kind of CORPUS_KINDS) {
      const a = [...(await corpusSource(kind, 30, 3, MAN_ROOT))];
      expect(a.length, kind).toBeGreaterThan(0);
      expect([...(await corpusSource(kind, 30, 3, MAN_ROOT))], kind).toEqual(a);
      expect((await corpusQueries(kind, 30, 3, MAN_ROOT)).length, kind).toBeGreaterThan(0);
    }
    expect([...(await corpusSource('fitted', 30, 3))]).toHaveLength(30);
    const all = [...manPassages(MAN_ROOT)];
    expect([...(await corpusSource('manpages', 1_000_000, 1, MAN_ROOT))]).toEqual(all);
    expect([...(await corpusSource('manpages', 2, 1, MAN_ROOT))]).toEqual(all.slice(0, 2));
  });

  it('writes a corpus as JSONL and counts what it wrote', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-corpora-'));
    try {
      const path = join(dir, 'fitted.jsonl');
      expect(await writeCorpus(path, 'fitted', 25, 1)).toBe(25);
      const lines = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(lines).toEqual([...(await corpusSource('fitted', 25, 1))]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says why the man-page corpus is missing', () => {
    expect(corpusMissing('manpages', 'no-such-man-root')).toMatch(/no man pages at no-such-man-root/);
    expect(corpusMissing('fitted', 'no-such-man-root')).toBeUndefined();
  });
});
