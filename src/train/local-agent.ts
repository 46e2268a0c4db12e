import { loadSampler, type LocalSampler } from '../backend/local/index.js';
import { CompactRenderer, type CompactOptions } from '../protocol/compact/renderer.js';
import { TokenAgent } from '../agent/token-agent.js';
import { registerAgent } from '../agent/scripted.js';
import type { Agent } from '../agent/types.js';
import type { Sampler } from '../backend/types.js';
import type { BpeTokenizer } from '../protocol/compact/bpe.js';
import { InputError } from '../errors.js';

/**
 * How the local model sees tool results: ids and titles with short snippets, so that a search with
 * ten hits costs about 150 tokens and a whole episode fits the small model's context.
 */
export const LOCAL_RESULT_FORMAT: CompactOptions = { maxSnippet: 40, maxText: 240, maxString: 120 };

export function localRenderer(tokenizer: BpeTokenizer): CompactRenderer {
  return new CompactRenderer(tokenizer, LOCAL_RESULT_FORMAT);
}

/** A token-level agent over a local sampler (the trainer's, or one loaded from a checkpoint). */
export function localAgent(spec: string, sampler: Sampler & { tokenizer: BpeTokenizer }, temperature = 1, seed?: number): Agent {
  return new TokenAgent(spec, localRenderer(sampler.tokenizer), sampler, { temperature, ...(seed !== undefined ? { seed } : {}) });
}

/** `local:PATH` (a *.sampler.ckpt or *.state.ckpt of the local model), sampled at temperature 1 unless the context says otherwise. */
registerAgent('local', (arg, spec, ctx) => {
  if (!arg) throw new InputError(`agent '${spec}': local:PATH needs a checkpoint path`);
  const sampler: LocalSampler = loadSampler(arg);
  const temperature = typeof ctx['temperature'] === 'number' ? ctx['temperature'] : 1;
  const seed = typeof ctx['seed'] === 'number' ? ctx['seed'] : undefined;
  return localAgent(spec, sampler, temperature, seed);
});
