import { loadSampler, type LocalSampler } from './index.js';
import { localRenderer } from '../../protocol/compact/local.js';
import { openingSearch, TokenAgent } from '../../agent/token-agent.js';
import { baselineAgent, registerAgent } from '../../suites/search/agents.js';
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

/**
 * A teacher that varies its search width: attempt j of a query is the baseline (search the query's
 * keywords, curate the top k, finish) with k = ks[j mod len]. Rejection sampling then keeps the shortest
 * attempt that was good enough, i.e. the narrowest search that found the evidence.
 */
export function baselineSweepAgent(ks: readonly number[], spec = `baseline-sweep:${ks.join(',')}`, openingK = 0): Agent {
  // With an opening search, the teacher's first turn is exactly that search (the student's is inserted).
  const agents = ks.map((k) => baselineAgent(k, spec, openingK ? { searchK: openingK } : { keywords: true }));
  return { spec, start: (ctx) => agents[ctx.sample % agents.length]!.start(ctx) };
}

registerAgent('baseline-sweep', (arg, spec, ctx) => {
  const ks = (arg ?? '1,2,3,5,8').split(',').map(Number);
  if (!ks.length || ks.some((k) => !Number.isInteger(k) || k < 1 || k > 50)) throw new InputError(`agent '${spec}': baseline-sweep:K1,K2,... needs whole numbers from 1 to 50`);
  return baselineSweepAgent(ks, spec, typeof ctx['openingSearch'] === 'number' ? ctx['openingSearch'] : 0);
});
