import { InputError } from '../../errors.js';
import type { TokenPrice } from './backend.js';

/**
 * Tokens and dollars of a GRPO run before it starts (`sleuth train --dry-run`).
 *
 * Per step the trainer samples groupsPerStep × groupSize episodes and trains on each one's whole
 * token sequence once. An episode of T turns with a prompt of P tokens, o tokens written and r
 * tool-result tokens per turn is billed:
 *   prefill = Σ_{k<T} (P + k(o + r))    every turn sends the whole conversation (no prefix-cache discount)
 *   sample  = T·o
 *   train   = P + T·o + (T − 1)·r        the finished episode, one forward_backward datum
 * The typical shape defaults to a gpt-oss-20b search run (about 15 turns and 2.3k written tokens
 * per episode; docs/reference/TINKER_API.md §14); the worst case fills the budgets
 * (maxTurns turns of maxTokensPerTurn tokens, stopped by the context limit). Evaluation episodes
 * cost prefill and sampling only.
 */

export interface EpisodeShape {
  turns: number;
  promptTokens: number;
  outputTokensPerTurn: number;
  toolTokensPerTurn: number;
}

export const SEED_EPISODE: EpisodeShape = { turns: 15, promptTokens: 1500, outputTokensPerTurn: 150, toolTokensPerTurn: 600 };

/** The fields of a training config the estimate reads (sleuth's TrainConfig has them all). */
export interface CostConfig {
  backend?: string;
  model: string;
  groupsPerStep: number;
  groupSize: number;
  steps?: number | undefined;
  budgets?: { maxTurns: number; maxTokensPerTurn: number; contextTokens: number };
  evalSamples?: number;
  evalEvery?: number;
  evalAtStart?: boolean;
}

export interface PricesTable {
  models: Record<string, TokenPrice>;
}

export interface TokenTotals {
  prefillTokens: number;
  sampleTokens: number;
  trainTokens: number;
  /** null when a price it needs is unknown, or the model is not in the table. */
  usd: number | null;
  /** USD of the parts whose price is known (all of usd when usd is known). */
  knownUsd: number;
}

export interface RunCostEstimate {
  model: string;
  /** The price-table key used (`local` for the local backend). */
  priceKey: string;
  price: TokenPrice | null;
  steps: number;
  episodesPerStep: number;
  evalEpisodes: number;
  shape: EpisodeShape;
  perStep: TokenTotals;
  total: TokenTotals;
  /** Every episode as long as the budgets allow. */
  worstCase: TokenTotals;
  /** Why usd is null, if it is. */
  missing: string[];
}

export function episodeTokens(s: EpisodeShape, contextTokens = Infinity): { prefillTokens: number; sampleTokens: number; trainTokens: number } {
  const perTurn = s.outputTokensPerTurn + s.toolTokensPerTurn;
  // The episode ends when its context is full.
  let T = s.turns;
  while (T > 1 && s.promptTokens + T * s.outputTokensPerTurn + (T - 1) * s.toolTokensPerTurn > contextTokens) T -= 1;
  const finalLength = Math.min(contextTokens, s.promptTokens + T * s.outputTokensPerTurn + (T - 1) * s.toolTokensPerTurn);
  return {
    prefillTokens: T * s.promptTokens + (perTurn * T * (T - 1)) / 2,
    sampleTokens: Math.min(T * s.outputTokensPerTurn, Math.max(0, finalLength - s.promptTokens)),
    trainTokens: finalLength,
  };
}

function totals(t: { prefillTokens: number; sampleTokens: number; trainTokens: number }, price: TokenPrice | null, missing?: string[]): TokenTotals {
  const known = (perM: number | null | undefined, n: number) => (perM === null || perM === undefined ? 0 : (n * perM) / 1e6);
  const knownUsd = price ? known(price.prefill, t.prefillTokens) + known(price.sample, t.sampleTokens) + known(price.train, t.trainTokens) : 0;
  return { ...t, usd: usdOf(t, price, missing), knownUsd };
}

export function usdOf(t: { prefillTokens: number; sampleTokens: number; trainTokens: number }, price: TokenPrice | null, missing?: string[]): number | null {
  if (!price) return null;
  let usd = 0;
  let known = true;
  for (const [what, count, perM] of [['prefill', t.prefillTokens, price.prefill], ['sample', t.sampleTokens, price.sample], ['train', t.trainTokens, price.train]] as const) {
    if (count === 0) continue;
    if (perM === null) {
      missing?.push(`${what} price unknown`);
      known = false;
      continue;
    }
    usd += (count * perM) / 1e6;
  }
  return known ? usd : null;
}

/**
 * Estimate a run's tokens and cost from its config and the prices table (configs/prices.json).
 * `steps` is needed when the config gives epochs instead (steps = ceil(epochs × tasks / groupsPerStep));
 * `evalTasks` adds evaluation episodes (evalSamples each, at step 0, every evalEvery steps and at the end).
 */
export function estimateRunCost(config: CostConfig, prices: PricesTable, opts: { steps?: number; evalTasks?: number; shape?: Partial<EpisodeShape> } = {}): RunCostEstimate {
  const steps = opts.steps ?? config.steps;
  if (steps === undefined || !Number.isInteger(steps) || steps < 1) throw new InputError('cost estimate: the number of steps is unknown (give steps, or the train task count for epochs)');
  const shape: EpisodeShape = { ...SEED_EPISODE, ...opts.shape };
  for (const [k, v] of Object.entries(shape)) if (!Number.isFinite(v) || v < 0) throw new InputError(`cost estimate: episode shape ${k} must be a number >= 0, got ${v}`);
  const budgets = config.budgets;
  if (budgets) shape.turns = Math.min(shape.turns, budgets.maxTurns);
  const priceKey = config.backend === 'local' ? 'local' : config.model;
  const price = prices.models[priceKey] ?? null;
  const missing: string[] = price ? [] : [`'${priceKey}' is not in the prices table`];
  const episodesPerStep = config.groupsPerStep * config.groupSize;
  const ctx = budgets?.contextTokens ?? Infinity;
  const ep = episodeTokens(shape, ctx);
  const scale = (e: typeof ep, n: number, trained: boolean) => ({ prefillTokens: e.prefillTokens * n, sampleTokens: e.sampleTokens * n, trainTokens: trained ? e.trainTokens * n : 0 });
  const stepTokens = scale(ep, episodesPerStep, true);
  const evalPoints = opts.evalTasks ? (config.evalAtStart === false ? 0 : 1) + (config.evalEvery ? Math.floor((steps - 1) / config.evalEvery) : 0) + 1 : 0;
  const evalEpisodes = (opts.evalTasks ?? 0) * (config.evalSamples ?? 1) * evalPoints;
  const evalTokens = scale(ep, evalEpisodes, false);
  const totalTokens = {
    prefillTokens: stepTokens.prefillTokens * steps + evalTokens.prefillTokens,
    sampleTokens: stepTokens.sampleTokens * steps + evalTokens.sampleTokens,
    trainTokens: stepTokens.trainTokens * steps,
  };
  const worstShape: EpisodeShape = budgets ? { ...shape, turns: budgets.maxTurns, outputTokensPerTurn: budgets.maxTokensPerTurn } : shape;
  const worstEp = episodeTokens(worstShape, ctx);
  const worstTokens = {
    prefillTokens: worstEp.prefillTokens * (episodesPerStep * steps + evalEpisodes),
    sampleTokens: worstEp.sampleTokens * (episodesPerStep * steps + evalEpisodes),
    trainTokens: worstEp.trainTokens * episodesPerStep * steps,
  };
  return {
    model: config.model,
    priceKey,
    price,
    steps,
    episodesPerStep,
    evalEpisodes,
    shape,
    perStep: totals(stepTokens, price),
    total: totals(totalTokens, price, missing),
    worstCase: totals(worstTokens, price),
    missing: [...new Set(missing)],
  };
}

/** A few lines for `sleuth train --dry-run`. */
export function formatCostEstimate(e: RunCostEstimate): string {
  const M = (n: number) => `${(n / 1e6).toFixed(2)}M`;
  const usd = (t: TokenTotals) => (t.usd !== null ? `$${t.usd.toFixed(2)}` : t.knownUsd > 0 ? `unknown (the known parts: $${t.knownUsd.toFixed(2)})` : 'unknown');
  const line = (label: string, t: TokenTotals) => `${label}: prefill ${M(t.prefillTokens)}, sample ${M(t.sampleTokens)}, train ${M(t.trainTokens)} tokens -> ${usd(t)}`;
  return [
    `cost estimate for ${e.model} (prices: ${e.priceKey}), ${e.steps} steps x ${e.episodesPerStep} episodes${e.evalEpisodes ? ` + ${e.evalEpisodes} eval episodes` : ''}`,
    `  typical episode: ${e.shape.turns} turns, ${e.shape.promptTokens} prompt + ${e.shape.outputTokensPerTurn} written + ${e.shape.toolTokensPerTurn} tool tokens per turn`,
    `  ${line('per step', e.perStep)}`,
    `  ${line('total', e.total)}`,
    `  ${line('worst case (full budgets)', e.worstCase)}`,
    ...(e.missing.length ? [`  unknown: ${e.missing.join('; ')}`] : []),
  ].join('\n');
}
