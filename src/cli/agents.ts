import { openAIAgentFactory } from '../agent/openai.js';
import { resolveAgent, type AgentFactory, type AgentFactoryContext, type AgentTable } from '../agent/registry.js';
import type { Agent } from '../agent/types.js';
import { localAgentFactory } from '../backend/local/agent.js';
import { verifyRecordedCheckpoint } from '../runs/checkpoints.js';
import { tinkerAgentFactory } from '../backend/tinker/agent.js';
import { resolveSuiteAgent } from '../suites/registry.js';
import type { OpenedSuite, SuiteAgentContext } from '../suites/types.js';

/** `local:PATH`, a run's checkpoint checked against the checksum its run recorded before it is loaded. */
const checkedLocalAgent: AgentFactory = (arg, spec, ctx) => {
  if (arg) verifyRecordedCheckpoint(arg);
  return localAgentFactory(arg, spec, ctx);
};

/**
 * The model agents, by spec name: a chat API (`openai:`), the local model (`local:`), a Tinker
 * sampler (`tinker:`). They are listed here, at the top, because `local:` and `tinker:` live in
 * backend/; scripted agents are their suite's (Suite.agents).
 */
export const MODEL_AGENTS: AgentTable = new Map([
  ['openai', openAIAgentFactory],
  ['local', checkedLocalAgent],
  ['tinker', tinkerAgentFactory],
]);

/** A model agent of a spec (`local:shipped`, `openai:MODEL@URL`, ...). */
export function resolveModelAgent(spec: string, ctx: AgentFactoryContext = {}): Promise<Agent> {
  return resolveAgent(MODEL_AGENTS, spec, ctx);
}

/** The agent of a spec for a run of the opened suite: the suite's scripted agents first, then the model agents. */
export function resolveRunAgent(opened: OpenedSuite, spec: string, ctx: AgentFactoryContext & SuiteAgentContext = {}): Promise<Agent> {
  return resolveSuiteAgent(opened, spec, MODEL_AGENTS, ctx);
}
