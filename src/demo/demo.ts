import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { ownSearches } from '../agent/rollout.js';
import { baselineAgent, followSweepAgent } from '../suites/search/agents.js';
import type { Agent } from '../agent/types.js';
import { fixedScripts, multiSearchSpec } from '../suites/search/multihop.js';
import { spanScripts, spanSpec } from '../suites/search/span-scripts.js';
import { answerScripts, answerSpec } from '../suites/qa/answer-scripts.js';
import { loadSampler } from '../backend/local/index.js';
import { compareRuns, loadRunRows, type Comparison, type RunRows } from '../eval/compare.js';
import { taskMeans, type Summary } from '../eval/metrics.js';
import { resolveScriptedAgent } from '../suites/registry.js';
import { runEval } from '../eval/runner.js';
import { pairedBootstrapGrid } from '../eval/stats.js';
import { factRecall } from '../reward/sets.js';
import { latestRollouts, readRollouts } from '../runs/store.js';
import { ensureDefaultIndex } from '../search/index.js';
import { loadTaskSet } from '../tasks/registry.js';
import { taskSource } from '../tasks/split.js';
import type { Task } from '../tasks/task.js';
import { createBackend } from '../train/backend-factory.js';
import { baseSpecOf, ensureBaseModel, shippedBasePath } from '../backend/local/base-model.js';
import { mergeConfig, modelSize, parseTrainConfig, readConfigFile, rubricOf, type TrainConfig } from '../train/config.js';
import { localAgent } from '../backend/local/agent.js';
import { loadTrainInputs, priceOf, startTraining } from '../train/start.js';
import { runSft, type SftKeep, type SftResult } from '../train/sft.js';

/**
 * The main job on the embedded default, local backend, no network: build the index; evaluate the
 * scripted baseline and the base model; SFT the small model by rejection sampling from the follow
 * teacher; run GRPO (from the base model or the SFT checkpoint, as the plan says), with its curves
 * on the `dev` split; evaluate every agent on `test`, which nothing was tuned on; and compare them
 * by paired bootstrap over test tasks. The model writes every search: no harness-written turn.
 */

/** configs/NAME.json of this package. */
export function presetPath(name: string): string {
  for (const rel of [`../../../configs/${name}.json`, `../../configs/${name}.json`]) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  throw new Error(`configs/${name}.json is missing from the sleuth package`);
}

export interface SftPlan {
  trainLimit: number;
  attempts: number;
  threshold: number;
  epochs: number;
  batchSize: number;
  learningRate: number;
  keep: SftKeep;
  /** Demonstrations kept per training query (default 1). */
  cap?: number;
}

export interface DemoPlan {
  /** The GRPO preset, configs/NAME.json. */
  preset: string;
  /** Overrides of the preset (and the student's settings for SFT). */
  grpo: Record<string, unknown>;
  sft: SftPlan;
  /**
   * Where GRPO starts: the base model, or the SFT checkpoint. Chosen once per preset from dev
   * numbers (bench:learn prints both), never from test.
   */
  grpoFrom: 'base' | 'sft';
  /** Start from the shipped pretrained base model (else a fresh one of localModel's size). */
  useShippedBase: boolean;
  /** Which shipped model: the 0.3M base (default) or the 1.32M long-episode one (2,048 tokens). */
  shippedSize?: 'base' | 'long';
  /** The split every reported number comes from, and how many of its tasks (0: all). */
  reportSplit: string;
  reportLimit: number;
  /**
   * The SFT teacher, an agent spec (default `follow-sweep`), or BEST_SCRIPT: the fixed script the
   * plan chose on dev, so that SFT starts GRPO from the best plan a script can write and GRPO −
   * the script is what reinforcement learning adds.
   */
  teacher?: string;
  /**
   * Fixed scripts (agent specs): the one with the best mean reward on the GRPO curves' split (dev)
   * is the baseline reported on the report split. Default: the top 10 (`baseline`) alone.
   */
  scripts?: string[];
  /** A privileged ceiling (an agent spec) evaluated on the report split beside the others; never a method. */
  oracle?: string;
  /** The summary metric the best fixed script is chosen by on dev (default `reward`). */
  chooseBy?: string;
}

/** DemoPlan.teacher: the best of the plan's fixed scripts on dev. */
export const BEST_SCRIPT = 'best-script';

const SFT_PLAN: SftPlan = { trainLimit: 160, attempts: 6, threshold: 0.3, epochs: 1, batchSize: 8, learningRate: 1e-3, keep: 'best' };

/**
 * sleuth demo's plan. SFT imitates the best fixed script (the top 10 of the question's keywords,
 * written "1-"; one demonstration per query): measured on dev, 0.862 after one epoch against the
 * base model's 0.757, where the follow teacher's best of six attempts (narrow sets that happened to
 * hold the gold) gave 0.62–0.69 at every epoch, and 0.59 on test (0.48 with the span observation).
 */
export const FULL_PLAN: DemoPlan = { preset: 'local-demo', grpo: {}, sft: { ...SFT_PLAN, attempts: 1 }, grpoFrom: 'base', useShippedBase: true, reportSplit: 'test', reportLimit: 0, teacher: 'baseline-sweep:10' };

/** bench:learn's plan: configs/local-long.json, the same SFT and the same test split. */
export const LONG_PLAN: DemoPlan = { ...FULL_PLAN, preset: 'local-long' };

/** Seconds: a tiny model, a handful of tasks, two GRPO steps (checks the pipeline, not the gain). */
export const QUICK_PLAN: DemoPlan = {
  preset: 'local-demo',
  grpo: {
    model: 'base', localModel: { vocab: 512, dModel: 16, nLayers: 1, nHeads: 2, context: 1024, pretrainSteps: 0 },
    budgets: { maxTurns: 3, maxTokensPerTurn: 16, contextTokens: 1024 }, trainLimit: 8, evalLimit: 4, groupsPerStep: 2, groupSize: 2, steps: 2, concurrency: 4, evalEvery: 1,
  },
  sft: { trainLimit: 6, attempts: 2, threshold: 0.3, epochs: 1, batchSize: 4, learningRate: 1e-3, keep: 'best' },
  grpoFrom: 'sft',
  useShippedBase: false,
  reportSplit: 'test',
  reportLimit: 4,
};

/**
 * The multi-hop task set's plan: the fixed scripts (titles, hit text, spans) chosen on dev, SFT
 * from the best of them, GRPO from the SFT checkpoint, the hop oracle beside. Chosen on dev, seed
 * 0, by GRPO's dev reward at step 100 (docs/commands.md has the runs): the span teacher (the best
 * two of ten attempts over span and hit-text plans) 0.645; the best script as teacher 0.669 at
 * GRPO's learning rate of 5e-4, 0.691 at 2e-4 (from 0.695 at step 0).
 */
export const MUSIQUE_PLAN: DemoPlan = {
  preset: 'local-musique',
  grpo: {},
  // The teacher is one deterministic script: one attempt per query, up to 3 epochs (the best on dev is kept).
  sft: { ...SFT_PLAN, trainLimit: 0, attempts: 1, cap: 1, epochs: 3 },
  grpoFrom: 'sft',
  useShippedBase: true,
  reportSplit: 'test',
  reportLimit: 0,
  teacher: BEST_SCRIPT,
  scripts: ['baseline', ...fixedScripts().map(multiSearchSpec), ...spanScripts().map(spanSpec)],
  oracle: 'hop-oracle',
};

/**
 * MUSIQUE_PLAN on the shipped 1.32M long-episode model, whose 2,048-token context holds more of
 * each hit; the same teacher, scripts and steps (bench:learn --plan musique-long; measured on dev).
 */
export const MUSIQUE_LONG_PLAN: DemoPlan = { ...MUSIQUE_PLAN, shippedSize: 'long', grpo: { ...MUSIQUE_PLAN.grpo, model: 'shipped-long', budgets: { maxTurns: 6, maxTokensPerTurn: 128, contextTokens: 2048 } } };

/**
 * The answer agent's plan (bench:qa): the QA environment on the default set's HotpotQA and MuSiQue
 * questions; the answer scripts chosen on dev; SFT as the tutorial's STaR step (4 attempts per
 * train question, the shortest with F1 >= 0.8 kept), the attempts proposed by the answer teacher;
 * GRPO from the SFT checkpoint; the oracle (answers with gold) beside on test, a ceiling.
 */
export const QA_PLAN: DemoPlan = {
  preset: 'local-qa',
  grpo: {},
  sft: { ...SFT_PLAN, trainLimit: 0, attempts: 8, cap: 2, threshold: 0.59, keep: 'shortest', epochs: 16 },
  grpoFrom: 'sft',
  useShippedBase: true,
  reportSplit: 'test',
  reportLimit: 0,
  teacher: 'answer-sweep',
  scripts: ['baseline', ...answerScripts().map(answerSpec)],
  oracle: 'oracle',
  chooseBy: 'exact_match',
};

/** QA_PLAN on the shipped 1.32M long-episode model (2,048 tokens), whose paragraphs' spans fit more of the episode (bench:qa --plan qa-long). */
export const QA_LONG_PLAN: DemoPlan = { ...QA_PLAN, shippedSize: 'long', grpo: { ...QA_PLAN.grpo, model: 'shipped-long', budgets: { maxTurns: 6, maxTokensPerTurn: 64, contextTokens: 2048 } } };

/** Seconds: QA_PLAN's pipeline on a tiny model and a handful of tasks (checks the pipeline, not the gain). */
export const QA_QUICK_PLAN: DemoPlan = {
  ...QUICK_PLAN,
  preset: 'local-qa',
  grpo: { ...QUICK_PLAN.grpo, budgets: { maxTurns: 4, maxTokensPerTurn: 16, contextTokens: 1024 } },
  teacher: 'answer-sweep',
  scripts: ['baseline', 'answer:t1,yn'],
  oracle: 'oracle',
};

/** `sleuth demo --tasks musique`: MUSIQUE_PLAN with 40 GRPO steps (2m43s on 2 cores). */
export const MUSIQUE_DEMO_PLAN: DemoPlan = { ...MUSIQUE_PLAN, grpo: { steps: 40, evalEvery: 8 } };

/** Seconds: MUSIQUE_PLAN's pipeline on a tiny model and a handful of tasks (checks the pipeline, not the gain). */
export const MUSIQUE_QUICK_PLAN: DemoPlan = {
  ...QUICK_PLAN,
  grpo: { ...QUICK_PLAN.grpo, tasks: 'musique', evalLimit: 4, budgets: { maxTurns: 4, maxTokensPerTurn: 16, contextTokens: 1024 } },
  teacher: 'bridge-sweep',
  scripts: ['baseline', 'hit-text:10,1,5,10'],
  oracle: 'hop-oracle',
};

/**
 * The committed MuSiQue result (bench/results/learn.json of this package): GRPO minus the best
 * fixed script, for the demo to print beside its own; undefined where the file is absent or not
 * that benchmark's.
 */
export function committedMusiqueResult(): { delta: number; ci_low: number; ci_high: number; script: string } | undefined {
  for (const rel of ['../../../bench/results/learn.json', '../../bench/results/learn.json']) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (!existsSync(p)) continue;
    try {
      const j = JSON.parse(readFileSync(p, 'utf8')) as { plan?: unknown; grpo_vs_best_script?: { delta?: unknown; ci_low?: unknown; ci_high?: unknown }; best_script?: { spec?: unknown } };
      const d = j.grpo_vs_best_script;
      if (j.plan !== 'musique' || !d || typeof d.delta !== 'number' || typeof d.ci_low !== 'number' || typeof d.ci_high !== 'number') return undefined;
      return { delta: d.delta, ci_low: d.ci_low, ci_high: d.ci_high, script: typeof j.best_script?.spec === 'string' ? j.best_script.spec : 'the best fixed script' };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The best of the fixed scripts on dev, and every candidate's dev score (reward, or the plan's chooseBy metric). */
export interface ScriptChoice {
  spec: string;
  split: string;
  reward: number;
  candidates: { spec: string; reward: number }[];
}

/** How an agent searched on the report split. */
export interface SearchBehaviour {
  /** bm25_search and grep_corpus calls per episode that the agent wrote itself. */
  searches_per_episode: number;
  /** Share of episodes with at least one search of its own beyond its first. */
  own_search_share: number;
  /** Mean trajectory recall on the MuSiQue tasks (multi-hop), when there are any. */
  musique_trajectory_recall: number | null;
}

/** One paired difference on the report split: `delta` = this minus that, mean over seeds x tasks. */
export interface PairedDelta {
  metric: string;
  delta: number;
  ci_low: number;
  ci_high: number;
  shown: boolean;
  tasks: number;
  seeds: number;
}

export interface DemoResult {
  dir: string;
  seed: number;
  /** The weights of the rubric every reward here was scored with (reward = sum of weight x part). */
  rewardWeights: Record<string, number>;
  wallSeconds: number;
  phases: Record<string, number>;
  reportSplit: string;
  baseline: Summary;
  base: Summary;
  sft: Summary;
  grpo: Summary;
  sftRun: SftResult;
  grpoFrom: 'base' | 'sft';
  /** Run directories of the report-split evals, by agent. */
  evalDirs: Record<'baseline' | 'base' | 'sft' | 'grpo', string>;
  /** The sampler weights evaluated as the base model and as GRPO's last checkpoint. */
  samplers: { base: string; grpo: string };
  /** The baseline's choice among the plan's fixed scripts (undefined: the plan has none). */
  bestScript?: ScriptChoice;
  /** The plan's privileged ceiling on the report split, and its run directory. */
  oracle?: { spec: string; summary: Summary; dir: string };
  behaviour: Record<'baseline' | 'base' | 'sft' | 'grpo', SearchBehaviour>;
  /** baseline, base, SFT and GRPO against the baseline. */
  table: Comparison;
  grpoVsBase: PairedDelta;
  grpoVsBaseline: PairedDelta;
  grpoVsSft: PairedDelta;
}

const AGENTS = ['baseline', 'base', 'sft', 'grpo'] as const;

export async function runDemo(o: { dir: string; plan: DemoPlan; log: (line: string) => void; seed?: number }): Promise<DemoResult> {
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
  const shipped = plan.useShippedBase ? shippedBasePath(plan.shippedSize ?? 'base') : undefined;
  const preset = presetPath(plan.preset);
  const raw = mergeConfig(readConfigFile(preset), { ...plan.grpo, ...(o.seed !== undefined ? { seed: o.seed } : {}) });
  let config: TrainConfig = parseTrainConfig(raw, `configs/${plan.preset}.json with the plan`);
  const basePath = await phase('base model', async () => shipped ?? ensureBaseModel(baseSpecOf({ ...modelSize(config.localModel), seed: config.seed }), { log: (l) => log(`  ${l}`) }));
  log(`  base model: ${basePath}${shipped ? ' (shipped, pretrained)' : ''}`);
  const inputs = await loadTrainInputs(config);
  const set = await loadTaskSet(config.tasks);
  const reportTasks = limit(set.tasks(plan.reportSplit), plan.reportLimit);
  const rubric = rubricOf(config);
  const price = priceOf(config);
  const evalDirs = { baseline: join(dir, 'baseline'), base: join(dir, 'base'), sft: join(dir, 'sft', plan.reportSplit), grpo: join(dir, 'grpo', plan.reportSplit) };
  // Every report-split eval, in the environment given (GRPO's comes after the first inputs are closed).
  // Every eval of the demo: the report split's (evalRun) and the fixed scripts' on dev (one sample: they are deterministic).
  const evalOn = (runDir: string, agent: Agent, split: string, tasks: Task[], samples: number, env = inputs.env) =>
    runEval({
      dir: runDir,
      agent,
      env,
      tasks,
      samples,
      concurrency: config.concurrency,
      rubric,
      budgets: config.budgets,
      config: { agent: agent.spec, tasks: config.tasks, split, samples, rubric, budgets: config.budgets, price: price ?? null },
      identity: ['agent', 'samples', 'rubric', 'budgets'],
      price,
      bootstrap: { seed: config.seed },
    }).then((r) => r.summary);
  const evalRun = (runDir: string, agent: Agent, env = inputs.env) => evalOn(runDir, agent, plan.reportSplit, reportTasks, config.evalSamples, env);
  const studentOf = (path: string) => localAgent(`local:${path}`, loadSampler(path), config.temperature, config.seed + 1, config.openingSearch);

  // The baseline: the top 10, or the best of the plan's fixed scripts on dev (never chosen on the report split).
  const scripted = (spec: string) => resolveScriptedAgent(inputs.opened.suite, spec, inputs.opened.corpus ? { corpus: inputs.opened.corpus } : {});
  let bestScript: ScriptChoice | undefined;
  if (plan.scripts?.length) {
    bestScript = await phase(`choose the best fixed script (${config.evalSplit})`, () => chooseScript(plan.scripts!, config.evalSplit, plan.chooseBy ?? 'reward', scripted, (spec, agent) => evalOn(join(dir, `scripts-${config.evalSplit}`, spec.replace(/[^A-Za-z0-9._-]/gu, '_')), agent, config.evalSplit, inputs.evalTasks, 1)));
    log(`  best fixed script on ${config.evalSplit}: ${bestScript.spec} (${bestScript.reward.toFixed(3)}; ${bestScript.candidates.map((c) => `${c.spec} ${c.reward.toFixed(3)}`).join(', ')})`);
  }
  const baselineScript = bestScript ? scripted(bestScript.spec) : baselineAgent(10);
  const baseline = await phase(`eval baseline (${plan.reportSplit})`, () => evalRun(evalDirs.baseline, baselineScript));
  const oracleSpec = plan.oracle;
  const oracle = oracleSpec ? { spec: oracleSpec, dir: join(dir, 'oracle'), summary: await phase(`eval oracle (${plan.reportSplit}; privileged, a ceiling)`, () => evalRun(join(dir, 'oracle'), scripted(oracleSpec))) } : undefined;
  const base = await phase(`eval base model (${plan.reportSplit})`, () => evalRun(evalDirs.base, studentOf(basePath)));

  const sftRun = await phase('sft', async () => {
    const sftConfig = parseTrainConfig({ ...raw, model: basePath, epochs: plan.sft.epochs, adam: { ...config.adam, learningRate: plan.sft.learningRate } }, 'demo sft');
    const setup = await createBackend(sftConfig, { checkpointDir: join(dir, 'sft', 'checkpoints') });
    if (plan.teacher === BEST_SCRIPT && !bestScript) throw new Error(`plan's teacher is the best fixed script, but the plan has no scripts`);
    const teacher = plan.teacher === BEST_SCRIPT ? scripted(bestScript!.spec) : plan.teacher ? scripted(plan.teacher) : followSweepAgent();
    const r = await runSft({
      dir: join(dir, 'sft'),
      record: { ...sftConfig, teacher: teacher.spec, attempts: plan.sft.attempts, cap: plan.sft.cap ?? 1, threshold: plan.sft.threshold, keep: plan.sft.keep },
      teacher,
      setup,
      env: inputs.env,
      budgets: sftConfig.budgets,
      trainTasks: limit(inputs.trainTasks, plan.sft.trainLimit),
      // The epoch is chosen on dev (the GRPO curves' split), never on the report split.
      evalTasks: inputs.evalTasks,
      rubric,
      price,
      attempts: plan.sft.attempts,
      cap: plan.sft.cap ?? 1,
      threshold: plan.sft.threshold,
      keep: plan.sft.keep,
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
      onEpoch: (e, loss, s) => log(`  sft epoch ${e}: loss ${loss.toFixed(3)}, ${config.evalSplit} reward ${num(s?.['reward'])}`),
    });
    await setup.backend.close();
    return r;
  });
  const sft = await phase(`eval SFT (${plan.reportSplit})`, () => evalRun(evalDirs.sft, studentOf(sftRun.best.samplerPath)));
  // GRPO below loads its own inputs.
  await inputs.close();

  const start = plan.grpoFrom === 'sft' ? sftRun.best.samplerPath : basePath;
  config = parseTrainConfig({ ...raw, model: start }, 'demo grpo');
  const grpoRun = await phase(`grpo (from the ${plan.grpoFrom === 'sft' ? 'SFT checkpoint' : 'base model'}; curves on ${config.evalSplit})`, () =>
    startTraining({
      dir: join(dir, 'grpo'),
      config,
      resume: false,
      log: (l) => log(`  ${l}`),
      onStep: (p) => log(`  step ${p.step}/${p.steps}: reward ${num(p.metrics['reward'])} valid ${num(p.metrics['valid_share'])} entropy ${num(p.metrics['entropy'])} searches ${num(p.metrics['searches_per_episode'])} mixed ${num(p.metrics['groups_mixed_share'])} (${p.stepSeconds.toFixed(1)}s)`),
    }),
  );
  const finalSampler = grpoRun.lastCheckpoint?.samplerPath;
  if (!finalSampler) throw new Error(`GRPO run ${join(dir, 'grpo')} left no sampler checkpoint`);
  const inputs2 = await loadTrainInputs(config);
  const grpo = await phase(`eval GRPO (${plan.reportSplit})`, () => evalRun(evalDirs.grpo, studentOf(finalSampler), inputs2.env)).finally(() => inputs2.close());

  const runs = AGENTS.map((a) => loadRunRows(evalDirs[a]));
  const full = compareRuns(runs, { seed: config.seed });
  // The table shows the retrieval numbers; every metric stays in the run directories.
  const names = ['baseline', 'base model', 'SFT', 'GRPO'];
  const table = {
    ...full,
    runs: full.runs.map((r, i) => ({ ...r, dir: names[i]! })),
    metrics: full.metrics.filter((m) => ['reward', 'recall', 'precision', 'f1', 'fbeta', 'valid', 'curated_size', 'turns'].includes(m)),
  };
  const [rowsBaseline, rowsBase, rowsSft, rowsGrpo] = runs as [RunRows, RunRows, RunRows, RunRows];
  const byTask = new Map(reportTasks.map((t) => [t.id, t]));
  const behaviour = Object.fromEntries(AGENTS.map((a) => [a, searchBehaviour(evalDirs[a], byTask)])) as DemoResult['behaviour'];
  return {
    dir,
    seed: config.seed,
    rewardWeights: rubric.weights as Record<string, number>,
    wallSeconds: (performance.now() - t0) / 1000,
    phases,
    reportSplit: plan.reportSplit,
    baseline,
    base,
    sft,
    grpo,
    sftRun,
    grpoFrom: plan.grpoFrom,
    evalDirs,
    samplers: { base: basePath, grpo: finalSampler },
    ...(bestScript ? { bestScript } : {}),
    ...(oracle ? { oracle } : {}),
    behaviour,
    table,
    grpoVsBase: pairedDelta([rowsBase], [rowsGrpo], config.seed),
    grpoVsBaseline: pairedDelta([rowsBaseline], [rowsGrpo], config.seed),
    grpoVsSft: pairedDelta([rowsSft], [rowsGrpo], config.seed),
  };
}

/** Each script's mean `metric` on `split` (by `evaluate`), and the best (the first on a tie). */
async function chooseScript(specs: readonly string[], split: string, metric: string, agentOf: (spec: string) => Agent, evaluate: (spec: string, agent: Agent) => Promise<Summary>): Promise<ScriptChoice> {
  const candidates: ScriptChoice['candidates'] = [];
  for (const spec of specs) candidates.push({ spec, reward: Number((await evaluate(spec, agentOf(spec)))[metric]) });
  const best = candidates.reduce((a, b) => (b.reward > a.reward ? b : a));
  return { spec: best.spec, split, reward: best.reward, candidates };
}

/** Per-hop recall of a summary (the multi-hop parts it has), by name. */
export function hopRecall(summary: Summary): Record<string, number> {
  return Object.fromEntries(Object.entries(summary).filter(([k, v]) => /^(hop\d+_recall|last_hop_recall|last_hop_found)$/u.test(k) && typeof v === 'number') as [string, number][]);
}

/**
 * b minus a on a metric (default reward), paired over the tasks every run shares and over seeds
 * (one run per seed on each side, seed i of a paired with seed i of b).
 */
export function pairedDelta(a: readonly RunRows[], b: readonly RunRows[], seed = 0, metric = 'reward'): PairedDelta {
  const means = [...a, ...b].map((r) => taskMeans(r.rows, metric));
  const tasks = [...means[0]!.keys()].filter((t) => means.every((m) => m.has(t))).sort();
  const grid = (runs: readonly RunRows[], offset: number) => runs.map((_, i) => tasks.map((t) => means[offset + i]!.get(t)!));
  const ci = pairedBootstrapGrid(grid(a, 0), grid(b, a.length), { seed });
  return { metric, delta: ci.mean, ci_low: ci.lo, ci_high: ci.hi, shown: ci.shown, tasks: tasks.length, seeds: ci.seeds };
}

export function searchBehaviour(dir: string, tasks: ReadonlyMap<string, Task>): SearchBehaviour {
  const rollouts = latestRollouts(readRollouts(dir).rollouts);
  const own = rollouts.map(ownSearches);
  const musique = rollouts.filter((r) => tasks.get(r.taskId) && taskSource(tasks.get(r.taskId)!) === 'musique');
  return {
    searches_per_episode: own.reduce((s, n) => s + n, 0) / Math.max(1, own.length),
    own_search_share: own.filter((n) => n >= 2).length / Math.max(1, own.length),
    musique_trajectory_recall: musique.length ? musique.reduce((s, r) => s + factRecall(tasks.get(r.taskId)!, r.trajectory), 0) / musique.length : null,
  };
}

function limit<T>(items: T[], n: number): T[] {
  return n > 0 ? items.slice(0, n) : items;
}

function num(x: unknown): string {
  return typeof x === 'number' ? x.toFixed(3) : '-';
}
