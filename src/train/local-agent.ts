import { loadSampler, type LocalSampler } from '../backend/local/index.js';
import { CompactRenderer, type CompactOptions } from '../protocol/compact/renderer.js';
import { TokenAgent } from '../agent/token-agent.js';
import { baselineAgent, registerAgent } from '../agent/scripted.js';
import type { Agent } from '../agent/types.js';
import type { Sampler } from '../backend/types.js';
import type { BpeTokenizer } from '../protocol/compact/bpe.js';
import type { ToolSpec } from '../env/types.js';
import { InputError } from '../errors.js';

/**
 * How the local model sees tool results: ids and titles with short snippets, so that a search with
 * ten hits costs about 150 tokens and a whole episode fits the small model's context.
 */
export const LOCAL_RESULT_FORMAT: CompactOptions = { maxSnippet: 40, maxText: 240, maxString: 120 };

/**
 * The compact format with the tool list cut to signatures (`- curate(ids)`): the descriptions
 * would be ~150 of every episode's tokens, paid in every forward pass, and a model trained on the
 * tools' use does not read them. The environment's system prompt is kept whole.
 */
export class LocalRenderer extends CompactRenderer {
  override prompt(input: { system: string; user: string; tools: ToolSpec[] }): number[] {
    return super.prompt({ ...input, tools: input.tools.map((t) => ({ ...t, description: '' })) });
  }
}

export function localRenderer(tokenizer: BpeTokenizer): LocalRenderer {
  return new LocalRenderer(tokenizer, LOCAL_RESULT_FORMAT);
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

/**
 * A teacher that varies its search width: attempt j of a query is the baseline (search the query,
 * curate the top k, finish) with k = ks[j mod len]. Rejection sampling then keeps the shortest
 * attempt that was good enough, i.e. the narrowest search that found the evidence.
 */
export function baselineSweepAgent(ks: readonly number[], spec = `baseline-sweep:${ks.join(',')}`): Agent {
  const agents = ks.map((k) => baselineAgent(k, spec));
  return { spec, start: (ctx) => agents[ctx.sample % agents.length]!.start(ctx) };
}

registerAgent('baseline-sweep', (arg, spec) => {
  const ks = (arg ?? '1,2,3,5,8').split(',').map(Number);
  if (!ks.length || ks.some((k) => !Number.isInteger(k) || k < 1 || k > 50)) throw new InputError(`agent '${spec}': baseline-sweep:K1,K2,... needs whole numbers from 1 to 50`);
  return baselineSweepAgent(ks, spec);
});
