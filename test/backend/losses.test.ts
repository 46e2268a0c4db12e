import { describe, expect, it } from 'vitest';
import { clipRange, LOSS_NAMES, LOSSES, RL_LOSS_NAMES } from '../../src/backend/losses.js';
import type { Datum } from '../../src/backend/types.js';
import { validateDatums } from '../../src/backend/validate.js';
import { InputError } from '../../src/errors.js';
import { TrainConfigSchema } from '../../src/train/config.js';
import { datumFor, tinyBackend, tinyTokenizer } from './helpers.js';

/** The loss table is the one list of losses: what the backends accept and report, and what a config may name. */
describe('the loss table', () => {
  const tok = tinyTokenizer();
  const ids = tok.encode('The quick brown fox jumps over the lazy dog.');
  const rl = (d: Datum): Datum => ({ ...d, logprobs: d.weights.map(() => -1), advantages: d.weights.map((_, t) => (t % 2 ? 1 : -0.5)) });

  it('each loss reports loss:sum, tokens:sum, the learner entropy and exactly the metrics its entry lists', () => {
    const b = tinyBackend(tok, { context: 64, dModel: 8, nLayers: 1, nHeads: 2 });
    for (const name of LOSS_NAMES) {
      const r = b.forwardSync([rl(datumFor(ids))], name);
      expect(Object.keys(r.metrics)).toEqual(['loss:sum', 'tokens:sum', 'entropy:mean', ...LOSSES[name].metrics]);
      expect(r.metrics['loss:sum']).toBe(r.loss);
      expect(r.metrics['tokens:sum']).toBe(ids.length - 1);
    }
  });

  it('an RL loss needs logprobs and advantages; the datum and the field are named', () => {
    for (const name of LOSS_NAMES) {
      const plain = [datumFor(ids)];
      if (LOSSES[name].rl) expect(() => validateDatums(plain, name)).toThrow(new InputError(`forwardBackward: datum 0: ${name} needs logprobs and advantages`));
      else expect(() => validateDatums(plain, name)).not.toThrow();
    }
    expect(() => validateDatums([datumFor(ids)], 'dpo')).toThrow(/loss function 'dpo' is not one of cross_entropy, importance_sampling, ppo, cispo/);
    expect(() => validateDatums([datumFor([1, 2, 3])], 'cross_entropy', { vocabSize: 3 })).toThrow(/datum 0: targetTokens\[1\] = 3 is not a token id \(vocabulary 3\)/);
    expect(() => validateDatums([datumFor([1, 2, 3])], 'cross_entropy', { context: 1 })).toThrow(/datum 0: 2 tokens exceed the model context of 1/);
  });

  it('clip thresholds default from the entry and are overridden by the config', () => {
    expect(clipRange('ppo')).toEqual([0.8, 1.2]);
    expect(clipRange('cispo')).toEqual([0, 4]);
    expect(clipRange('cispo', { clipHighThreshold: 2 })).toEqual([0, 2]);
  });

  it('a GRPO config may name the RL losses of the table and no other', () => {
    expect(RL_LOSS_NAMES).toEqual(['importance_sampling', 'ppo', 'cispo']);
    for (const loss of RL_LOSS_NAMES) expect(TrainConfigSchema.parse({ loss }).loss).toBe(loss);
    expect(TrainConfigSchema.safeParse({ loss: 'cross_entropy' }).success).toBe(false);
  });
});
