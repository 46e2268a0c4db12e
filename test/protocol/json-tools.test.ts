import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../src/env/types.js';
import { repairJson } from '../../src/protocol/json-repair.js';
import {
  parseChatArguments,
  parseChatMessage,
  parseChatToolCalls,
  toChatToolCalls,
  toOpenAITools,
  toolResultMessage,
} from '../../src/protocol/json-tools.js';

const TOOLS: ToolSpec[] = [
  { name: 'bm25_search', description: 'Search.', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
  { name: 'finish', description: 'End.', parameters: { type: 'object', properties: {} } },
];

describe('JSON tool calls (chat APIs)', () => {
  it('declares ToolSpecs as OpenAI tools', () => {
    expect(toOpenAITools(TOOLS)).toEqual([
      { type: 'function', function: { name: 'bm25_search', description: 'Search.', parameters: TOOLS[0]!.parameters } },
      { type: 'function', function: { name: 'finish', description: 'End.', parameters: TOOLS[1]!.parameters } },
    ]);
  });

  it('round-trips calls through tool_calls with string arguments', () => {
    const apiCalls = [
      { id: 'call_a', type: 'function', function: { name: 'bm25_search', arguments: '{"query":"goodwill \\"2021\\""}' } },
      { id: 'call_b', type: 'function', function: { name: 'finish', arguments: '{}' } },
    ];
    const parsed = parseChatToolCalls(apiCalls);
    expect(parsed.map((c) => [c.id, c.name, c.arguments, c.status])).toEqual([
      ['call_a', 'bm25_search', { query: 'goodwill "2021"' }, 'ok'],
      ['call_b', 'finish', {}, 'ok'],
    ]);
    const back = toChatToolCalls(parsed);
    expect(back).toEqual(apiCalls);
    expect(parseChatToolCalls(back)).toEqual(parsed.map((c, i) => ({ ...c, raw: JSON.stringify(back[i]) })));
    expect(toolResultMessage(parsed[0]!, { outcome: 'ok', content: '{"hits":[]}', chunkIds: [] })).toEqual({
      role: 'tool',
      tool_call_id: 'call_a',
      content: '{"hits":[]}',
    });
  });

  it('repairs malformed arguments into off-form calls', () => {
    const cases: [string, unknown][] = [
      ["{'query': 'goodwill'}", { query: 'goodwill' }],
      ['{"query": "goodwill",}', { query: 'goodwill' }],
      ['{query: "goodwill"}', { query: 'goodwill' }],
      ['```json\n{"query": "a"}\n```', { query: 'a' }],
      ['{"query": "a", "exact": True, "k": None}', { query: 'a', exact: true, k: null }],
      ['{"query": "line\nbreak"}', { query: 'line\nbreak' }],
      ['{"query": "unclosed', { query: 'unclosed' }],
      ['"{\\"query\\": \\"twice\\"}"', { query: 'twice' }],
    ];
    for (const [given, expected] of cases) {
      const r = parseChatArguments(given);
      expect(r, given).toMatchObject({ status: 'off_form', arguments: expected });
      expect(r.problem).toBeTruthy();
    }
  });

  it('reads an empty arguments string as a call without parameters, as chat servers send it', () => {
    expect(parseChatArguments('')).toEqual({ arguments: {}, status: 'ok' });
  });

  it('marks unrecoverable arguments and nameless calls unparseable', () => {
    for (const given of ['[1, 2]', '42', 'search for goodwill', '{"query": "a"]']) {
      expect(parseChatArguments(given).status, given).toBe('unparseable');
    }
    const [noName, badShape] = parseChatToolCalls([{ id: 'x', function: { name: '', arguments: '{}' } }, { id: 'y' }]);
    expect(noName).toMatchObject({ status: 'unparseable', problem: 'no function name', id: 'x' });
    expect(badShape).toMatchObject({ status: 'unparseable', name: '' });
  });

  it('reads an assistant message', () => {
    expect(parseChatMessage({ content: 'Done.', tool_calls: null })).toEqual({ text: 'Done.', calls: [], final: true });
    const turn = parseChatMessage({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'finish', arguments: '{}' } }] });
    expect(turn.final).toBe(false);
    expect(turn.calls[0]!.status).toBe('ok');
  });

  it('repairJson leaves valid JSON alone and gives up on nonsense', () => {
    expect(repairJson('{"a": [1, 2]}')).toEqual({ value: { a: [1, 2] } });
    expect(repairJson('{"a": [1, 2}')).toBeUndefined();
    expect(repairJson('call bm25')).toBeUndefined();
  });
});
