import { join } from 'node:path';
import { loadSampler } from '../backend/local/index.js';
import { localAgent } from '../backend/local/agent.js';
import type { Agent } from '../agent/types.js';
import { loadRunRows, type RunRows } from '../eval/compare.js';
import { costUsd, loadPrices, type Price } from '../eval/cost.js';
import type { Summary } from '../eval/metrics.js';
import { runEval } from '../eval/runner.js';
import { processMetrics, searchCount, type ProcessMetrics } from '../eval/process.js';
import { readRollouts, latestRollouts } from '../runs/store.js';
import { suiteOf } from '../suites/registry.js';
import type { EnvironmentOptions } from '../suites/types.js';
import { taskSource } from '../tasks/split.js';
import type { Task } from '../tasks/task.js';
import { mergeConfig, parseTrainConfig, readConfigFile, rubricOf, type TrainConfig } from '../train/config.js';
import { priceOf } from '../train/start.js';
import { pairedDelta, presetPath, runDemo, type DemoPlan, type DemoResult, type PairedDelta } from './demo.js';

/**
 * The Wikipedia research-agent tutorial's flow on the local model (bench:qa): the closed-book
 * floor, the best answer script (chosen on dev), the base model with search, SFT (STaR: the
 * shortest correct of 4 attempts per train question), GRPO, and the tutorial's two ablations of
 * the GRPO model (top-1 paragraphs; a budget of 2 searches), every one on the test split, with
 * exact match and F1, by source (HotpotQA, MuSiQue), searches and tokens per question, and the
 * dollars per question. The pipeline up to GRPO is runDemo's; this adds the evals around it.
 */

/** The rows of the tutorial's table, in its order (the oracle last: a ceiling, not a method). */
export const QA_ROWS = ['closed_book', 'closed_book_grpo', 'best_script', 'base', 'sft', 'grpo', 'grpo_top1', 'grpo_budget2', 'oracle'] as const;
export type QaRow = (typeof QA_ROWS)[number];

/** What each row is, for the printed table. */
export const QA_ROW_LABELS: Record<QaRow, string> = {
  closed_book: 'closed book (base model, no search)',
  closed_book_grpo: 'closed book (GRPO model, no search)',
  best_script: 'best answer script (chosen on dev)',
  base: 'base model + search',
  sft: '+ SFT (STaR)',
  grpo: '+ GRPO',
  grpo_top1: 'GRPO, top-1 paragraph',
  grpo_budget2: 'GRPO, budget of 2 searches',
  oracle: 'oracle (answers with gold: a ceiling)',
};

/** The tutorial's ablations, as environment settings of the GRPO model's eval. */
const ABLATIONS: Record<'grpo_top1' | 'grpo_budget2', EnvironmentOptions> = { grpo_top1: { defaultK: 1 }, grpo_budget2: { searchBudget: 2 } };

/** The model whose prices the tokens of a local run are also billed at: the tutorial's. */
export const TUTORIAL_PRICE_MODEL = 'Qwen/Qwen3.5-4B';

export interface QaSeedResult {
  demo: DemoResult;
  /** Every row's eval run directory. */
  dirs: Record<QaRow, string>;
}

/** runDemo with the plan, then the closed-book and ablation evals of the base and GRPO models on the report split. */
export async function runQaFlow(o: { dir: string; plan: DemoPlan; seed: number; log: (line: string) => void }): Promise<QaSeedResult> {
  const demo = await runDemo(o);
  const config = planConfig(o.plan, o.seed);
  const tasks = await reportTasks(config, o.plan);
  const student = (path: string) => localAgent(`local:${path}`, loadSampler(path), config.temperature, config.seed + 1, config.openingSearch);
  const dirs: Record<QaRow, string> = {
    closed_book: join(o.dir, 'closed-book'),
    closed_book_grpo: join(o.dir, 'closed-book-grpo'),
    best_script: demo.evalDirs.baseline,
    base: demo.evalDirs.base,
    sft: demo.evalDirs.sft,
    grpo: demo.evalDirs.grpo,
    grpo_top1: join(o.dir, 'grpo-top1'),
    grpo_budget2: join(o.dir, 'grpo-budget2'),
    oracle: demo.oracle?.dir ?? join(o.dir, 'oracle'),
  };
  const evals: [QaRow, string, EnvironmentOptions][] = [
    ['closed_book', demo.samplers.base, { closedBook: true }],
    ['closed_book_grpo', demo.samplers.grpo, { closedBook: true }],
    ['grpo_top1', demo.samplers.grpo, ABLATIONS.grpo_top1],
    ['grpo_budget2', demo.samplers.grpo, ABLATIONS.grpo_budget2],
  ];
  for (const [row, sampler, options] of evals) {
    o.log(`— eval ${QA_ROW_LABELS[row]} (${o.plan.reportSplit})`);
    await evalIn(dirs[row], student(sampler), config, o.plan.reportSplit, tasks, options);
  }
  return { demo, dirs };
}

/** The plan's training config at a seed (as runDemo parses it). */
export function planConfig(plan: DemoPlan, seed: number): TrainConfig {
  return parseTrainConfig(mergeConfig(readConfigFile(presetPath(plan.preset)), { ...plan.grpo, seed }), `configs/${plan.preset}.json with the plan`);
}

/** The report split's tasks, as runDemo takes them. */
export async function reportTasks(config: TrainConfig, plan: DemoPlan): Promise<Task[]> {
  const opened = await suiteOf(config.env).open({ tasks: config.tasks });
  const tasks = opened.tasks(plan.reportSplit);
  return plan.reportLimit > 0 ? tasks.slice(0, plan.reportLimit) : tasks;
}

/** One eval of an agent in the config's environment with extra settings (closed book, top-k, budget). */
async function evalIn(dir: string, agent: Agent, config: TrainConfig, split: string, tasks: Task[], options: EnvironmentOptions): Promise<Summary> {
  const opened = await suiteOf(config.env).open({ tasks: config.tasks });
  const { env, close } = await opened.environment({ budgets: config.budgets, ...options });
  const rubric = rubricOf(config);
  const price = priceOf(config);
  try {
    const r = await runEval({
      dir,
      agent,
      env,
      tasks,
      samples: config.evalSamples,
      concurrency: config.concurrency,
      rubric,
      budgets: config.budgets,
      config: { agent: agent.spec, tasks: config.tasks, split, samples: config.evalSamples, rubric, budgets: config.budgets, price: price ?? null, ...options },
      identity: ['agent', 'samples', 'rubric', 'budgets', 'defaultK', 'searchBudget', 'closedBook'],
      price,
      bootstrap: { seed: config.seed },
    });
    return r.summary;
  } finally {
    await close();
  }
}

/** One row of the table, over every seed's run of it. */
export interface QaRowStats {
  label: string;
  exact_match: number;
  f1: number;
  /** Exact match of the questions of each source (hotpotqa, musique). */
  exact_match_by_source: Record<string, number>;
  searches_per_question: number;
  tokens_per_question: number;
  /** What the run cost per question at its own price (a local model: 0). */
  usd_per_question: number;
  /** What its prompt and sampled tokens would cost at the tutorial model's Tinker prices (a yardstick: another tokenizer counts differently). */
  usd_per_question_at_tutorial_prices: number | null;
  /** Exact match per seed, in seed order. */
  seeds: number[];
  /** The paper's process metrics over every seed's episodes: abort rate, length-clip ratio, the search-count profile. */
  process: ProcessMetrics;
}

/** The table's statistics, from the run directories of every seed. */
export function qaRowStats(row: QaRow, dirs: readonly string[], tasks: ReadonlyMap<string, Task>, price: Price | undefined): QaRowStats {
  const tutorial: Price | undefined = loadPrices().models[TUTORIAL_PRICE_MODEL];
  const all = dirs.map((d) => latestRollouts(readRollouts(d).rollouts));
  const flat = all.flat();
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const part = (r: (typeof flat)[number], name: string) => r.reward?.parts[name] ?? 0;
  const bySource: Record<string, number[]> = {};
  for (const r of flat) (bySource[tasks.get(r.taskId) ? taskSource(tasks.get(r.taskId)!) : 'unknown'] ??= []).push(part(r, 'exact_match'));
  const lookups = suiteOf('qa').lookupTools;
  const tutorialUsd = flat.map((r) => costUsd(r, tutorial));
  return {
    label: QA_ROW_LABELS[row],
    exact_match: mean(flat.map((r) => part(r, 'exact_match'))),
    f1: mean(flat.map((r) => part(r, 'f1'))),
    exact_match_by_source: Object.fromEntries(Object.entries(bySource).sort().map(([s, xs]) => [s, mean(xs)])),
    searches_per_question: mean(flat.map((r) => searchCount(r, lookups))),
    tokens_per_question: mean(flat.map((r) => r.promptTokens + r.completionTokens)),
    // A run at the config's price (local: 0); a price the table does not know counts as 0 here.
    usd_per_question: mean(flat.map((r) => costUsd(r, price) ?? 0)),
    usd_per_question_at_tutorial_prices: tutorialUsd.every((u) => u !== null) ? mean(tutorialUsd as number[]) : null,
    seeds: all.map((rs) => mean(rs.map((r) => part(r, 'exact_match')))),
    process: processMetrics(flat, lookups),
  };
}

/** The paired comparisons the issue asks for, on exact match (b minus a, over seeds x tasks). */
export const QA_COMPARISONS: [string, QaRow, QaRow][] = [
  ['grpo_vs_best_script', 'best_script', 'grpo'],
  ['grpo_vs_closed_book', 'closed_book', 'grpo'],
  ['grpo_vs_closed_book_grpo', 'closed_book_grpo', 'grpo'],
  ['grpo_vs_base', 'base', 'grpo'],
  ['grpo_vs_sft', 'sft', 'grpo'],
  ['sft_vs_base', 'base', 'sft'],
  ['top1_vs_grpo', 'grpo', 'grpo_top1'],
  ['budget2_vs_grpo', 'grpo', 'grpo_budget2'],
];

/** Every comparison of QA_COMPARISONS on exact match, and on F1. */
export function qaComparisons(dirs: Record<QaRow, string[]>, seed = 0): Record<string, { exact_match: PairedDelta; f1: PairedDelta }> {
  const rows = (row: QaRow): RunRows[] => dirs[row].map(loadRunRows);
  return Object.fromEntries(QA_COMPARISONS.map(([name, a, b]) => [name, { exact_match: pairedDelta(rows(a), rows(b), seed, 'exact_match'), f1: pairedDelta(rows(a), rows(b), seed, 'f1') }]));
}
