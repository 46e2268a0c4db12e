import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteTranscripts } from '../../src/backend/local/suite-transcripts.js';
import { trainLocalTokenizer, tokenizerTexts } from '../../src/backend/local/tokenizer.js';
import { CompactRenderer } from '../../src/protocol/compact/renderer.js';
import { suiteOf, SUITE_KINDS } from '../../src/suites/registry.js';

/**
 * A base model built on demand learns its vocabulary from every registered suite's oracle episodes
 * (issue #36: a new suite needs no line outside its folder and the registry to be tokenized well).
 */
describe('suite transcripts for the tokenizer', () => {
  let home: string;
  const saved = process.env['SLEUTH_HOME'];
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'sleuth-transcripts-'));
    process.env['SLEUTH_HOME'] = home;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env['SLEUTH_HOME'];
    else process.env['SLEUTH_HOME'] = saved;
    rmSync(home, { recursive: true, force: true });
  });

  it('holds each registered suite\'s episodes, its own tools called, the same every time', async () => {
    const texts = await suiteTranscripts(2);
    expect(texts).toHaveLength(2 * SUITE_KINDS.length);
    SUITE_KINDS.forEach((kind, s) => {
      const tools = suiteOf(kind).tools.map((t) => t.name);
      for (const text of texts.slice(2 * s, 2 * s + 2)) {
        expect(text.startsWith('<|system|>')).toBe(true);
        const called = [...text.matchAll(/<\|call\|>\{"name":"([^"]+)"/g)].map((m) => m[1]!);
        expect(called.length).toBeGreaterThan(0);
        for (const name of called) expect(tools).toContain(name);
      }
    });
    expect(await suiteTranscripts(2)).toEqual(texts);
  });

  it('parse back to ok calls, and teach the tokenizer shorter encodings of their suites', async () => {
    const texts = await suiteTranscripts(6);
    const corpus = tokenizerTexts([{ id: 'c000000001', title: 'Prose', text: 'plain paragraphs of text about history, films and places. '.repeat(200) }], 20_000, 0);
    const without = trainLocalTokenizer(corpus, 700);
    const withSuites = trainLocalTokenizer([...corpus, ...texts.filter((_, i) => i % 6 !== 5)], 700);
    // The held-out episode of each suite: fewer tokens with the suites' transcripts in the training text.
    for (const held of texts.filter((_, i) => i % 6 === 5)) expect(withSuites.encode(held).length).toBeLessThan(without.encode(held).length);
    const renderer = new CompactRenderer(withSuites);
    const turn = texts[0]!.split('<|assistant|>')[1]!;
    const calls = renderer.parse(withSuites.encode(turn.slice(0, turn.indexOf('<|end|>') + '<|end|>'.length))).calls;
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.status === 'ok')).toBe(true);
  });
});
