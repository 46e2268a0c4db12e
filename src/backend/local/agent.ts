import { loadSampler, type LocalSampler } from './index.js';
import { localRenderer } from '../../protocol/compact/local.js';
import { openingSearch, TokenAgent } from '../../agent/token-agent.js';
import { registerAgent } from '../../agent/registry.js';
import type { Agent } from '../../agent/types.js';
import type { Sampler } from '../types.js';
import type { BpeTokenizer } from '../../protocol/compact/bpe.js';
import { InputError } from '../../errors.js';


/** A token-level agent over a local sampler (the trainer's, or one loaded from a checkpoint). */
export function localAgent(spec: string, sampler: Sampler & { tokenizer: BpeTokenizer }, temperature = 1, seed?: number, openingK = 0): Agent {
  return new TokenAgent(spec, localRenderer(sampler.tokenizer), sampler, { temperature, ...(seed !== undefined ? { seed } : {}), ...(openingK ? { opening: openingSearch(openingK) } : {}) });
}

/** `local:PATH` (a *.sampler.ckpt or *.state.ckpt of the local model), sampled at temperature 1 unless the context says otherwise. */
registerAgent('local', (arg, spec, ctx) => {
  if (!arg) throw new InputError(`agent '${spec}': local:PATH needs a checkpoint path`);
  const sampler: LocalSampler = loadSampler(arg);
  const temperature = typeof ctx['temperature'] === 'number' ? ctx['temperature'] : 1;
  const seed = typeof ctx['seed'] === 'number' ? ctx['seed'] : undefined;
  const opening = typeof ctx['openingSearch'] === 'number' ? ctx['openingSearch'] : 0;
  return localAgent(spec, sampler, temperature, seed, opening);
});
