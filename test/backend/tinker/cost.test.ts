import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { episodeTokens, estimateRunCost, formatCostEstimate, SEED_EPISODE, type PricesTable } from '../../../src/backend/tinker/index.js';

const prices = JSON.parse(readFileSync('configs/prices.json', 'utf8')) as PricesTable;

/** The seeds' full run: gpt-oss-20b, 64 groups of 8, 24 steps, 40 turns, 2,048 tokens per turn, 30,720 context. */
const SEED = {
  backend: 'tinker',
  model: 'openai/gpt-oss-20b',
  groupsPerStep: 64,
  groupSize: 8,
  steps: 24,
  budgets: { maxTurns: 40, maxTokensPerTurn: 2048, contextTokens: 30720 },
};

describe('run cost estimate', () => {
  it('counts an episode: prefill grows with every turn, training sees the final sequence once', () => {
    const e = episodeTokens({ turns: 3, promptTokens: 100, outputTokensPerTurn: 10, toolTokensPerTurn: 40 });
    expect(e).toEqual({ prefillTokens: 100 + 150 + 200, sampleTokens: 30, trainTokens: 100 + 30 + 80 });
    // The context limit ends the episode early: a fourth turn would need 100 + 40 + 120 = 260 > 250 tokens.
    expect(episodeTokens({ turns: 10, promptTokens: 100, outputTokensPerTurn: 10, toolTokensPerTurn: 40 }, 250)).toEqual(e);
  });

  it("prices the seeds' run from the prices table: train tokens known, prefill and sample unknown for gpt-oss-20b", () => {
    const e = estimateRunCost(SEED, prices);
    expect(e.episodesPerStep).toBe(512);
    const ep = episodeTokens(SEED_EPISODE, 30720);
    expect(e.perStep.trainTokens).toBe(ep.trainTokens * 512);
    expect(e.total.trainTokens).toBe(ep.trainTokens * 512 * 24);
    expect(e.total.usd).toBeNull();
    expect(e.missing).toEqual(['prefill price unknown', 'sample price unknown']);
    expect(e.worstCase.trainTokens).toBeGreaterThan(e.total.trainTokens);
    expect(e.worstCase.trainTokens).toBeLessThanOrEqual(30720 * 512 * 24);
    expect(e.total.knownUsd).toBeCloseTo((e.total.trainTokens * 0.36) / 1e6, 9);
    expect(formatCostEstimate(e)).toMatch(/total: .* -> unknown \(the known parts: \$\d+\.\d\d\)/);
  });

  it('gives dollars when every needed price is known, and nothing for the local backend', () => {
    const qwen = estimateRunCost({ ...SEED, model: 'Qwen/Qwen3-8B' }, prices);
    const t = qwen.total;
    expect(t.usd).toBeCloseTo((t.prefillTokens * 0.13 + t.sampleTokens * 0.4 + t.trainTokens * 0.4) / 1e6, 9);
    expect(t.knownUsd).toBe(t.usd);
    expect(qwen.perStep.usd! * 24).toBeCloseTo(t.usd!, 6);
    const withEval = estimateRunCost({ ...SEED, model: 'Qwen/Qwen3-8B', evalSamples: 2, evalEvery: 8 }, prices, { evalTasks: 100 });
    // Evals at steps 0, 8, 16 and the end: 4 × 100 × 2 episodes, sampled but not trained.
    expect(withEval.evalEpisodes).toBe(800);
    expect(withEval.total.trainTokens).toBe(t.trainTokens);
    expect(withEval.total.usd!).toBeGreaterThan(t.usd!);
    expect(estimateRunCost({ ...SEED, backend: 'local', model: 'base' }, prices).total.usd).toBe(0);
    const unknown = estimateRunCost({ ...SEED, model: 'some/model' }, prices);
    expect(unknown.total.usd).toBeNull();
    expect(unknown.missing).toEqual(["'some/model' is not in the prices table"]);
  });

  it('needs the number of steps', () => {
    expect(() => estimateRunCost({ ...SEED, steps: undefined }, prices)).toThrow(/number of steps is unknown/);
    expect(estimateRunCost({ ...SEED, steps: undefined }, prices, { steps: 3 }).steps).toBe(3);
    expect(() => estimateRunCost(SEED, prices, { shape: { turns: -1 } })).toThrow(/turns must be a number >= 0/);
  });
});
