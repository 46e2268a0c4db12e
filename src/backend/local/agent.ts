import { loadSampler, type LocalSampler } from './index.js';
import { localRenderer } from '../../protocol/compact/local.js';
import { TokenAgent } from '../../agent/token-agent.js';
import { openingSearch } from '../../suites/search/opening.js';
import type { AgentFactory } from '../../agent/registry.js';
import type { Sampler } from '../types.js';
import type { BpeTokenizer } from '../../protocol/compact/bpe.js';
import { InputError } from '../../errors.js';
import { isShippedName, shippedBasePath, SHIPPED_BUDGETS, SHIPPED_MODELS } from './base-model.js';


/** A token-level agent over a local sampler (the trainer's, or one loaded from a checkpoint). */
export function localAgent(spec: string, sampler: Sampler & { tokenizer: BpeTokenizer }, temperature = 1, seed?: number, openingK = 0): TokenAgent {
  return new TokenAgent(spec, localRenderer(sampler.tokenizer), sampler, { temperature, ...(seed !== undefined ? { seed } : {}), ...(openingK ? { opening: openingSearch(openingK) } : {}) });
}

/** Where `local:ARG` loads from: a shipped model's name (`shipped`, `shipped-long`) or a checkpoint path. */
function checkpointOf(arg: string, spec: string): string {
  if (!isShippedName(arg)) return arg;
  const size = SHIPPED_MODELS[arg];
  const path = shippedBasePath(size);
  if (!path) throw new InputError(`agent '${spec}': src/backend/local/assets/local-${size}.sampler.ckpt is missing (build it with sleuth demo --build-base${size === 'long' ? ' --size long' : ''})`);
  return path;
}

/**
 * `local:PATH` (a *.sampler.ckpt or *.state.ckpt of the local model) or `local:shipped` /
 * `local:shipped-long`, sampled at temperature 1 unless the context says otherwise. The agent
 * carries its model's budgets: the checkpoint's context, and a shipped model's training budgets.
 */
export const localAgentFactory: AgentFactory = (arg, spec, ctx) => {
  if (!arg) throw new InputError(`agent '${spec}': local:PATH needs a checkpoint path, or shipped / shipped-long`);
  const sampler: LocalSampler = loadSampler(checkpointOf(arg, spec));
  const temperature = typeof ctx['temperature'] === 'number' ? ctx['temperature'] : 1;
  const seed = typeof ctx['seed'] === 'number' ? ctx['seed'] : undefined;
  const opening = typeof ctx['openingSearch'] === 'number' ? ctx['openingSearch'] : 0;
  const agent = localAgent(spec, sampler, temperature, seed, opening);
  const context = sampler.config.context;
  agent.contextLimit = context;
  agent.budgets = { contextTokens: context, ...(isShippedName(arg) ? SHIPPED_BUDGETS[SHIPPED_MODELS[arg]] : {}) };
  return agent;
};
