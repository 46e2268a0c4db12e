import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resolveRunAgent } from '../agents.js';
import type { OpenAIFactoryOptions } from '../../agent/openai.js';
import type { Agent } from '../../agent/types.js';
import { DEFAULT_BUDGETS, type Budgets } from '../../env/types.js';
import { InputError } from '../../errors.js';
import type { Rubric } from '../../reward/rubric.js';
import { DEFAULT_SUITE, QA_BENCHMARK_SUITE, defaultRubric, resolveRubric, RUBRICS, suiteOf, SUITE_KINDS } from '../../suites/registry.js';
import { loadPrices, priceModelOf, type Price } from '../../eval/cost.js';
import { benchmarkRow, planBenchmarks, type BenchmarkRow, type BenchmarksReport } from '../../eval/benchmarks.js';
import { formatBenchmarks, formatSummary } from '../../eval/report.js';
import { writeFileAtomic } from '../../files/atomic.js';
import { FLASHRAG_BENCHMARKS, FLASHRAG_ROW_SHAPE } from '../../tasks/loaders/flashrag.js';
import { runEval, type EvalResult } from '../../eval/runner.js';
import type { TaskSet } from '../../tasks/registry.js';
import type { Task } from '../../tasks/task.js';
import type { EnvironmentOption, EnvironmentOptions, Suite } from '../../suites/types.js';
import { intFlag, numberFlag, parseFlags, printJson, type Command } from '../command.js';
import { liveProgress } from '../progress.js';
import { terminalSafe } from '../safe-text.js';

/** Flags shared by `sleuth eval` and `sleuth headroom`. */
export const EVAL_FLAGS = {
  agent: { type: 'string' },
  tasks: { type: 'string' },
  split: { type: 'string' },
  samples: { type: 'string' },
  limit: { type: 'string' },
  concurrency: { type: 'string' },
  env: { type: 'string' },
  out: { type: 'string' },
  rubric: { type: 'string' },
  beta: { type: 'string' },
  prices: { type: 'string' },
  'price-model': { type: 'string' },
  'api-key-env': { type: 'string' },
  temperature: { type: 'string' },
  'max-turns': { type: 'string' },
  'max-tokens-per-turn': { type: 'string' },
  'context-tokens': { type: 'string' },
  'opening-search': { type: 'string' },
  'search-workers': { type: 'string' },
  'top-k': { type: 'string' },
  'max-searches': { type: 'string' },
  'closed-book': { type: 'boolean' },
  seed: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** The shared flags' help, with the command's own default sample count. */
export const evalFlagsUsage = (samples: number) => `  --agent SPEC          baseline[:K], oracle, openai:MODEL[@BASE_URL], local:PATH|shipped|shipped-long,
                        tinker:MODEL (required); multi-hop scripts: titles:K,FOLLOW[,FOLLOWK[,CURATE[,CHAIN]]]
                        (follow the top hits' titles), hit-text:... (follow their text with the question's
                        keywords), span:K,HIT.SPAN[+HIT.SPAN...],FOLLOWK,FIRST,THEN[,all] (follow candidate
                        spans of the top hits, e.g. span:10,1.1,5,10,5), and hop-oracle[:K[,CURATE]]
                        (searches the gold sub-questions: privileged, a ceiling)
  --tasks NAME          task set (default: default)
  --split S             split of the task set (default: eval)
  --samples N           rollouts per task (default: ${samples})
  --limit N             only the first N tasks of the split
  --concurrency N       episodes in flight at once (default: 4)
  --env ${SUITE_KINDS.join('|')}  the environment (default ${DEFAULT_SUITE}): ${SUITE_KINDS.map((k) => `${k}, ${suiteOf(k).summary}`).join('; ')}
  --rubric NAME         reward rubric: ${Object.keys(RUBRICS).join(', ')}
                        (default: the environment's own, ${SUITE_KINDS.map((k) => suiteOf(k).defaultRubric).join(', ')})
  --beta B              F-beta's beta (default 4)
  --prices FILE         prices table, USD per 1M tokens (default: configs/prices.json)
  --price-model NAME    the prices-table entry to bill (default: from the agent spec)
  --api-key-env NAME    environment variable holding the openai: key (default OPENAI_API_KEY)
  --temperature T       sampling temperature of model agents (openai:, local:, tinker:); 0 is greedy
                        (the most probable token). Default: 1 for local: and tinker:, the API's for openai:
  --max-turns N         turn budget per episode (default: the model's, else the environment's:
                        4 for local:shipped, as sleuth demo trains and scores it; 40 for search)
  --max-tokens-per-turn N  tokens the model may write per turn (default: the model's, else the
                        environment's: 128 for local:shipped, 2,048 for search)
  --context-tokens N    tokens an episode may hold (default: the model's context for local:
                        agents, e.g. 1,024 for local:shipped, 2,048 for local:shipped-long; else the
                        environment's, 30,720 for search); never more than the model holds
  --opening-search K    local: agents open every episode with a search for the whole question
                        (K hits): for a model trained with openingSearch; sleuth demo's are not
  --top-k N             qa: paragraphs per search (default 3; the tutorial's ablation: 1)
  --max-searches N      qa: searches per episode; one more ends the episode unanswered (default 5;
                        the tutorial's ablation: 2)
  --closed-book         qa: no search tool; the model answers from what it knows (the floor)
  --search-workers N    answer searches and greps in N worker threads (default 0: in this one);
                        for many episodes in flight over a large corpus
  --seed N              seeds each (task, sample) episode of a sampling agent, and the bootstrap (default 0)
  --json                print the summary as JSON`;

/**
 * An eval's budgets: the environment's defaults, then what the agent's model is made for (a local
 * checkpoint's context, a shipped model's training budgets), then the flags. A context larger than
 * the model holds is refused, so no rollout fails for a prompt the model cannot take; a turn budget
 * larger than the context is cut to it.
 */
export function evalBudgets(envDefaults: Budgets, agent: Agent, flags: Partial<Budgets>): Budgets {
  const budgets = { ...envDefaults, ...agent.budgets, ...flags };
  const limit = agent.contextLimit;
  if (limit !== undefined && budgets.contextTokens > limit) {
    throw new InputError(`--context-tokens ${budgets.contextTokens}: the model behind ${agent.spec} holds ${limit} tokens; give at most ${limit}`);
  }
  return { ...budgets, maxTokensPerTurn: Math.min(budgets.maxTokensPerTurn, budgets.contextTokens) };
}

type Values = ReturnType<typeof parseFlags<typeof EVAL_FLAGS>>['values'];

export interface PreparedEval {
  run: (dir: string, onProgress?: boolean) => Promise<EvalResult>;
  agent: string;
  seed: number;
  /** The budgets every episode ran within, and whether the agent's model set any of them. */
  budgets: Budgets;
  budgetsFromModel: boolean;
  tasks: string;
  split: string;
  samples: number;
  /** The temperature the agent samples at, where it was set (flag or default); undefined: the agent's own. */
  temperature: number | undefined;
}

/** Tasks an eval is given instead of --tasks and --split (one of the QA benchmarks), and the environment they are for. */
export interface GivenTasks {
  taskSet: TaskSet;
  split: string;
  env: string;
}

/**
 * Turn flags into a ready-to-run eval: tasks, index, environment, agent, rubric, prices.
 * `defaults.temperature`: the sampling temperature of every agent that samples (a chat model, a
 * local or Tinker sampler) unless --temperature says otherwise; unset, each keeps its own.
 */
export async function prepareEval(values: Values, defaults: { samples: number; temperature?: number }, given?: GivenTasks): Promise<PreparedEval> {
  const agentSpec = values.agent;
  if (!agentSpec) throw new InputError('--agent SPEC is required (e.g. baseline, oracle, openai:MODEL@URL)');
  const suite = suiteOf(given?.env ?? values.env ?? DEFAULT_SUITE, '--env');
  const envName = suite.kind;
  // A suite that brings its own tasks (the invoice emails) takes no --tasks.
  if (values.tasks !== undefined && !suite.taskSets) throw new InputError(`--tasks ${values.tasks}: --env ${envName} has its own tasks; leave --tasks out`);
  const split = given?.split ?? values.split ?? 'eval';
  const samples = intFlag(values.samples, 'samples', defaults.samples, 1, 10_000);
  const limit = values.limit === undefined ? undefined : intFlag(values.limit, 'limit', 0, 1);
  const concurrency = intFlag(values.concurrency, 'concurrency', 4, 1, 1024);
  let rubric: Rubric = values.rubric ? resolveRubric(values.rubric) : defaultRubric(envName);
  if (rubric.kind !== envName) throw new InputError(`--rubric ${rubric.name} scores ${rubric.kind} rollouts, but --env is ${envName}`);
  if (values.beta !== undefined) {
    const beta = numberFlag(values.beta, 'beta', 4);
    if (beta <= 0) throw new InputError(`--beta must be positive, got '${values.beta}'`);
    rubric = { ...rubric, name: `${rubric.name}@beta=${beta}`, beta: { kind: 'constant', beta } };
  }
  const budgetFlags: Partial<Budgets> = {
    ...(values['max-turns'] === undefined ? {} : { maxTurns: intFlag(values['max-turns'], 'max-turns', 40, 1, 10_000) }),
    ...(values['max-tokens-per-turn'] === undefined ? {} : { maxTokensPerTurn: intFlag(values['max-tokens-per-turn'], 'max-tokens-per-turn', 0, 1) }),
    ...(values['context-tokens'] === undefined ? {} : { contextTokens: intFlag(values['context-tokens'], 'context-tokens', 0, 16) }),
  };
  const seed = intFlag(values.seed, 'seed', 0);
  const openingSearch = values['opening-search'] === undefined ? 0 : intFlag(values['opening-search'], 'opening-search', 0, 1, 50);
  const searchWorkers = intFlag(values['search-workers'], 'search-workers', 0, 0, 64);
  const environmentOptions = environmentFlags(values, suite);
  if (openingSearch && !agentSpec.startsWith('local:')) throw new InputError(`--opening-search is for local: agents (the harness writes their first turn), not '${agentSpec}'`);

  const pricesPath = values.prices ? resolve(values.prices) : undefined;
  const prices = loadPrices(pricesPath);
  const priceModel = values['price-model'] ?? priceModelOf(agentSpec);
  if (values['price-model'] && !prices.models[priceModel]) throw new InputError(`--price-model ${priceModel}: not in the prices table (${Object.keys(prices.models).join(', ')})`);
  const price: Price | undefined = prices.models[priceModel];

  const openai: OpenAIFactoryOptions = { maxConcurrent: concurrency };
  if (values['api-key-env']) openai.apiKeyEnv = values['api-key-env'];
  // Every model agent samples at it (local: and tinker: through the context, openai: through its options);
  // the benchmarks' default (greedy) too.
  const temperature = values.temperature !== undefined ? numberFlag(values.temperature, 'temperature', 1, 0) : defaults.temperature;
  if (temperature !== undefined) openai.temperature = temperature;

  const opened = await suite.open(given ? { taskSet: given.taskSet } : values.tasks !== undefined ? { tasks: values.tasks } : {});
  const tasksName = opened.tasksName;
  let tasks: Task[] = opened.tasks(split);
  const agent = await resolveRunAgent(opened, agentSpec, { openai, openingSearch, ...(temperature !== undefined ? { temperature } : {}) });
  const indexDir = opened.indexDir;
  // Before the environment starts (search workers keep the process alive): a context the model cannot hold.
  evalBudgets(DEFAULT_BUDGETS, agent, budgetFlags.contextTokens === undefined ? {} : { contextTokens: budgetFlags.contextTokens });
  if (limit !== undefined) tasks = tasks.slice(0, limit);
  if (tasks.length === 0) throw new InputError(`--tasks ${tasksName} --split ${split}: no tasks`);
  // Last, after every check of the flags: search workers keep the process alive until closed.
  const { env, close: closeBackend } = await opened.environment({ searchWorkers, ...environmentOptions });
  const budgets = evalBudgets(env.defaultBudgets, agent, budgetFlags);

  const config = {
    agent: agentSpec,
    tasks: tasksName,
    split,
    samples,
    limit: limit ?? null,
    env: envName,
    rubric,
    budgets,
    concurrency,
    indexDir,
    priceModel,
    price: price ?? null,
    // The name of the key's variable only: the key itself is never written.
    apiKeyEnv: agentSpec.startsWith('openai:') ? (values['api-key-env'] ?? 'OPENAI_API_KEY') : null,
    // null: the agent's default (above). Part of the run's identity: a resume at another temperature would mix two experiments.
    temperature: temperature ?? null,
    openingSearch,
    ...environmentOptions,
    searchWorkers,
    seed,
    createdAt: new Date().toISOString(),
  };

  return {
    agent: agentSpec,
    seed,
    budgets,
    budgetsFromModel: agent.budgets !== undefined,
    tasks: tasksName,
    split,
    samples,
    temperature,
    run: async (dir, showProgress = true) => {
      const progress = liveProgress({ label: 'eval', unit: 'rollouts', enabled: showProgress && !values.json });
      try {
        return await runEval({
          dir,
          agent,
          env,
          tasks,
          samples,
          concurrency,
          rubric,
          budgets,
          config,
          identity: ['agent', 'tasks', 'split', 'samples', 'limit', 'env', 'rubric', 'budgets', 'openingSearch', 'temperature', 'defaultK', 'searchBudget', 'closedBook'],
          price,
          seed,
          bootstrap: { seed },
          onRollout: (_r, done, todo) => progress.update(done, { total: todo }),
        });
      } finally {
        progress.done();
        await closeBackend();
      }
    },
  };
}

/**
 * What to do about rollouts that ended in an error. A rerun retries only those, with the same
 * episode seeds: a seeded sampler (local:, tinker:) writes the same tokens again, so an error its
 * own output or the budgets caused comes back, and the advice says so rather than suggest a rerun.
 */
export function retryAdvice(result: Pick<EvalResult, 'errors' | 'summary'>, agentSpec: string, seed: number): string {
  const lines = [`eval: ${result.summary.errors} rollout(s) ended in an error:`, ...result.errors.slice(0, 5).map((e) => `  ${e.count} x ${terminalSafe(e.message)}`)];
  if (result.errors.length > 5) lines.push(`  (and ${result.errors.length - 5} other errors; each rollout's is in rollouts.jsonl)`);
  if (/^(local|tinker):/.test(agentSpec)) {
    lines.push(`Running the same command again retries only these, with the same episode seeds (--seed ${seed}): ${agentSpec} then writes the same tokens, so errors like these come back. To draw differently, retry into the same --out with another --seed; for an error about the context or tokens, change --context-tokens or --max-tokens-per-turn (a new --out: budgets are part of a run's identity).`);
  } else {
    lines.push('Running the same command again retries only these (the finished rollouts are kept).');
  }
  return lines.join('\n');
}

/** eval's flags: the shared ones and --benchmarks. */
const FLAGS = { ...EVAL_FLAGS, benchmarks: { type: 'string' } } as const;

/**
 * `eval --benchmarks DIR`: a greedy eval of the agent on each of the seven QA benchmarks it can run
 * (planBenchmarks), each into its own run directory OUT/NAME, then one table of them all, also
 * written to OUT/benchmarks.json. Exit 1 when a rollout ended in an error, as a plain eval.
 */
async function runBenchmarks(values: ReturnType<typeof parseFlags<typeof FLAGS>>['values'], dir: string, out: string): Promise<number> {
  // Checked before the corpus is indexed, which may take long.
  if (!values.agent) throw new InputError('--agent SPEC is required (e.g. baseline, oracle, openai:MODEL@URL)');
  if (values.tasks !== undefined || values.split !== undefined) throw new InputError('--benchmarks DIR runs each benchmark on its own questions: leave --tasks and --split out');
  if (values.env !== undefined && values.env !== QA_BENCHMARK_SUITE) throw new InputError(`--benchmarks DIR runs in --env ${QA_BENCHMARK_SUITE} (the benchmarks' shape), not '${values.env}'`);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError(`--benchmarks ${dir}: no such folder (a FlashRAG download: nq/test.jsonl, hotpotqa/dev.jsonl, ..., wiki-18.jsonl)`);
  refuseForeignReport(join(out, BENCHMARKS_FILE));
  const indexing = liveProgress({ label: 'index', unit: 'passages', enabled: !values.json });
  const plan = await planBenchmarks(dir, {
    onIndexing: (corpus, index) => process.stderr.write(`eval: indexing ${corpus} into ${index} (once: later runs reuse it)\n`),
    onIndexProgress: (passages, fraction) => indexing.update(passages, { fraction }),
  }).finally(() => indexing.done());
  if (plan.sources.length === 0) throw new InputError(`--benchmarks ${dir}: no benchmark can run\n${plan.missing.join('\n')}`);
  const rows: BenchmarkRow[] = [];
  let errors = 0;
  let temperature = 0;
  let budgets: Budgets | undefined;
  for (const source of plan.sources) {
    const prepared = await prepareEval(values, { samples: 1, temperature: 0 }, { taskSet: source.taskSet, split: source.split, env: QA_BENCHMARK_SUITE });
    temperature = prepared.temperature ?? 0;
    budgets = prepared.budgets;
    const run = join(out, source.benchmark);
    if (!values.json) process.stderr.write(`eval: ${source.benchmark} (${source.data}) -> ${run}\n`);
    const result = await prepared.run(run);
    if (result.summary.errors > 0) process.stderr.write(`${source.benchmark}: ${retryAdvice(result, prepared.agent, prepared.seed)}\n`);
    errors += result.summary.errors;
    rows.push(benchmarkRow(source, run, result.summary, result.rollouts, suiteOf(QA_BENCHMARK_SUITE).lookupTools));
  }
  // What every episode was given, once: the benchmarks share the agent and the flags.
  if (!values.json && budgets) process.stderr.write(`eval: budgets ${budgets.maxTurns} turns, ${budgets.maxTokensPerTurn} tokens per turn, a ${budgets.contextTokens}-token context\n`);
  const report: BenchmarksReport = { agent: values.agent, env: QA_BENCHMARK_SUITE, temperature, benchmarks: rows, missing: plan.missing };
  writeFileAtomic(join(out, BENCHMARKS_FILE), JSON.stringify(report, null, 2) + '\n');
  if (values.json) printJson(report);
  else console.log(terminalSafe(formatBenchmarks(report), { multiline: true }));
  return errors > 0 ? 1 : 0;
}

/** The table of `eval --benchmarks`, as JSON, in --out. */
export const BENCHMARKS_FILE = 'benchmarks.json';

/** A file at the table's place that an earlier `eval --benchmarks` did not write is never replaced. */
function refuseForeignReport(path: string): void {
  if (!existsSync(path)) return;
  let report: unknown;
  try {
    report = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    report = undefined;
  }
  const ours = typeof report === 'object' && report !== null && Array.isArray((report as { benchmarks?: unknown }).benchmarks) && typeof (report as { agent?: unknown }).agent === 'string';
  if (!ours) throw new InputError(`--out: ${path} is not a table sleuth eval --benchmarks wrote, and sleuth does not overwrite it: choose another --out`);
}

/** The question files of the benchmarks under DIR, for the help. */
const BENCHMARK_FILES = FLASHRAG_BENCHMARKS.map((b) => `${b.name}/${b.split}.jsonl`);

export const command: Command = {
  usage: `usage: sleuth eval --agent SPEC [--tasks NAME] [--split S] [--samples N] [--limit N] [--concurrency N] [--env ${SUITE_KINDS.join('|')}] --out DIR
       sleuth eval --benchmarks DIR --agent SPEC [--limit N] [...] --out DIR

Runs N rollouts per task, scores each with the rubric, appends them to DIR/rollouts.jsonl and writes
DIR/summary.json. Re-running the same command resumes: finished rollouts are kept, missing or errored
ones are run.

${evalFlagsUsage(1)}
  --out DIR             the run directory (required); with --benchmarks, the folder of their run dirs
  --benchmarks DIR      a greedy eval (temperature 0 unless --temperature) in the qa environment on
                        each QA benchmark present under DIR in FlashRAG's layout:
                        ${BENCHMARK_FILES.slice(0, 4).join(' ')}
                        ${BENCHMARK_FILES.slice(4).join(' ')}
                        (${FLASHRAG_ROW_SHAPE}), searching the passages of
                        DIR/wiki-18.jsonl or DIR/wiki18_100w.jsonl ({id, contents} per line; indexed
                        once, under .sleuth/index). HotpotQA and MuSiQue, when absent, run on the
                        shipped default set's test half. --limit N is per benchmark. Each runs into
                        OUT/NAME; one table (n, EM, F1, abort rate, length-clip ratio, searches per
                        episode and their profile), also written to OUT/${BENCHMARKS_FILE} (--json prints it)`,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, FLAGS, 'eval');
    if (positionals.length) throw new InputError(`unexpected argument '${positionals[0]}'`);
    if (!values.out) throw new InputError('--out DIR is required');
    if (values.benchmarks !== undefined) return runBenchmarks(values, values.benchmarks, values.out);
    const prepared = await prepareEval(values, { samples: 1 });
    const result = await prepared.run(values.out);
    // After the run (an error before it stays one line), before the summary: what every episode was given.
    const b = prepared.budgets;
    if (!values.json) process.stderr.write(`eval: budgets ${b.maxTurns} turns, ${b.maxTokensPerTurn} tokens per turn, a ${b.contextTokens}-token context${prepared.budgetsFromModel ? ` (${prepared.agent}'s, over the environment's)` : ''}\n`);
    if (result.resumed) process.stderr.write(`eval: resumed ${values.out}: kept ${result.kept} finished rollouts, ran ${result.ran}\n`);
    if (result.skippedLines) process.stderr.write(`eval: skipped ${result.skippedLines} unreadable line(s) of rollouts.jsonl (cut by an interruption)\n`);
    if (values.json) printJson(result.summary);
    else console.log(terminalSafe(formatSummary(result.summary, `${prepared.agent} on ${prepared.tasks}/${prepared.split} -> ${values.out}`), { multiline: true }));
    if (result.summary.errors > 0) {
      process.stderr.write(`${retryAdvice(result, prepared.agent, prepared.seed)}\n`);
      return 1;
    }
    return 0;
  },
};

/** --top-k, --max-searches and --closed-book as environment options, refused where the suite's environment does not take them. */
function environmentFlags(values: Values, suite: Suite): EnvironmentOptions {
  const flags: [string, EnvironmentOption, unknown][] = [
    ['top-k', 'defaultK', values['top-k'] === undefined ? undefined : intFlag(values['top-k'], 'top-k', 3, 1, 50)],
    ['max-searches', 'searchBudget', values['max-searches'] === undefined ? undefined : intFlag(values['max-searches'], 'max-searches', 5, 0, 100)],
    ['closed-book', 'closedBook', values['closed-book'] ? true : undefined],
  ];
  const options: Record<string, unknown> = {};
  for (const [flag, option, value] of flags) {
    if (value === undefined) continue;
    if (!suite.environmentOptions?.has(option)) throw new InputError(`--${flag}: --env ${suite.kind} does not take it (its environment has no such setting)`);
    options[option] = value;
  }
  if (options.closedBook && options.searchBudget !== undefined) throw new InputError('--closed-book: there is no search to budget; leave --max-searches out');
  return options as EnvironmentOptions;
}
