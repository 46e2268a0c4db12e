import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderedAgent } from '../../src/agent/token-agent.js';
import type { Datum, Sampler } from '../../src/backend/types.js';
import { SearchEnvironment } from '../../src/suites/search/env.js';
import { localRenderer } from '../../src/protocol/compact/local.js';
import { resolveRubric } from '../../src/suites/registry.js';
import { openRunDir } from '../../src/runs/store.js';
import { truncateRunAfter } from '../../src/runs/training.js';
import type { TrainingSetup } from '../../src/train/backend-factory.js';
import { parseTrainConfig } from '../../src/train/config.js';
import { learnStep, sampleStep, stepDatums, type GrpoRun } from '../../src/train/grpo.js';
import { baselineSweepAgent } from '../../src/suites/search/agents.js';
import type { Task } from '../../src/tasks/task.js';
import { ensureWasm, tinyBackend, tinyTokenizer } from '../backend/helpers.js';
import { hotpotFixture } from '../env/fixture.js';

/**
 * One GRPO step in-process, no CLI: a scripted teacher (curate the top 1, or the top 10, of a
 * keyword search) written out as the local model's tokens samples the groups, and a small real
 * local model trains on them.
 */
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-grpo-step-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let tasks: Task[];
let env: SearchEnvironment;
beforeAll(async () => {
  ensureWasm();
  const f = await hotpotFixture(3);
  tasks = f.tasks;
  env = new SearchEnvironment(f.searcher, { snippetChars: 40 });
});

function grpoRun(dir: string): GrpoRun {
  const tok = tinyTokenizer();
  const backend = tinyBackend(tok, { context: 2048, dModel: 16, nLayers: 1, nHeads: 2 });
  const renderer = localRenderer(tok);
  const setup: TrainingSetup = {
    backend,
    renderer,
    agent: (_sampler, spec) => new RenderedAgent(baselineSweepAgent([1, 10], spec), renderer),
  };
  const config = parseTrainConfig(
    { steps: 1, groupsPerStep: 2, groupSize: 4, concurrency: 4, budgets: { maxTurns: 4, maxTokensPerTurn: 400, contextTokens: 2048 }, adam: { learningRate: 1e-3 }, reward: { rubric: 'f4' } },
    'test',
  );
  openRunDir(dir, { kind: 'train' }, []);
  return { dir, config, setup, env, trainTasks: tasks, rubric: resolveRubric('f4'), price: undefined, orders: new Map() };
}

/** The importance-sampling objective sum of ratio x advantage over the datums, under `sampler`'s weights. */
async function objective(sampler: Sampler, datums: readonly Datum[]): Promise<number> {
  let total = 0;
  for (const d of datums) {
    const lps = await sampler.computeLogprobs([...d.inputTokens, d.targetTokens.at(-1)!]);
    d.targetTokens.forEach((_, t) => {
      if (d.weights[t]) total += Math.exp(lps[t + 1]! - d.logprobs![t]!) * d.advantages![t]!;
    });
  }
  return total;
}

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

describe('a GRPO step in-process', () => {
  it('samples groups, gives every rollout its group-relative advantage, trains on the datums, and records the step', async () => {
    const dir = join(tmp, 'run');
    const run = grpoRun(dir);
    const before = await run.setup.backend.saveWeightsForSampler('sampler-0');

    // The pieces, as trainGrpo runs them: the data order from cursor 0, two queries of four rollouts.
    const sampled = await sampleStep(run, 1, 0, before);
    expect(sampled.cursor).toBe(2);
    expect(sampled.batch.sampled.map((g) => g.rollouts.length)).toEqual([4, 4]);
    const d = stepDatums(sampled.batch, run.config, run.setup.backend.contextLimit);
    for (const g of sampled.batch.sampled) {
      expect(g.rollouts.map((r) => r.step)).toEqual([1, 1, 1, 1]);
      expect(Math.abs(g.rollouts.reduce((s, r) => s + r.advantage!, 0))).toBeLessThan(1e-9);
    }
    // Top 1 and top 10 of the same search score differently, so the groups carry a gradient.
    expect(d.datums.length).toBeGreaterThan(0);
    expect(d.tooLong).toBe(0);
    // lossScale 'tokens': the advantages are divided by the tokens trained on.
    expect(d.trainTokens).toBe(d.datums.reduce((s, x) => s + x.weights.reduce((a, w) => a + w, 0), 0));

    // The whole step, from the same state: same rollouts (seeded), trained and written down.
    const start = performance.now();
    const done = await learnStep(run, 1, await sampleStep(run, 1, 0, before), start, undefined);
    expect(done.cursor).toBe(2);
    expect(done.metrics['datums']).toBe(d.datums.length);
    expect(done.metrics['trained_tokens']).toBe(d.trainTokens);
    expect(Number.isFinite(done.metrics['loss'])).toBe(true);
    expect(done.metrics['grad_norm']).toBeGreaterThan(0);
    expect(done.sampler.modelPath).not.toBe(before.modelPath);
    // The update raised the objective it was a step on.
    expect(await objective(done.sampler, d.datums)).toBeGreaterThan(await objective(before, d.datums));

    const rollouts = lines(join(dir, 'rollouts.jsonl'));
    expect(rollouts).toHaveLength(8);
    expect(rollouts.map((r) => r.advantage)).toEqual(sampled.batch.sampled.flatMap((g) => g.rollouts.map((r) => r.advantage)));
    const metrics = lines(join(dir, 'metrics.jsonl'));
    expect(metrics.map((m) => [m.step, m.kind])).toEqual([[1, 'train']]);
    expect(metrics[0].datums).toBe(d.datums.length);
  });

  it('a resumed run drops the records of steps after its checkpoint, and a line cut by a crash', () => {
    const dir = join(tmp, 'cut');
    openRunDir(dir, { kind: 'train' }, []);
    writeFileSync(join(dir, 'metrics.jsonl'), ['{"step":1,"kind":"train"}', '{"step":1,"kind":"eval"}', '{"step":2,"kind":"train"}', '{"step":3,"ki'].join('\n'));
    writeFileSync(join(dir, 'rollouts.jsonl'), '{"step":1}\n{"step":2}\n');
    expect(truncateRunAfter(dir, 1)).toEqual({ metrics: 2, rollouts: 1 });
    expect(readFileSync(join(dir, 'metrics.jsonl'), 'utf8')).toBe('{"step":1,"kind":"train"}\n{"step":1,"kind":"eval"}\n');
    expect(readFileSync(join(dir, 'rollouts.jsonl'), 'utf8')).toBe('{"step":1}\n');
    expect(truncateRunAfter(dir, 1)).toEqual({ metrics: 0, rollouts: 0 });
  });
});
