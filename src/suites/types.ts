import type { Agent } from '../agent/types.js';
import type { Rollout } from '../agent/rollout.js';
import type { CorpusReader } from '../corpus/chunk.js';
import type { Budgets, Environment, ToolSpec } from '../env/types.js';
import type { Rubric } from '../reward/rubric.js';
import type { TaskSet } from '../tasks/registry.js';
import type { Task } from '../tasks/task.js';

/**
 * A suite is one kind of environment as a package (docs/ARCHITECTURE.md, "The suite contract"):
 * how its environment is built and its tasks loaded, its tools, its reward parts and rubrics, its
 * failure buckets and success test, its scripted agents, and which of its tools are lookups.
 * Everything above the suites (eval, train, explorer, cli) asks the registry (registry.ts) for the
 * suite of a run and never names a kind; adding an environment is a folder here and one line there.
 */
export interface Suite {
  /** The name runs record (`env` in configs, Rubric.kind, Rollout.env). */
  readonly kind: string;
  /** One line for usage text. */
  readonly summary: string;
  /** Named rubrics of this suite; `defaultRubric` names the one used when none is asked for. */
  readonly rubrics: readonly Rubric[];
  readonly defaultRubric: string;
  /**
   * Every reward part of a rollout, whatever its weight (a run can be re-read under another rubric).
   * `beta` is the rubric's F-beta at this step (suites that take no beta ignore it). Throws
   * InputError when the task cannot be scored here.
   */
  rewardParts(task: Task, rollout: Rollout, beta: number): Record<string, number>;
  /** Rubric settings that change parts other than through weights: beta. */
  readonly usesBeta: boolean;
  /** Stored parts recomputed for another beta, without the task (the explorer's lab). */
  partsAtBeta?(parts: Record<string, number>, beta: number): Record<string, number>;
  /** What an episode returns: a curated set of chunks, or an answer. */
  readonly result: 'curated set' | 'answer';
  /** Failure buckets, in the order they are checked; every rollout lands in exactly one. */
  readonly buckets: readonly string[];
  bucket(parts: Record<string, number>, curatedSize: number): string;
  /** A rollout that solved its task (pass@k counts these). */
  success(parts: Record<string, number>): boolean;
  /** The metrics `sleuth headroom` reports, best first. */
  readonly headline: readonly string[];
  /** Its tools as models are shown them, at the environment's default settings (its tool table: `sleuth play`'s help reads it). */
  readonly tools: readonly ToolSpec[];
  /** Tools that look something up (SFT keeps only attempts that used one successfully). */
  readonly lookupTools: ReadonlySet<string>;
  /**
   * Scripted agents by spec name (`baseline`, `oracle`, ...): the one place a suite's agents are
   * registered. A spec no suite agent takes goes to the model agents (`openai:`, `local:`, `tinker:`).
   */
  readonly agents: ReadonlyMap<string, SuiteAgentFactory>;
  /** Its tasks come from a task set (`--tasks`); false for a suite that brings its own. */
  readonly taskSets: boolean;
  /** The environment options beyond budgets and search workers that its environment takes (the CLI refuses the others' flags). */
  readonly environmentOptions?: ReadonlySet<EnvironmentOption>;
  /** Load the suite's tasks and corpus (no threads are started: see OpenedSuite.environment). */
  open(options?: SuiteOpenOptions): Promise<OpenedSuite>;
}

/** What a scripted agent may need from the run; each factory takes what it uses and names what is missing. */
export interface SuiteAgentContext {
  /** The corpus the tasks refer to (an oracle reads gold chunks from it). */
  corpus?: CorpusReader;
  /** k of the student's opening search (a teacher whose first turn must be that search). */
  openingSearch?: number;
}

/** Makes a scripted agent from the part of the spec after `NAME:` (undefined when there is none). */
export type SuiteAgentFactory = (arg: string | undefined, spec: string, context: SuiteAgentContext) => Agent;

export interface SuiteOpenOptions {
  /** A task set name or path, for suites over a corpus; a suite with its own tasks refuses one. */
  tasks?: string;
  /**
   * A task set already loaded (the QA benchmarks' questions over their corpus's index), used in
   * place of `tasks`: its tasks are taken as they are, unchecked against the index.
   */
  taskSet?: TaskSet;
}

/** EnvironmentOptions a suite may or may not take (Suite.environmentOptions). */
export type EnvironmentOption = 'defaultK' | 'searchBudget' | 'closedBook';

export interface EnvironmentOptions {
  /** Budgets the environment suggests (default: the suite's own). */
  budgets?: Budgets;
  /** Worker threads answering searches and greps (suites over a search index; 0 = this thread). */
  searchWorkers?: number;
  /** Hits per search when the model does not say (suites with a search tool; the QA suite's fixed top-k). */
  defaultK?: number;
  /** Searches an episode may make (suites with a search budget: qa). */
  searchBudget?: number;
  /** No search tool: the model answers from what it knows (suites whose episodes end in an answer: qa). */
  closedBook?: boolean;
}

export interface OpenedSuite {
  readonly suite: Suite;
  /** The task set's name, as run configs record it. */
  readonly tasksName: string;
  /** The corpus's index directory; null for a suite with no search index. */
  readonly indexDir: string | null;
  /** The corpus the tasks refer to, when there is one (the search oracle reads gold chunks from it). */
  readonly corpus?: CorpusReader;
  /** Tasks of a split (all of them without one); InputError for an unknown split or a task this suite cannot score. */
  tasks(split?: string): Task[];
  /**
   * The environment, and close() to stop what it runs on (search workers). Call it last, after
   * every check of the input: workers keep the process alive until closed.
   */
  environment(options?: EnvironmentOptions): Promise<{ env: Environment; close(): Promise<void> }>;
}
