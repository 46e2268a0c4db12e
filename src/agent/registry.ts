import type { CorpusReader } from '../corpus/chunk.js';
import { InputError } from '../errors.js';
import type { Agent } from './types.js';

/**
 * Agent specs and tables of agent factories. A spec is `NAME` or `NAME:ARG`. Scripted agents are
 * their suite's table (Suite.agents); model agents (`openai:`, `local:`, `tinker:`) are the CLI's
 * table (cli/agents.ts), which exists because `local:` and `tinker:` live in backend/, below the
 * suites. suites/registry.ts's resolveSuiteAgent asks the suite's table first, then the models'.
 */

/** What factories may need; each takes what it uses and names what is missing. */
export interface AgentFactoryContext {
  /** The corpus the tasks refer to (the oracle reads gold chunks from it). */
  corpus?: CorpusReader;
  [key: string]: unknown;
}

/** Makes an agent from the part of the spec after `NAME:` (undefined when there is none). */
export type AgentFactory = (arg: string | undefined, spec: string, ctx: AgentFactoryContext) => Agent | Promise<Agent>;

/** Agent factories by spec name. */
export type AgentTable = ReadonlyMap<string, AgentFactory>;

/** A factory for an agent whose spec takes no argument (`NAME`, never `NAME:ARG`): `make` gets the spec and the context. */
export function noArgument<C>(make: (spec: string, ctx: C) => Agent): (arg: string | undefined, spec: string, ctx: C) => Agent {
  return (arg, spec, ctx) => {
    if (arg !== undefined) throw new InputError(`agent '${spec}': ${parseAgentSpec(spec).name} takes no argument`);
    return make(spec, ctx);
  };
}

/** A spec's name and its argument (the part after the first colon; undefined when there is none). */
export function parseAgentSpec(spec: string): { name: string; arg: string | undefined } {
  const colon = spec.indexOf(':');
  return colon < 0 ? { name: spec, arg: undefined } : { name: spec.slice(0, colon), arg: spec.slice(colon + 1) };
}

/** Resolve a spec (`openai:MODEL@URL`, `local:shipped`, ...) from a table; InputError naming the table's agents when it has none of that name. */
export async function resolveAgent(table: AgentTable, spec: string, ctx: AgentFactoryContext = {}): Promise<Agent> {
  const { name, arg } = parseAgentSpec(spec);
  const factory = table.get(name);
  if (!factory) throw new InputError(`unknown agent '${spec}'; known: ${[...table.keys()].join(', ')}`);
  return factory(arg, spec, ctx);
}
