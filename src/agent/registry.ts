import type { CorpusReader } from '../corpus/chunk.js';
import { InputError } from '../errors.js';
import type { Agent } from './types.js';

/**
 * The agent registry: a spec is `NAME` or `NAME:ARG`. Each kind of agent registers its factory
 * from its own module (the search suite's scripted agents, `openai:`, `local:`, `tinker:`); the
 * CLI imports those modules (cli/agents.ts) before resolving. A suite's own scripted agents are
 * asked first (suites/registry.ts, suiteAgent).
 */

/** What factories may need; each takes what it uses and names what is missing. */
export interface AgentFactoryContext {
  /** The corpus the tasks refer to (the oracle reads gold chunks from it). */
  corpus?: CorpusReader;
  [key: string]: unknown;
}

/** Makes an agent from the part of the spec after `NAME:` (undefined when there is none). */
export type AgentFactory = (arg: string | undefined, spec: string, ctx: AgentFactoryContext) => Agent | Promise<Agent>;

const FACTORIES = new Map<string, AgentFactory>();

export function registerAgent(name: string, factory: AgentFactory): void {
  FACTORIES.set(name, factory);
}

export function registerAgents(factories: readonly (readonly [string, AgentFactory])[]): void {
  for (const [name, factory] of factories) registerAgent(name, factory);
}

/** Resolve an agent spec (`baseline`, `baseline:5`, `oracle`, `openai:MODEL@URL`, ...). */
export async function resolveAgent(spec: string, ctx: AgentFactoryContext = {}): Promise<Agent> {
  const colon = spec.indexOf(':');
  const name = colon < 0 ? spec : spec.slice(0, colon);
  const arg = colon < 0 ? undefined : spec.slice(colon + 1);
  const factory = FACTORIES.get(name);
  if (!factory) throw new InputError(`unknown agent '${spec}'; known: ${[...FACTORIES.keys()].join(', ')}`);
  return factory(arg, spec, ctx);
}
