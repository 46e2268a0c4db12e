import type { z } from 'zod';

/**
 * Validate a model's tool arguments. Chat APIs hand arguments over as a JSON string, token-level
 * parsers as an object; both are accepted. Returns the parsed value or a short error the model can act on.
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
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = parsed.error.issues.slice(0, 3).map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message));
  return { ok: false, error: `${tool}: bad arguments (${problems.join('; ')})` };
}
