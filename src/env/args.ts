import { z } from 'zod';

/**
 * Validate a model's tool arguments. Chat APIs hand arguments over as a JSON string, token-level
 * parsers as an object; both are accepted. Returns the parsed value or a short error the model can act on.
 *
 * Unknown keys are an error naming them, not dropped: every tool's JSON Schema says
 * `additionalProperties: false` (derived from the same zod schema), and a call such as
 * `finish {now: true}` or `bm25_search {query, bogus: 1}` is not the call the model was told it may
 * make. Dropping the key silently (zod's default) would score a call the schema forbids as valid,
 * and hide a misspelt argument (`top_k` for `k`) that the model could otherwise correct.
 */
export function parseArguments<T>(tool: string, schema: z.ZodType<T>, raw: unknown): { ok: true; value: T } | { ok: false; error: string } {
  let value = raw ?? {};
  if (typeof value === 'string') {
    const text = value.trim();
    try {
      value = text === '' ? {} : JSON.parse(text);
    } catch {
      return { ok: false, error: `${tool}: arguments are not valid JSON` };
    }
  }
  const parsed = strict(schema).safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data as T };
  const problems = parsed.error.issues.slice(0, 3).map((i) => {
    if (i.code === 'unrecognized_keys') {
      const known = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
      return `unknown argument(s) ${i.keys.map((k) => `'${k}'`).join(', ')}${i.path.length ? ` in ${i.path.join('.')}` : ''}${known.length && !i.path.length ? ` (${tool} takes ${known.join(', ')})` : ''}`;
    }
    return i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message;
  });
  return { ok: false, error: `${tool}: bad arguments (${problems.join('; ')})` };
}

const strictForms = new WeakMap<z.ZodType, z.ZodType>();

/** The schema with unknown keys refused at its top level (an object schema's .strict()), made once. */
function strict(schema: z.ZodType): z.ZodType {
  if (!(schema instanceof z.ZodObject)) return schema;
  let s = strictForms.get(schema);
  if (!s) strictForms.set(schema, (s = schema.strict()));
  return s;
}
