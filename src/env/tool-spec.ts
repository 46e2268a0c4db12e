import { z } from 'zod';
import type { ToolSpec } from './types.js';

/**
 * A tool as declared to models, from the zod schema its calls are checked against: the JSON Schema
 * is derived from it (field descriptions from `.describe()`), so what the model is told and what the
 * environment accepts cannot drift apart.
 */
export function toolSpec(name: string, description: string, args: z.ZodObject): ToolSpec {
  // Without the dialect line, and with `required` always there (empty for a tool without arguments).
  const { $schema: _dialect, type, properties, required, ...rest } = z.toJSONSchema(args) as Record<string, unknown>;
  return { name, description, parameters: { type, properties, required: required ?? [], ...rest } };
}

/**
 * How a call to the tool can be typed on one line (`sleuth play`): the rest of the line is its
 * required list of strings (split on spaces and commas), or its first required string, or nothing.
 */
export type ToolShorthand = { kind: 'list' | 'string'; key: string } | { kind: 'none' };

export function toolShorthand(tool: ToolSpec): ToolShorthand {
  const p = tool.parameters as { properties?: Record<string, { type?: unknown; items?: { type?: unknown } }>; required?: string[] };
  const required = (p.required ?? []).map((key) => ({ key, schema: p.properties?.[key] ?? {} }));
  const list = required.find((r) => r.schema.type === 'array' && r.schema.items?.type === 'string');
  if (list) return { kind: 'list', key: list.key };
  const text = required.find((r) => r.schema.type === 'string');
  return text ? { kind: 'string', key: text.key } : { kind: 'none' };
}
