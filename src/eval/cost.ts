import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { InputError } from '../errors.js';

/** USD per million tokens; null = unknown (a cost that needs it is unknown, never silently 0). */
const PriceSchema = z.object({
  prefill: z.number().nonnegative().nullable(),
  sample: z.number().nonnegative().nullable(),
  train: z.number().nonnegative().nullable(),
});
export type Price = z.infer<typeof PriceSchema>;

export const PricesSchema = z.object({ models: z.record(z.string(), PriceSchema) }).passthrough();
export type Prices = z.infer<typeof PricesSchema>;

/** configs/prices.json of this package (from dist/src/eval/ or src/eval/). */
export function defaultPricesPath(): string {
  for (const rel of ['../../../configs/prices.json', '../../configs/prices.json']) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  throw new Error('configs/prices.json is missing from the sleuth package');
}

export function parsePrices(value: unknown, source: string): Prices {
  const r = PricesSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new InputError(`${source}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
  }
  return r.data;
}

export function loadPrices(path = defaultPricesPath()): Prices {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(`prices file ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new InputError(`prices file ${path}: not valid JSON: ${(err as Error).message}`);
  }
  return parsePrices(json, `prices file ${path}`);
}

/**
 * The price-table key of an agent spec: `openai:MODEL[@URL]` and `tinker:MODEL` -> MODEL;
 * `local:PATH` and scripted agents run here -> `local`.
 */
export function priceModelOf(agentSpec: string): string {
  const colon = agentSpec.indexOf(':');
  if (colon < 0) return 'local';
  const kind = agentSpec.slice(0, colon);
  const rest = agentSpec.slice(colon + 1);
  if (kind === 'openai') {
    const at = rest.indexOf('@');
    return at < 0 ? rest : rest.slice(0, at);
  }
  if (kind === 'tinker') return rest;
  return 'local';
}

export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  trainTokens?: number;
}

/**
 * USD for the given token counts, or null when a price it needs is unknown (or the model is not
 * in the table). Counts of zero need no price. Upper bound: prefix caching is not subtracted.
 */
export function costUsd(tokens: TokenCounts, price: Price | undefined): number | null {
  const parts: [number, number | null | undefined][] = [
    [tokens.promptTokens, price?.prefill],
    [tokens.completionTokens, price?.sample],
    [tokens.trainTokens ?? 0, price?.train],
  ];
  let usd = 0;
  for (const [count, perMillion] of parts) {
    if (count === 0) continue;
    if (perMillion === null || perMillion === undefined) return null;
    usd += (count * perMillion) / 1e6;
  }
  return usd;
}
