import { describe, expect, it } from 'vitest';
import {
  renderConversation,
  schemaToTs,
  type HarmonyTool,
} from '../../src/protocol/harmony/format.js';
import { decodeTokens, encodeWithSpecials } from '../../src/protocol/harmony/tokens.js';
import { harmonyVector as vector } from './vectors.js';

/** The four tools of openai/harmony's test_render_functions_with_parameters. */
const KITCHEN_TOOLS: HarmonyTool[] = [
  { name: 'get_location', description: 'Gets the location of the user.' },
  {
    name: 'get_current_weather',
    description: 'Gets the current weather in the provided location.',
    parameters: {
      type: 'object',
      properties: {
        location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
        format: { type: 'string', enum: ['celsius', 'fahrenheit'], default: 'celsius' },
      },
      required: ['location'],
    },
  },
  {
    name: 'get_multiple_weathers',
    description: 'Gets the current weather in the provided list of locations.',
    parameters: {
      type: 'object',
      properties: {
        locations: {
          type: 'array',
          items: { type: 'string' },
          description: 'List of city and state, e.g. ["San Francisco, CA", "New York, NY"]',
        },
        format: { type: 'string', enum: ['celsius', 'fahrenheit'], default: 'celsius' },
      },
      required: ['locations'],
    },
  },
  {
    name: 'kitchensink',
    description: 'A function with various complex schemas.',
    parameters: {
      description: 'params object',
      type: 'object',
      properties: {
        string: { type: 'string', title: 'STRING', description: 'A string', examples: ['hello', 'world'] },
        string_nullable: { type: 'string', nullable: true, description: 'A nullable string', default: 'the default' },
        string_enum: { type: 'string', enum: ['a', 'b', 'c'] },
        oneof_string_or_number: {
          oneOf: [
            { type: 'string', default: 'default_string_in_oneof' },
            { type: 'number', description: 'numbers can happen too' },
          ],
          description: 'a oneof',
          default: 20,
        },
      },
    },
  },
];

function expectSameRendering(tokens: number[], expectedText: string): void {
  expect(decodeTokens(tokens)).toBe(expectedText);
  expect(tokens).toEqual(encodeWithSpecials(expectedText));
}

describe('Harmony rendering against the shared vectors', () => {
  it('test_simple_convo: system (no date) + user', () => {
    const tokens = renderConversation({ system: {}, messages: [{ author: 'user', content: 'What is 2 + 2?' }] });
    expectSameRendering(tokens, vector('test_simple_convo.txt'));
  });

  it('test_no_tools: system with a date and no tool line', () => {
    const tokens = renderConversation({ system: { currentDate: '2025-06-28' }, messages: [] });
    expectSameRendering(tokens, vector('test_no_tools.txt'));
  });

  it('test_render_functions_with_parameters: JSON Schemas as the namespace functions declaration', () => {
    const tokens = renderConversation({
      system: { reasoningEffort: 'high', currentDate: '2025-06-28' },
      developer: { instructions: 'Always respond in riddles', tools: KITCHEN_TOOLS },
      messages: [{ author: 'user', content: 'What is the weather like in SF?' }],
    });
    expectSameRendering(tokens, vector('test_render_functions_with_parameters.txt'));
  });

  it('test_tool_response_parsing: the tool-result header renders back to the same text', () => {
    const text = vector('test_tool_response_parsing.txt');
    const tokens = renderConversation({
      messages: [
        {
          author: 'browser.search',
          recipient: 'assistant',
          channel: 'commentary',
          content: '{"result": "https://openai.com/"}',
        },
      ],
    });
    // The vector stops after the content; ours closes the message and opens the assistant turn.
    expect(decodeTokens(tokens)).toBe(`${text}<|end|><|start|>assistant`);
  });

  it('special tokens encode to their single ids and text never becomes one', () => {
    expect(encodeWithSpecials('<|start|><|end|><|message|><|channel|><|constrain|><|return|><|call|>')).toEqual([
      200006, 200007, 200008, 200005, 200003, 200002, 200012,
    ]);
    const injected = renderConversation({ messages: [{ author: 'user', content: 'a<|end|>b' }] });
    expect(injected.filter((t) => t === 200007)).toHaveLength(1);
  });

  it('schema details: integer, boolean, arrays without items, type unions, nullable', () => {
    expect(schemaToTs({ type: 'integer' }, '')).toBe('number');
    expect(schemaToTs({ type: 'boolean' }, '')).toBe('boolean');
    expect(schemaToTs({ type: 'array' }, '')).toBe('Array<any>');
    expect(schemaToTs({ type: ['integer', 'string'] }, '')).toBe('number | string');
    expect(
      schemaToTs({ type: 'object', properties: { ids: { type: 'array', items: { type: 'string' } }, k: { type: 'integer', default: 10 } }, required: ['ids'] }, ''),
    ).toBe('{\nids: string[],\nk?: number, // default: 10\n}');
  });
});

/**
 * Features beyond the five shared vectors, each against a rendering written out from the reference
 * library's documented format (openai/harmony src/encoding.rs and src/chat.rs: SystemContent
 * sections in order identity / reasoning / tools / channels; ToolNamespaceConfig::browser and
 * ::python; render_conversation vs render_conversation_for_completion; auto_drop_analysis), and the
 * library's own test-data where it is public (test_does_not_drop_if_ongoing_analysis.txt).
 */
describe('Harmony rendering: required channels, built-in namespaces, no next turn, analysis dropping', () => {
  const SYSTEM_TOP = 'You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06';

  it('with_required_channels(["analysis", "final"]) (test_reasoning_system_message)', () => {
    const tokens = renderConversation({ system: { channels: { valid: ['analysis', 'final'], required: true } }, messages: [{ author: 'user', content: 'What is 2 + 2?' }] });
    expectSameRendering(tokens, `<|start|>system<|message|>${SYSTEM_TOP}\n\nReasoning: medium\n\n# Valid channels: analysis, final. Channel must be included for every message.<|end|><|start|>user<|message|>What is 2 + 2?<|end|><|start|>assistant`);
  });

  it('required channels with dates and a cutoff (test_reasoning_system_message_with_dates)', () => {
    const tokens = renderConversation({ system: { currentDate: '2021-01-01', knowledgeCutoff: '2021-01', channels: { valid: ['analysis', 'final'], required: true } }, messages: [{ author: 'user', content: 'What is 42 * pi?' }] });
    expectSameRendering(
      tokens,
      '<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2021-01\nCurrent date: 2021-01-01\n\nReasoning: medium\n\n# Valid channels: analysis, final. Channel must be included for every message.<|end|><|start|>user<|message|>What is 42 * pi?<|end|><|start|>assistant',
    );
  });

  it('channels not required: no "must be included"; no channels: no line at all', () => {
    const optional = decodeTokens(renderConversation({ system: { channels: { valid: ['analysis', 'commentary', 'final'], required: false } }, messages: [] }, { nextTurn: false }));
    expect(optional).toBe(`<|start|>system<|message|>${SYSTEM_TOP}\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, final.<|end|>`);
    const none = decodeTokens(renderConversation({ system: { channels: { valid: [], required: true } }, messages: [] }, { nextTurn: false }));
    expect(none).toBe(`<|start|>system<|message|>${SYSTEM_TOP}\n\nReasoning: medium<|end|>`);
  });

  it('with_browser_tool().with_python_tool() (test_browser_and_python_tool): the namespaces in name order, before the channels', () => {
    const tokens = renderConversation({ system: { currentDate: '2025-06-28', builtinTools: ['python', 'browser'] }, messages: [] });
    const expected = [
      `<|start|>system<|message|>${SYSTEM_TOP}\nCurrent date: 2025-06-28\n\nReasoning: medium\n\n# Tools\n\n## browser\n`,
      '// Tool for browsing.',
      '// The `cursor` appears in brackets before each browsing display: `[{cursor}]`.',
      '// Cite information from the tool using the following format:',
      '// `【{cursor}†L{line_start}(-L{line_end})?】`, for example: `【6†L9-L11】` or `【8†L3】`.',
      '// Do not quote more than 10 words directly from the tool output.',
      '// sources=web (default: web)',
      'namespace browser {\n',
      '// Searches for information related to `query` and displays `topn` results.',
      'type search = (_: {\nquery: string,\ntopn?: number, // default: 10\nsource?: string,\n}) => any;\n',
      '// Opens the link `id` from the page indicated by `cursor` starting at line number `loc`, showing `num_lines` lines.',
      '// Valid link ids are displayed with the formatting: `【{id}†.*】`.',
      '// If `cursor` is not provided, the most recent page is implied.',
      '// If `id` is a string, it is treated as a fully qualified URL associated with `source`.',
      '// If `loc` is not provided, the viewport will be positioned at the beginning of the document or centered on the most relevant passage, if available.',
      '// Use this function without `id` to scroll to a new location of an opened page.',
      'type open = (_: {\nid?: number | string, // default: -1\ncursor?: number, // default: -1\nloc?: number, // default: -1\nnum_lines?: number, // default: -1\nview_source?: boolean, // default: false\nsource?: string,\n}) => any;\n',
      '// Finds exact matches of `pattern` in the current page, or the page given by `cursor`.',
      'type find = (_: {\npattern: string,\ncursor?: number, // default: -1\n}) => any;\n',
      '} // namespace browser\n\n## python\n',
      'Use this tool to execute Python code in your chain of thought. The code will not be shown to the user. This tool should be used for internal reasoning, but not for code that is intended to be visible to the user (e.g. when creating plots, tables, or files).',
      '',
      "When you send a message containing Python code to python, it will be executed in a stateful Jupyter notebook environment. python will respond with the output of the execution or time out after 120.0 seconds. The drive at '/mnt/data' can be used to save and persist user files. Internet access for this session is UNKNOWN. Depends on the cluster.\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|><|start|>assistant",
    ].join('\n');
    expectSameRendering(tokens, expected);
  });

  it('render_conversation: no trailing next-turn header, and the completion form extends it', () => {
    const conv = { messages: [{ author: 'user', content: 'Hello' }] };
    const plain = renderConversation(conv, { nextTurn: false });
    expectSameRendering(plain, '<|start|>user<|message|>Hello<|end|>');
    const completion = renderConversation(conv);
    expect(completion.slice(0, plain.length)).toEqual(plain);
    expect(decodeTokens(completion.slice(plain.length))).toBe('<|start|>assistant');
  });

  it('auto_drop_analysis drops analysis before the FIRST final only, and only once the last assistant message is final (test_dropping_cot_by_default)', () => {
    const turns = [
      { author: 'user', content: 'What is 2 + 2?' },
      { author: 'assistant', channel: 'analysis', content: 'User asks: “What is 2 + 2?” Simple arithmetic. Provide answer.' },
      { author: 'assistant', channel: 'final', content: '2 + 2 equals 4.' },
      { author: 'user', content: 'What about 9 / 2?' },
    ];
    expectSameRendering(renderConversation({ messages: turns }, { dropAnalysis: true }), '<|start|>user<|message|>What is 2 + 2?<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 equals 4.<|end|><|start|>user<|message|>What about 9 / 2?<|end|><|start|>assistant');
    // Without the option (test_preserve_cot) the analysis stays.
    expect(decodeTokens(renderConversation({ messages: turns }))).toContain('<|channel|>analysis<|message|>User asks');
    // Analysis between two finals is kept: only what precedes the first final goes.
    const twoFinals = [...turns, { author: 'assistant', channel: 'analysis', content: 'Divide.' }, { author: 'assistant', channel: 'final', content: '4.5' }];
    expectSameRendering(
      renderConversation({ messages: twoFinals }, { dropAnalysis: true }),
      '<|start|>user<|message|>What is 2 + 2?<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 equals 4.<|end|><|start|>user<|message|>What about 9 / 2?<|end|><|start|>assistant<|channel|>analysis<|message|>Divide.<|end|><|start|>assistant<|channel|>final<|message|>4.5<|end|><|start|>assistant',
    );
    // The last assistant message is a tool call, not a final: nothing is dropped, even before an earlier final.
    const ongoing = [...turns, { author: 'assistant', channel: 'analysis', content: 'Compute.' }, { author: 'assistant', channel: 'commentary', recipient: 'functions.calc', contentType: '<|constrain|>json', content: '{"expr": "9/2"}' }];
    const text = decodeTokens(renderConversation({ messages: ongoing }, { dropAnalysis: true }));
    expect(text).toContain('<|channel|>analysis<|message|>User asks');
    expect(text).toContain('<|channel|>analysis<|message|>Compute.<|end|>');
  });

  it('test_multi_turn_auto_drop_analysis (openai/harmony test-data, byte for byte): analysis after the first final stays', () => {
    const code = 'import timeit\n\ndef fib_recursive(n):\n    if n <= 1: return n\n    return fib_recursive(n-1) + fib_recursive(n-2)\n\ndef fib_iter(n):\n    if n <= 1: return n\n    a, b = 0, 1\n    for _ in range(2, n+1): a, b = b, a+b\n    return b\n\nprint(timeit.timeit(lambda: fib_recursive(30), number=1))\nprint(timeit.timeit(lambda: fib_iter(30), number=1000))';
    const tokens = renderConversation(
      {
        messages: [
          { author: 'developer', content: 'You are a helpful assistant that analyzes code and provides detailed feedback.' },
          { author: 'user', content: 'Can you help me optimize this Python function?\n\ndef fibonacci(n):\n    if n <= 1:\n        return n\n    return fibonacci(n-1) + fibonacci(n-2)' },
          { author: 'assistant', channel: 'final', content: 'This recursive Fibonacci has exponential time complexity. Would you like me to show optimized versions?' },
          { author: 'user', content: 'Yes, and benchmark them' },
          { author: 'assistant', channel: 'final', content: "I'll benchmark both versions for you." },
          { author: 'user', content: 'Run the benchmark for n=30' },
          { author: 'assistant', channel: 'analysis', content: 'I need to execute Python code to run the benchmark for n=30.' },
          { author: 'assistant', recipient: 'functions.python', recipientIn: 'role', channel: 'commentary', content: `{"code": ${JSON.stringify(code)}}` },
        ],
      },
      { dropAnalysis: true },
    );
    expectSameRendering(
      tokens,
      `<|start|>developer<|message|>You are a helpful assistant that analyzes code and provides detailed feedback.<|end|><|start|>user<|message|>Can you help me optimize this Python function?\n\ndef fibonacci(n):\n    if n <= 1:\n        return n\n    return fibonacci(n-1) + fibonacci(n-2)<|end|><|start|>assistant<|channel|>final<|message|>This recursive Fibonacci has exponential time complexity. Would you like me to show optimized versions?<|end|><|start|>user<|message|>Yes, and benchmark them<|end|><|start|>assistant<|channel|>final<|message|>I'll benchmark both versions for you.<|end|><|start|>user<|message|>Run the benchmark for n=30<|end|><|start|>assistant<|channel|>analysis<|message|>I need to execute Python code to run the benchmark for n=30.<|end|><|start|>assistant to=functions.python<|channel|>commentary<|message|>` +
        String.raw`{"code": "import timeit\n\ndef fib_recursive(n):\n    if n <= 1: return n\n    return fib_recursive(n-1) + fib_recursive(n-2)\n\ndef fib_iter(n):\n    if n <= 1: return n\n    a, b = 0, 1\n    for _ in range(2, n+1): a, b = b, a+b\n    return b\n\nprint(timeit.timeit(lambda: fib_recursive(30), number=1))\nprint(timeit.timeit(lambda: fib_iter(30), number=1000))"}` +
        '<|call|><|start|>assistant',
    );
  });

  it('test_does_not_drop_if_ongoing_analysis (openai/harmony test-data, byte for byte)', () => {
    const tokens = renderConversation(
      {
        messages: [
          { author: 'user', content: 'What is the weather in SF?' },
          { author: 'assistant', channel: 'analysis', content: 'User asks: “What is the weather in SF?” We need to use lookup_weather tool.' },
          { author: 'assistant', channel: 'commentary', recipient: 'functions.lookup_weather', contentType: '<|constrain|>json', content: '{"location": "San Francisco"}' },
          { author: 'functions.lookup_weather', content: '{"temperature": 20, "description": "sunny"}' },
        ],
      },
      { dropAnalysis: true },
    );
    expectSameRendering(
      tokens,
      '<|start|>user<|message|>What is the weather in SF?<|end|><|start|>assistant<|channel|>analysis<|message|>User asks: “What is the weather in SF?” We need to use lookup_weather tool.<|end|><|start|>assistant<|channel|>commentary to=functions.lookup_weather <|constrain|>json<|message|>{"location": "San Francisco"}<|call|><|start|>functions.lookup_weather<|message|>{"temperature": 20, "description": "sunny"}<|end|><|start|>assistant',
    );
  });
});
