import { parseAgentSpec, resolveAgent, type AgentFactoryContext, type AgentTable } from '../agent/registry.js';
import type { Agent } from '../agent/types.js';
import type { RewardBreakdown, Rollout } from '../agent/rollout.js';
import { InputError } from '../errors.js';
import { betaAt } from '../reward/schedule.js';
import { parseRubric as parseRubricShape, weighParts, type Rubric } from '../reward/rubric.js';
import type { Task } from '../tasks/task.js';
import { invoiceSuite } from './invoices/suite.js';
import { qaSuite } from './qa/suite.js';
import { searchSuite } from './search/suite.js';
import type { OpenedSuite, Suite, SuiteAgentContext } from './types.js';

/**
 * The suites by kind: the one list of environments. Everything that depends on the kind of
 * environment a run used asks here; a new environment is its folder and one line in SUITES.
 */
const SUITES: ReadonlyMap<string, Suite> = new Map([searchSuite, qaSuite, invoiceSuite].map((s) => [s.kind, s]));

/** The environment a run uses when none is named. */
export const DEFAULT_SUITE = searchSuite.kind;

/** The environment the QA benchmarks (`sleuth eval --benchmarks`: NQ ... Bamboogle) are scored in: Search-R1's shape. */
export const QA_BENCHMARK_SUITE = qaSuite.kind;

export const SUITE_KINDS = [...SUITES.keys()] as [string, ...string[]];

export function isSuiteKind(kind: string): boolean {
  return SUITES.has(kind);
}

/** `search, qa or invoices`, for messages and usage text. */
export function suiteKindList(conjunction = 'or'): string {
  return SUITE_KINDS.length === 1 ? SUITE_KINDS[0] : `${SUITE_KINDS.slice(0, -1).join(', ')} ${conjunction} ${SUITE_KINDS.at(-1)}`;
}

/** The suite of a kind; `what` names the input for the error (e.g. `--env`). */
export function suiteOf(kind: string, what = 'env'): Suite {
  const suite = SUITES.get(kind);
  if (!suite) throw new InputError(`${what} must be ${suiteKindList()}, got '${kind}'`);
  return suite;
}

/** Every named rubric of every suite, by name. */
export const RUBRICS: Readonly<Record<string, Rubric>> = Object.fromEntries([...SUITES.values()].flatMap((s) => s.rubrics.map((r) => [r.name, r])));

export function resolveRubric(name: string): Rubric {
  const r = RUBRICS[name];
  if (!r) throw new InputError(`unknown rubric '${name}' (known: ${Object.keys(RUBRICS).join(', ')})`);
  return r;
}

/** The rubric a suite uses when none is named. */
export function defaultRubric(kind: string): Rubric {
  return resolveRubric(suiteOf(kind).defaultRubric);
}

/** Check a rubric from a config file: its shape, and that its kind is a suite. */
export function parseRubric(value: unknown, source: string): Rubric {
  const r = parseRubricShape(value, source);
  if (!isSuiteKind(r.kind)) throw new InputError(`${source}: rubric.kind: '${r.kind}' is not an environment (${suiteKindList()})`);
  return r;
}

/**
 * Score a rollout: the reward parts of the rubric's suite, weighed by the rubric. `step` (default:
 * the rollout's own training step, else 0) picks beta from the schedule.
 */
export function scoreRollout(task: Task, rollout: Rollout, rubric: Rubric, step?: number): RewardBreakdown {
  const beta = betaAt(rubric.beta, step ?? rollout.step ?? 0);
  return weighParts(rubric, suiteOf(rubric.kind, `rubric '${rubric.name}': kind`).rewardParts(task, rollout, beta));
}

/**
 * The suite a run directory's rollouts belong to: its rubric's kind, else the environment its
 * rollouts name (every rollout records its environment), else the default.
 */
export function suiteOfRun(config: Record<string, unknown>, rollouts: readonly Pick<Rollout, 'env'>[]): Suite {
  const rubric = config['rubric'] as { kind?: unknown } | undefined;
  for (const kind of [rubric?.kind, config['env'], rollouts[0]?.env]) if (typeof kind === 'string' && SUITES.has(kind)) return SUITES.get(kind)!;
  return SUITES.get(DEFAULT_SUITE)!;
}

/** A scripted agent of the suite (`baseline`, `oracle`, ...), or undefined when it has none of that name. */
export function suiteAgent(suite: Suite, spec: string, context: SuiteAgentContext = {}): Agent | undefined {
  const { name, arg } = parseAgentSpec(spec);
  return suite.agents.get(name)?.(arg, spec, context);
}

/** A scripted agent of the suite; InputError naming the suite's agents when it has none of that name. */
export function resolveScriptedAgent(suite: Suite, spec: string, context: SuiteAgentContext = {}): Agent {
  const agent = suiteAgent(suite, spec, context);
  if (!agent) throw new InputError(`unknown agent '${spec}' for env ${suite.kind}; its scripted agents: ${[...suite.agents.keys()].join(', ')}`);
  return agent;
}

/**
 * The agent of a spec for a run of the opened suite: one of the suite's scripted agents, else one of
 * `models` (the model agents: cli/agents.ts). Both get the context, with the opened suite's corpus.
 */
export async function resolveSuiteAgent(opened: OpenedSuite, spec: string, models: AgentTable, context: AgentFactoryContext & SuiteAgentContext = {}): Promise<Agent> {
  const withCorpus = { ...context, ...(opened.corpus ? { corpus: opened.corpus } : {}) };
  const scripted = suiteAgent(opened.suite, spec, withCorpus);
  if (scripted) return scripted;
  if (!models.has(parseAgentSpec(spec).name)) {
    throw new InputError(`unknown agent '${spec}' for env ${opened.suite.kind}; known: ${[...opened.suite.agents.keys(), ...models.keys()].join(', ')}`);
  }
  return resolveAgent(models, spec, withCorpus);
}
