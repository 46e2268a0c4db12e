import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { baselineAgent } from '../agent/scripted.js';
import type { Agent } from '../agent/types.js';
import { loadSampler } from '../backend/local/index.js';
import { compareRuns, loadRunRows, type Comparison } from '../eval/compare.js';
import type { Summary } from '../eval/metrics.js';
import { runEval } from '../eval/runner.js';
import { readSummary } from '../runs/store.js';
import { ensureDefaultIndex } from '../search/index.js';
import { createBackend } from './backend-factory.js';
import { baseSpecOf, ensureBaseModel, shippedBasePath } from './base-model.js';
import { mergeConfig, parseTrainConfig, readConfigFile, rubricOf, type TrainConfig } from './config.js';
import { localAgent, baselineSweepAgent } from './local-agent.js';
import { loadTrainInputs, priceOf, startTraining } from './run.js';
import { runSft, type SftResult } from './sft.js';

/**
 * The main job on the embedded default, local backend, no network: build the index, evaluate the
 * scripted baseline and the base model, SFT the small model by rejection sampling, run GRPO from
 * the SFT checkpoint, evaluate, and compare GRPO with SFT by a paired bootstrap over eval tasks.
 */

/** configs/local-demo.json of this package. */
export function demoConfigPath(): string {
  for (const rel of ['../../../configs/local-demo.json', '../../configs/local-demo.json']) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  throw new Error('configs/local-demo.json is missing from the sleuth package');
}

export interface DemoPlan {
  /** Overrides of configs/local-demo.json for GRPO (and the student's settings for SFT). */
  grpo: Record<string, unknown>;
  sft: { trainLimit: number; attempts: number; ks: number[]; threshold: number; epochs: number; batchSize: number; learningRate: number };
  /** Start from the shipped pretrained base model (else a fresh one of localModel's size). */
  useShippedBase: boolean;
}

export const FULL_PLAN: DemoPlan = {
  grpo: {},
  sft: { trainLimit: 160, attempts: 5, ks: [1, 2, 3, 5, 8], threshold: 0.3, epochs: 1, batchSize: 8, learningRate: 1e-3 },
  useShippedBase: true,
};

/** Seconds: a tiny model, a handful of tasks, two GRPO steps (checks the pipeline, not the gain). */
export const QUICK_PLAN: DemoPlan = {
  grpo: {
    model: 'base', localModel: { vocab: 512, dModel: 16, nLayers: 1, nHeads: 2, context: 1024, pretrainSteps: 0 },
    budgets: { maxTurns: 3, maxTokensPerTurn: 16, contextTokens: 1024 }, trainLimit: 8, evalLimit: 4, groupsPerStep: 2, groupSize: 2, steps: 2, concurrency: 4,
  },
  sft: { trainLimit: 6, attempts: 2, ks: [1, 3], threshold: 0.3, epochs: 1, batchSize: 4, learningRate: 1e-3 },
  useShippedBase: false,
};

export interface DemoResult {
  dir: string;
  wallSeconds: number;
  phases: Record<string, number>;
  baseline: Summary;
  base: Summary;
  sft: Summary;
  grpo: Summary;
  sftRun: SftResult;
  /** baseline, base, SFT and GRPO against the baseline. */
  table: Comparison;
  /** GRPO minus SFT on eval reward, paired over tasks. */
  grpoVsSft: { metric: 'reward'; delta: number; ci_low: number; ci_high: number; shown: boolean; tasks: number };
}

export async function runDemo(o: { dir: string; plan: DemoPlan; log: (line: string) => void }): Promise<DemoResult> {
  const t0 = performance.now();
  const phases: Record<string, number> = {};
  const phase = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const s = performance.now();
    o.log(`— ${name}`);
    const r = await f();
    phases[name] = (performance.now() - s) / 1000;
    o.log(`  ${name}: ${phases[name]!.toFixed(1)}s`);
    return r;
  };
  const { plan, dir, log } = o;

  await phase('index', async () => ensureDefaultIndex());
  const shipped = plan.useShippedBase ? shippedBasePath() : undefined;
  const raw = mergeConfig(readConfigFile(demoConfigPath()), plan.grpo);
  let config: TrainConfig = parseTrainConfig(raw, 'configs/local-demo.json with the demo plan');
  const basePath = await phase('base model', async () => shipped ?? ensureBaseModel(baseSpecOf({ ...config.localModel, seed: config.seed }), { log: (l) => log(`  ${l}`) }));
  log(`  base model: ${basePath}${shipped ? ' (shipped, pretrained)' : ''}`);
  const inputs = await loadTrainInputs(config);
  const rubric = rubricOf(config);
  const price = priceOf(config);
  const evalRun = (name: string, agent: Agent) =>
    runEval({
      dir: join(dir, name),
      agent,
      env: inputs.env,
      tasks: inputs.evalTasks,
      samples: config.evalSamples,
      concurrency: config.concurrency,
      rubric,
      budgets: config.budgets,
      config: { agent: agent.spec, tasks: config.tasks, split: config.evalSplit, samples: config.evalSamples, rubric, budgets: config.budgets, price: price ?? null },
      identity: ['agent', 'samples', 'rubric', 'budgets'],
      price,
      bootstrap: { seed: config.seed },
    }).then((r) => r.summary);

  const baseline = await phase('eval baseline', () => evalRun('baseline', baselineAgent(10)));
  const base = await phase('eval base model', () => evalRun('base', localAgent(`local:${basePath}`, loadSampler(basePath), config.temperature, config.seed + 1, config.openingSearch)));

  const sftRun = await phase('sft', async () => {
    const sftConfig = parseTrainConfig({ ...raw, model: basePath, epochs: plan.sft.epochs, adam: { ...config.adam, learningRate: plan.sft.learningRate } }, 'demo sft');
    const setup = await createBackend(sftConfig, { checkpointDir: join(dir, 'sft', 'checkpoints') });
    const teacher = baselineSweepAgent(plan.sft.ks, undefined, config.openingSearch);
    const r = await runSft({
      dir: join(dir, 'sft'),
      record: { ...sftConfig, teacher: teacher.spec, attempts: plan.sft.attempts, cap: 1, threshold: plan.sft.threshold },
      teacher,
      setup,
      env: inputs.env,
      budgets: sftConfig.budgets,
      trainTasks: inputs.trainTasks.slice(0, plan.sft.trainLimit),
      evalTasks: inputs.evalTasks,
      rubric,
      price,
      attempts: plan.sft.attempts,
      cap: 1,
      threshold: plan.sft.threshold,
      epochs: plan.sft.epochs,
      batchSize: plan.sft.batchSize,
      adam: sftConfig.adam,
      temperature: sftConfig.temperature,
      evalSamples: sftConfig.evalSamples,
      concurrency: sftConfig.concurrency,
      seed: sftConfig.seed,
      maxTokens: sftConfig.budgets.contextTokens,
      openingSearch: sftConfig.openingSearch,
      log: (l) => log(`  ${l}`),
      onEpoch: (e, loss, s) => log(`  sft epoch ${e}: loss ${loss.toFixed(3)}, eval reward ${num(s?.['reward'])}`),
    });
    await (setup.backend as { close?: () => Promise<void> }).close?.();
    return r;
  });
  // GRPO below loads its own inputs.
  await inputs.close();
  const sftDir = join(dir, 'sft', 'evals', `epoch-${sftRun.best.epoch}`);
  const sft = loadSummaryOf(sftDir);

  config = parseTrainConfig({ ...raw, model: sftRun.best.samplerPath }, 'demo grpo');
  const grpoRun = await phase('grpo', () =>
    startTraining({
      dir: join(dir, 'grpo'),
      config,
      resume: false,
      log: (l) => log(`  ${l}`),
      onStep: (p) => log(`  step ${p.step}/${p.steps}: reward ${num(p.metrics['reward'])} valid ${num(p.metrics['valid_share'])} entropy ${num(p.metrics['entropy'])} mixed ${num(p.metrics['groups_mixed_share'])} (${p.stepSeconds.toFixed(1)}s)`),
    }),
  );
  const grpoDir = join(dir, 'grpo', 'evals', `step-${grpoRun.stepsDone}`);
  const grpo = loadSummaryOf(grpoDir);

  const runs = [join(dir, 'baseline'), join(dir, 'base'), sftDir, grpoDir].map(loadRunRows);
  const full = compareRuns(runs, { seed: config.seed });
  // The table shows the retrieval numbers; every metric stays in the run directories.
  // Columns are named by phase; the run directories are printed below the table.
  const names = ['baseline', 'base model', 'SFT', 'GRPO'];
  const table = {
    ...full,
    runs: full.runs.map((r, i) => ({ ...r, dir: names[i]! })),
    metrics: full.metrics.filter((m) => ['reward', 'recall', 'precision', 'f1', 'fbeta', 'valid', 'curated_size', 'turns'].includes(m)),
  };
  const pair = compareRuns([runs[2]!, runs[3]!], { seed: config.seed });
  const d = pair.runs[1]!.diffs['reward']!;
  return {
    dir,
    wallSeconds: (performance.now() - t0) / 1000,
    phases,
    baseline,
    base,
    sft,
    grpo,
    sftRun,
    table,
    grpoVsSft: { metric: 'reward', delta: d.mean, ci_low: d.lo, ci_high: d.hi, shown: d.shown, tasks: d.n },
  };
}

function loadSummaryOf(dir: string): Summary {
  return readSummary(dir) as Summary;
}

function num(x: unknown): string {
  return typeof x === 'number' ? x.toFixed(3) : '-';
}
