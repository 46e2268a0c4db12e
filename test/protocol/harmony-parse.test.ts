import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../src/env/types.js';
import { parseHarmonyTurn, splitMessages } from '../../src/protocol/harmony/parse.js';
import { renderConversation } from '../../src/protocol/harmony/format.js';
import { createHarmonyRenderer } from '../../src/protocol/harmony/renderer.js';
import { decodeTokens, encodeWithSpecials } from '../../src/protocol/harmony/tokens.js';
import type { StopReason } from '../../src/protocol/types.js';
import { harmonyVector } from './vectors.js';

const vectorTokens = harmonyVector('test_simple_tool_call.txt')
  .split(/\s+/)
  .filter(Boolean)
  .map(Number);

const DECLARED = new Set(['lookup_weather', 'get_weather', 'shell', 'grep', 'bm25_search', 'finish']);

/** Parses text written after `<|start|>assistant` (special tokens spelled out). */
function parse(text: string, stopReason?: StopReason) {
  return parseHarmonyTurn(encodeWithSpecials(text), { declared: DECLARED, ...(stopReason ? { stopReason } : {}) });
}

function onlyCall(text: string, stopReason?: StopReason) {
  const turn = parse(text, stopReason);
  expect(turn.calls).toHaveLength(1);
  return turn.calls[0]!;
}

describe('Harmony parsing: the shared tool-call vector', () => {
  it('decodes to the text FORMATS.md gives', () => {
    expect(decodeTokens(vectorTokens)).toBe(
      '<|channel|>analysis<|message|>User asks: "What is the weather in Tokyo?" We need to use lookup_weather tool.<|return|>' +
        '<|start|>assistant to=lookup_weather<|channel|>analysis code<|message|>{"location": "Tokyo"}',
    );
  });

  it('gives an analysis message and an off-form call to lookup_weather', () => {
    const turn = parseHarmonyTurn(vectorTokens, { declared: DECLARED });
    expect(turn.messages.map((m) => [m.author, m.channel, m.recipient, m.contentType, m.content])).toEqual([
      ['assistant', 'analysis', undefined, undefined, 'User asks: "What is the weather in Tokyo?" We need to use lookup_weather tool.'],
      ['assistant', 'analysis', 'lookup_weather', 'code', '{"location": "Tokyo"}'],
    ]);
    expect(turn.reasoning).toBe('User asks: "What is the weather in Tokyo?" We need to use lookup_weather tool.');
    const [call] = turn.calls;
    expect(call).toMatchObject({ name: 'lookup_weather', arguments: { location: 'Tokyo' }, status: 'off_form' });
    // Every trait the strict parser rejects is named.
    expect(call!.problem).toContain('functions. namespace');
    expect(call!.problem).toContain('analysis channel');
    expect(call!.problem).toContain('"code"');
    expect(call!.problem).toContain('unterminated');
    // The span runs from the second <|start|> to the end of the tokens.
    expect(call!.tokenSpan).toEqual([23, vectorTokens.length]);
    expect(vectorTokens[23]).toBe(200006);
    expect(turn.problems).toContain('a message follows <|return|>, which ends the turn');
    expect(turn.final).toBe(false);
  });

  it('cannot resolve the bare recipient when lookup_weather is not declared', () => {
    const turn = parseHarmonyTurn(vectorTokens, { declared: new Set(['bm25_search']) });
    expect(turn.calls[0]!.status).toBe('unparseable');
  });
});

describe('Harmony parsing: the shared tool-response vector', () => {
  it('gives author, recipient, channel and content, and renders back to the same text', () => {
    const text = harmonyVector('test_tool_response_parsing.txt');
    const { messages, problems } = splitMessages(encodeWithSpecials(text), { afterAssistantHeader: false });
    expect(problems).toEqual([]);
    expect(messages).toHaveLength(1);
    const [m] = messages;
    expect(m).toMatchObject({ author: 'browser.search', recipient: 'assistant', channel: 'commentary', content: '{"result": "https://openai.com/"}' });
    expect(m!.contentType).toBeUndefined();
    const rendered = decodeTokens(renderConversation({ messages: [{ author: m!.author, recipient: m!.recipient!, channel: m!.channel!, content: m!.content }] }));
    expect(rendered.startsWith(text)).toBe(true);
  });
});

describe('Harmony parsing: canonical forms are ok (FORMATS.md §1.6, rows 1-3)', () => {
  const forms = {
    docs: '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>',
    library: ' to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>',
    hfTemplate: ' to=functions.get_weather<|channel|>commentary json<|message|>{"location":"San Francisco"}<|call|>',
    constrainGlued: '<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{"location":"San Francisco"}<|call|>',
    noType: '<|channel|>commentary to=functions.get_weather<|message|>{"location":"San Francisco"}<|call|>',
  };
  for (const [form, text] of Object.entries(forms)) {
    it(form, () => {
      const call = onlyCall(text);
      expect(call).toMatchObject({ name: 'get_weather', arguments: { location: 'San Francisco' }, status: 'ok' });
      expect(call.problem).toBeUndefined();
      expect(call.raw).toBe(text);
      expect(call.tokenSpan).toEqual([0, encodeWithSpecials(text).length]);
    });
  }

  it('an undeclared functions.NAME is well formed (the environment answers unknown tool)', () => {
    expect(onlyCall('<|channel|>commentary to=functions.nope <|constrain|>json<|message|>{}<|call|>')).toMatchObject({ name: 'nope', status: 'ok' });
  });

  it('a stop token the sampler left out is fine when the stop reason says it stopped', () => {
    expect(onlyCall('<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{"pattern":"x"}', 'stop').status).toBe('ok');
  });
});

describe('Harmony parsing: off-form variants (FORMATS.md §1.10) — lenient accepts, strict rejects', () => {
  const cases: [string, string, string, string][] = [
    ['4 type glued to the name', '<|channel|>commentary to=functions.shelljson<|message|>{"cmd":"ls"}<|call|>', 'shell', 'glued'],
    ['5 bare recipient', '<|channel|>commentary to=get_weather <|constrain|>json<|message|>{"location":"x"}<|call|>', 'get_weather', 'namespace'],
    ['6 call on analysis', '<|channel|>analysis to=functions.grep code<|message|>{"pattern":"a+"}<|call|>', 'grep', 'analysis channel'],
    ['7 other content type', '<|channel|>commentary to=functions.grep <|constrain|>response<|message|>{"pattern":"a"}<|call|>', 'grep', 'content type'],
    ['8 duplicate channel markers', '<|channel|>commentary<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{"pattern":"a"}<|call|>', 'grep', '<|channel|> markers'],
    ['9 missing <|message|>', '<|channel|>commentary to=functions.grep json {"pattern":"a"}<|call|>', 'grep', 'missing <|message|>'],
    ['10 junk in the channel', '<|channel|>––commentary to=functions.grep <|constrain|>json<|message|>{"pattern":"a"}<|call|>', 'grep', 'channel "––commentary"'],
    ['10 stray recipient', '<|channel|>commentary to=functions.grep to=functions.web-browsing <|constrain|>json<|message|>{"pattern":"a"}<|call|>', 'grep', 'stray'],
    ['12 call ended by <|return|>', '<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{"pattern":"a"}<|return|>', 'grep', '<|return|>'],
    ['12 call ended by <|end|>', '<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{"pattern":"a"}<|end|>', 'grep', '<|end|>'],
  ];
  for (const [row, text, name, problem] of cases) {
    it(row, () => {
      const call = onlyCall(text);
      expect(call.name).toBe(name);
      expect(call.status).toBe('off_form');
      expect(call.problem).toContain(problem);
      expect(typeof call.arguments).toBe('object');
    });
  }

  it('9 without a recipient: text on commentary, not a call (upstream test)', () => {
    const turn = parse('<|channel|>commentary Hello<|end|>');
    expect(turn.calls).toEqual([]);
    expect(turn.messages[0]).toMatchObject({ channel: 'commentary', content: 'Hello' });
  });

  it('11 commentary preamble with no recipient is text', () => {
    const turn = parse('<|channel|>commentary<|message|>Let me search…<|end|>');
    expect(turn).toMatchObject({ calls: [], text: 'Let me search…', final: false });
  });

  it('13 truncated by the token limit is unparseable', () => {
    const call = onlyCall('<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{"pattern": "ab', 'length');
    expect(call.status).toBe('unparseable');
    expect(call.problem).toContain('truncated');
  });

  it('14 arguments that are not a JSON object are unparseable', () => {
    expect(onlyCall('<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{"q": "x"<|call|>').status).toBe('unparseable');
    expect(onlyCall('<|channel|>commentary to=functions.grep <|constrain|>json<|message|>["x"]<|call|>').status).toBe('unparseable');
  });
});

describe('Harmony parsing: turns', () => {
  it('analysis then a call: reasoning, one ok call, span from its <|start|>', () => {
    const text =
      '<|channel|>analysis<|message|>Search first.<|end|>' +
      '<|start|>assistant<|channel|>commentary to=functions.bm25_search <|constrain|>json<|message|>{"query":"goodwill"}<|call|>';
    const tokens = encodeWithSpecials(text);
    const turn = parseHarmonyTurn(tokens, { declared: DECLARED });
    expect(turn.reasoning).toBe('Search first.');
    expect(turn.calls).toHaveLength(1);
    const span = turn.calls[0]!.tokenSpan!;
    expect(decodeTokens(tokens.slice(...span))).toBe(text.slice(text.indexOf('<|start|>')));
    expect(turn.calls[0]!.status).toBe('ok');
    expect(turn.problems).toBeUndefined();
  });

  it('a final answer ends the turn without calls', () => {
    const turn = parse('<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>');
    expect(turn).toMatchObject({ calls: [], final: true, text: 'Easy.\nDone.', reasoning: 'Easy.' });
  });

  it('a call cut off by a new message is off-form even when the sampler stopped cleanly', () => {
    const turn = parse('<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{"pattern":"a"}<|start|>assistant<|channel|>final<|message|>ok<|return|>', 'stop');
    expect(turn.calls[0]).toMatchObject({ status: 'off_form', problem: 'not terminated before the next <|start|>' });
  });

  it('a turn that opens with <|start|> is parsed from there', () => {
    const turn = parse('<|start|>assistant<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{"pattern":"a"}<|call|>');
    expect(turn.calls[0]).toMatchObject({ name: 'grep', status: 'ok', tokenSpan: [0, expect.any(Number)] });
    expect(turn.problems).toEqual(['the turn starts with <|start|> instead of a header']);
  });

  it('splits messages and reports text between them', () => {
    const { messages, problems } = splitMessages(encodeWithSpecials('<|channel|>final<|message|>A<|end|>junk<|start|>assistant<|channel|>final<|message|>B<|end|>'));
    expect(messages.map((m) => m.content)).toEqual(['A', 'B']);
    expect(problems[0]).toContain('junk');
  });
});

const TOOLS: ToolSpec[] = [
  {
    name: 'bm25_search',
    description: 'Lexical search over the corpus.',
    parameters: { type: 'object', properties: { query: { type: 'string' }, k: { type: 'integer', default: 10 } }, required: ['query'] },
  },
  { name: 'finish', description: 'End the episode.', parameters: { type: 'object', properties: {} } },
];

describe('HarmonyRenderer: an episode only extends its token stream', () => {
  const renderer = createHarmonyRenderer({ currentDate: '2026-11-30' });
  const prompt = renderer.prompt({ system: 'Find the chunks.', user: 'goodwill impairment', tools: TOOLS });

  it('prompt: system, developer with the namespace, user, open assistant header', () => {
    const text = renderer.decode(prompt);
    expect(text).toContain("Calls to these tools must go to the commentary channel: 'functions'.");
    expect(text).toContain('# Instructions\n\nFind the chunks.\n\n# Tools');
    expect(text).toContain('type bm25_search = (_: {\nquery: string,\nk?: number, // default: 10\n}) => any;');
    expect(text).toContain('type finish = () => any;');
    expect(text.endsWith('<|start|>user<|message|>goodwill impairment<|end|><|start|>assistant')).toBe(true);
    expect(renderer.stopTokens).toEqual([200002, 200012]);
  });

  it('matches the re-rendered conversation (Harmony history rules keep CoT before tool calls)', () => {
    const s1 = encodeWithSpecials(
      '<|channel|>analysis<|message|>Search.<|end|><|start|>assistant<|channel|>commentary to=functions.bm25_search <|constrain|>json<|message|>{"query":"goodwill"}<|call|>',
    );
    const t1 = renderer.parse(s1);
    const i1 = renderer.toolResults(s1, [{ call: t1.calls[0]!, result: { outcome: 'ok', content: '{"hits":[]}', chunkIds: [] } }]);
    const s2 = encodeWithSpecials('<|channel|>commentary to=functions.finish <|constrain|>json<|message|>{}<|call|>');
    const stream = [...prompt, ...s1, ...i1, ...s2];
    const reference = renderConversation(
      {
        system: { currentDate: '2026-11-30' },
        developer: { instructions: 'Find the chunks.', tools: TOOLS },
        messages: [
          { author: 'user', content: 'goodwill impairment' },
          { author: 'assistant', channel: 'analysis', content: 'Search.' },
          { author: 'assistant', channel: 'commentary', recipient: 'functions.bm25_search', contentType: '<|constrain|>json', content: '{"query":"goodwill"}' },
          { author: 'functions.bm25_search', recipient: 'assistant', channel: 'commentary', content: '{"hits":[]}' },
        ],
      },
      { dropAnalysis: true },
    );
    expect([...prompt, ...s1, ...i1]).toEqual(reference);
    expect(stream.slice(0, reference.length)).toEqual(reference);
    expect(renderer.decode(i1)).toBe('<|start|>functions.bm25_search to=assistant<|channel|>commentary<|message|>{"hits":[]}<|end|><|start|>assistant');
  });

  it('after a final message the history rules would drop the analysis; the stream keeps it', () => {
    const s1 = encodeWithSpecials('<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>');
    const i1 = renderer.userTurn(s1, 'Call finish to end.');
    const stream = renderer.decode([...prompt, ...s1, ...i1]);
    expect(stream).toContain('Hmm.<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|><|start|>user<|message|>Call finish to end.<|end|><|start|>assistant');
    const rerendered = renderer.decode(
      renderConversation(
        {
          system: { currentDate: '2026-11-30' },
          developer: { instructions: 'Find the chunks.', tools: TOOLS },
          messages: [
            { author: 'user', content: 'goodwill impairment' },
            { author: 'assistant', channel: 'analysis', content: 'Hmm.' },
            { author: 'assistant', channel: 'final', content: 'Done.', terminator: 'return' },
            { author: 'user', content: 'Call finish to end.' },
          ],
        },
        { dropAnalysis: true },
      ),
    );
    expect(rerendered).not.toContain('Hmm.');
    expect(rerendered).toContain('Done.<|end|>');
  });

  it('writeTurn writes the canonical form, and parsing it gives ok calls back', () => {
    const tokens = renderer.writeTurn({ reasoning: 'Search.', calls: [{ name: 'bm25_search', arguments: { query: 'goodwill' } }] });
    expect(renderer.decode(tokens)).toBe(
      '<|channel|>analysis<|message|>Search.<|end|><|start|>assistant<|channel|>commentary to=functions.bm25_search <|constrain|>json<|message|>{"query":"goodwill"}<|call|>',
    );
    const turn = renderer.parse(tokens, { stopReason: 'stop' });
    expect(turn.calls.map((c) => [c.name, c.arguments, c.status])).toEqual([['bm25_search', { query: 'goodwill' }, 'ok']]);
    expect(turn.reasoning).toBe('Search.');
    const final = renderer.writeTurn({ text: 'Done.', calls: [] });
    expect(renderer.decode(final)).toBe('<|channel|>final<|message|>Done.<|return|>');
    expect(renderer.parse(final).final).toBe(true);
    expect(() => renderer.writeTurn({ calls: [{ name: 'a', arguments: {} }, { name: 'b', arguments: {} }] })).toThrow(/one call/);
  });

  it('closes a call whose <|call|> the sampler left out, and never lets result text become a special token', () => {
    const s1 = encodeWithSpecials('<|channel|>commentary to=functions.bm25_search <|constrain|>json<|message|>{"query":"x"}');
    const call = renderer.parse(s1, { stopReason: 'stop' }).calls[0]!;
    const inserted = renderer.toolResults(s1, [{ call, result: { outcome: 'ok', content: 'text with <|end|> inside', chunkIds: [] } }]);
    expect(inserted[0]).toBe(200012);
    expect(inserted.filter((t) => t === 200007)).toHaveLength(1);
    expect(renderer.decode(inserted)).toContain('text with <|end|> inside<|end|>');
  });
});
