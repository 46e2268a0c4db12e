import { describe, expect, it } from 'vitest';
import { trainBpe } from '../../src/protocol/compact/bpe.js';
import { CompactRenderer, SPECIALS, compactContent } from '../../src/protocol/compact/renderer.js';
import type { ToolSpec } from '../../src/env/types.js';
import { TEXTS } from './helpers.js';

const TOOLS: ToolSpec[] = [
  { name: 'bm25_search', description: 'Keyword search over the corpus.', parameters: { type: 'object', properties: { query: { type: 'string' }, k: { type: 'integer' } }, required: ['query'] } },
  { name: 'finish', description: 'End the episode.', parameters: { type: 'object', properties: {} } },
];

describe('byte-level BPE', () => {
  it('trains deterministically, whatever the order of the texts', () => {
    const a = trainBpe(TEXTS, 400, [...SPECIALS]);
    const b = trainBpe([...TEXTS].reverse(), 400, [...SPECIALS]);
    expect(b.data.merges).toEqual(a.data.merges);
    expect(a.data.merges.length).toBeGreaterThan(30);
    expect(a.vocabSize).toBe(256 + SPECIALS.length + a.data.merges.length);
  });

  it('round-trips any text, keeps special tokens whole, and compresses text it was trained on', () => {
    const tok = trainBpe(TEXTS, 400, [...SPECIALS]);
    for (const s of ['Grüße, 東京 — naïve café 🙂 12,345.67', TEXTS[1]!, '  spaces\tand\nnewlines  ']) expect(tok.decode(tok.encode(s))).toBe(s);
    const ids = tok.encode('a<|call|>b<|end|>');
    expect(ids).toContain(tok.special('<|call|>'));
    expect(ids).toContain(tok.special('<|end|>'));
    expect(tok.encode(TEXTS[1]!).length).toBeLessThan(new TextEncoder().encode(TEXTS[1]!).length * 0.75);
    expect(() => tok.special('<|nope|>')).toThrow(/no special token/);
  });
});

describe('compact renderer', () => {
  const tok = trainBpe(TEXTS, 400, [...SPECIALS]);
  const r = new CompactRenderer(tok);
  const enc = (s: string) => tok.encode(s);

  it('renders the prompt with one line per tool and opens the assistant turn', () => {
    const text = r.decode(r.prompt({ system: 'Find evidence.', user: 'Who?', tools: TOOLS }));
    expect(text).toBe('<|system|>Find evidence.\ntools:\n- bm25_search(query, k?): Keyword search over the corpus.\n- finish(): End the episode.<|end|><|user|>Who?<|end|><|assistant|>');
  });

  it('parses strict calls as ok, with token spans, and a turn without calls as final', () => {
    const sampled = enc('Look it up.<|call|>{"name":"bm25_search","arguments":{"query":"Paris"}}<|call|>{"name":"finish","arguments":{}}<|end|>');
    const turn = r.parse(sampled);
    expect(turn.text).toBe('Look it up.');
    expect(turn.final).toBe(false);
    expect(turn.calls.map((c) => [c.name, c.arguments, c.status])).toEqual([['bm25_search', { query: 'Paris' }, 'ok'], ['finish', {}, 'ok']]);
    const [s, e] = turn.calls[0]!.tokenSpan!;
    expect(tok.decode(sampled.slice(s, e))).toBe('<|call|>{"name":"bm25_search","arguments":{"query":"Paris"}}');
    expect(r.parse(enc('Paris is the capital.<|end|>'))).toEqual({ text: 'Paris is the capital.', calls: [], final: true });
  });

  it('accepts near-misses as off_form and reports garbage as unparseable', () => {
    const lenient = r.parse(enc("<|call|>{'name': 'bm25_search', 'args': {'query': 'x'},} trailing<|end|>")).calls[0]!;
    expect([lenient.name, lenient.arguments, lenient.status]).toEqual(['bm25_search', { query: 'x' }, 'off_form']);
    const extraKey = r.parse(enc('<|call|>{"name":"finish","arguments":{},"id":3}<|end|>')).calls[0]!;
    expect(extraKey.status).toBe('off_form');
    const noMarker = r.parse(enc('I will call {"name":"finish","arguments":{}}<|end|>'));
    expect(noMarker.calls.map((c) => [c.name, c.status])).toEqual([['finish', 'off_form']]);
    const bad = r.parse(enc('<|call|>search for paris<|end|>')).calls[0]!;
    expect(bad.status).toBe('unparseable');
    expect(bad.raw).toBe('search for paris');
    expect(bad.problem).toMatch(/no JSON object/);
  });

  it('tool results close an unclosed turn, stay compact, and open the next assistant turn', () => {
    const call = r.parse(enc('<|call|>{"name":"bm25_search","arguments":{"query":"x"}}')).calls[0]!;
    const long = 'word '.repeat(200);
    const content = JSON.stringify({ hits: [{ id: 'a1b2c3d4e5', title: 'Paris', score: 12.3456789, snippet: long }, { id: 'ffeeddccbb', title: 'France', score: 3, snippet: 'short' }], seen: 2, curated: 0 });
    const tokens = r.toolResults(enc('<|call|>{"name":"bm25_search","arguments":{"query":"x"}}'), [{ call, result: { outcome: 'ok', content, chunkIds: ['a1b2c3d4e5', 'ffeeddccbb'] } }]);
    expect(r.decode(tokens)).toBe(`<|end|><|tool|>seen=2 curated=0\na1b2c3d4e5 Paris: ${long.slice(0, 80)}…\nffeeddccbb France: short<|end|><|assistant|>`);
    const closed = r.toolResults(enc('<|call|>{"name":"finish","arguments":{}}<|end|>'), [{ call, result: { outcome: 'error', content: 'unknown tool', chunkIds: [] } }]);
    expect(r.decode(closed)).toBe('<|tool|>unknown tool<|end|><|assistant|>');
    expect(compactContent(JSON.stringify({ id: 'a1', title: 'T', text: long }), { maxText: 10 })).toBe('a1 T: word word …');
    expect(compactContent(JSON.stringify({ hits: [], seen: 0, curated: 0 }))).toBe('seen=0 curated=0\nno hits');
    expect(compactContent(JSON.stringify({ curated: ['a', 'b'], count: 2.34567 }))).toBe('{"curated":["a","b"],"count":2.35}');
  });

  describe('with id aliases', () => {
    const aliased = new CompactRenderer(tok, { aliasIds: true });
    const hitsOf = (...ids: string[]) => ({ outcome: 'ok' as const, content: JSON.stringify({ hits: ids.map((id) => ({ id, title: `T-${id}`, snippet: 's' })), seen: ids.length, curated: 0 }), chunkIds: ids });
    const searchCall = () => aliased.parse(enc('<|call|>{"name":"bm25_search","arguments":{"query":"x"}}<|end|>')).calls[0]!;

    it('numbers ids in order of first sight, per episode, and reads numbers back as ids', () => {
      const ep = aliased.forEpisode();
      expect(ep).not.toBe(aliased);
      const first = ep.decode(ep.toolResults(enc('<|end|>'), [{ call: searchCall(), result: hitsOf('a1b2c3d4e5', 'ffeeddccbb') }]));
      expect(first).toBe('<|tool|>seen=2 curated=0\n1 T-a1b2c3d4e5: s\n2 T-ffeeddccbb: s<|end|><|assistant|>');
      // A later result keeps earlier numbers and gives new ids the next ones.
      const second = ep.decode(ep.toolResults(enc('<|end|>'), [{ call: searchCall(), result: hitsOf('0099887766', 'a1b2c3d4e5') }]));
      // A hit shown before comes back as its number and title only.
      expect(second).toContain('3 T-0099887766: s\n1 T-a1b2c3d4e5<|end|>');
      const turn = ep.parse(enc('<|call|>{"name":"curate","arguments":{"ids":[1,"3",7]}}<|call|>{"name":"read_document","arguments":{"id":2}}<|end|>'));
      expect(turn.calls.map((c) => c.arguments)).toEqual([{ ids: ['a1b2c3d4e5', '0099887766', '7'] }, { id: 'ffeeddccbb' }]);
      expect(turn.calls[0]!.raw).toBe('{"name":"curate","arguments":{"ids":[1,"3",7]}}');
      // A fresh episode starts numbering again; the shared renderer never saw these ids.
      const other = aliased.forEpisode();
      expect(other.parse(enc('<|call|>{"name":"curate","arguments":{"ids":[1,"007"]}}<|end|>')).calls[0]!.arguments).toEqual({ ids: ['1', '007'] });
    });

    it('writes a teacher\'s real ids as numbers, and aliases ids quoted in results and errors', () => {
      const ep = aliased.forEpisode();
      ep.toolResults(enc('<|end|>'), [{ call: searchCall(), result: hitsOf('a1b2c3d4e5', 'ffeeddccbb') }]);
      expect(ep.renderAssistant('', [{ name: 'curate', arguments: { ids: ['ffeeddccbb', 'not-shown'] } }])).toBe('<|call|>{"name":"curate","arguments":{"ids":[2,"not-shown"]}}<|end|>');
      expect(ep.renderToolContent(JSON.stringify({ added: ['a1b2c3d4e5'], curated: 1, cap: 30 }))).toBe('{"added":[1],"curated":1,"cap":30}');
      expect(ep.renderToolContent("Error (unseen_id): 'ffeeddccbb' has not appeared")).toBe("Error (unseen_id): '2' has not appeared");
      expect(ep.renderToolContent(JSON.stringify({ id: 'ffeeddccbb', title: 'France', text: 'Paris is its capital.' }))).toBe('2 France: Paris is its capital.');
    });
  });
});
