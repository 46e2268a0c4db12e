import { describe, expect, it } from 'vitest';
import { pretrain } from '../../src/backend/local/pretrain.js';
import { syntheticTranscripts, tokenizerTexts, trainLocalTokenizer } from '../../src/backend/local/tokenizer.js';
import { CompactRenderer } from '../../src/protocol/compact/renderer.js';
import { InputError } from '../../src/errors.js';
import { ensureWasm, TEXTS, tinyBackend } from './helpers.js';

const CHUNKS = TEXTS.map((text, i) => ({ id: `c${i}0000000${i}`.slice(0, 10), title: text.split(' ').slice(0, 2).join(' '), text }));

describe('tokenizer texts and pretraining', () => {
  it('synthetic transcripts are episodes the compact renderer parses back to ok calls', () => {
    const texts = tokenizerTexts(CHUNKS, 10_000, 3);
    expect(texts).toHaveLength(CHUNKS.length + 3);
    const tok = trainLocalTokenizer(texts, 600);
    const r = new CompactRenderer(tok);
    const [t] = syntheticTranscripts(CHUNKS, 1, 5);
    // Split the transcript into assistant turns and parse each one.
    const turns = t!.split('<|assistant|>').slice(1).map((turn) => turn.slice(0, turn.indexOf('<|end|>') + '<|end|>'.length));
    const calls = turns.map((turn) => r.parse(tok.encode(turn)).calls[0]!);
    expect(calls.map((c) => [c.name, c.status])).toEqual([['bm25_search', 'ok'], ['read_document', 'ok'], ['curate', 'ok'], ['finish', 'ok']]);
    expect(tok.decode(tok.encode(t!))).toBe(t);
  });

  it('pretrain lowers the next-token loss and rejects impossible windows', () => {
    ensureWasm();
    const b = tinyBackend(undefined, { context: 64, dModel: 32, nLayers: 2, nHeads: 2 });
    const losses = pretrain(b, TEXTS, { steps: 60, seqLen: 32, batch: 4, adam: { learningRate: 3e-3 } });
    expect(losses).toHaveLength(60);
    expect(b.step).toBe(60);
    const head = losses.slice(0, 5).reduce((a, x) => a + x, 0) / 5, tail = losses.slice(-5).reduce((a, x) => a + x, 0) / 5;
    expect(tail).toBeLessThan(head * 0.6);
    expect(() => pretrain(b, TEXTS, { steps: 1, seqLen: 64 })).toThrow(InputError);
    expect(() => pretrain(b, ['hi'], { steps: 1, seqLen: 32 })).toThrow(/fewer than one window/);
  });
});
