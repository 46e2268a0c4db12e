import { describe, expect, it } from 'vitest';
import { InputError } from '../src/errors.js';
import { jsonDepth, MAX_JSON_DEPTH, parseJsonRecord } from '../src/json-depth.js';

const nested = (depth: number) => `{"id":"x","text":"t","meta":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

describe('JSON nesting depth', () => {
  it('counts levels without recursion, so 100,000 levels are measured, not overflowed', () => {
    expect(jsonDepth(0)).toBe(0);
    expect(jsonDepth([])).toBe(1);
    expect(jsonDepth({ a: [{ b: 1 }] })).toBe(3);
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
    expect(jsonDepth(deep)).toBe(MAX_JSON_DEPTH + 1);
    expect(jsonDepth(deep, 200_000)).toBe(100_000);
  });

  it('takes a record nested up to the limit and refuses one past it, naming where', () => {
    expect(parseJsonRecord(nested(MAX_JSON_DEPTH), 'c.jsonl:1')).toMatchObject({ id: 'x' });
    expect(() => parseJsonRecord(nested(MAX_JSON_DEPTH + 1), 'c.jsonl:2')).toThrow(InputError);
    expect(() => parseJsonRecord(nested(5000), 'c.jsonl:2')).toThrow('c.jsonl:2: JSON nested more than 256 levels deep');
    expect(() => parseJsonRecord('{"id":', 'c.jsonl:3')).toThrow(/c\.jsonl:3: not valid JSON/u);
  });
});
