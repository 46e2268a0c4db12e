import { InputError } from '../errors.js';
import { LOSS_NAMES, LOSSES, isLossFn, type LossFn } from './losses.js';
import type { Datum } from './types.js';

/** What a backend knows of its model: datums are checked against it where it is given. */
export interface DatumLimits {
  /** Longest inputTokens the model takes. */
  context?: number;
  /** Token ids must be below this. */
  vocabSize?: number;
}

/**
 * Check a forwardBackward call before anything is sent or computed: a known loss, and datums whose
 * per-token arrays match inputTokens, whose RL fields are there for an RL loss, whose token ids are
 * in the vocabulary and whose numbers are finite. Throws InputError naming the datum and the field.
 */
export function validateDatums(datums: readonly Datum[], lossFn: string, limits: DatumLimits = {}): asserts lossFn is LossFn {
  if (!isLossFn(lossFn)) throw new InputError(`loss function '${lossFn}' is not one of ${LOSS_NAMES.join(', ')}`);
  datums.forEach((d, i) => checkDatum(d, i, lossFn, limits));
}

function checkDatum(d: Datum, i: number, lossFn: LossFn, limits: DatumLimits): void {
  const n = d.inputTokens.length;
  const bad = (msg: string) => new InputError(`forwardBackward: datum ${i}: ${msg}`);
  if (n === 0) throw bad('inputTokens is empty');
  if (limits.context !== undefined && n > limits.context) throw bad(`${n} tokens exceed the model context of ${limits.context}`);
  for (const [key, arr] of [['targetTokens', d.targetTokens], ['weights', d.weights], ['logprobs', d.logprobs], ['advantages', d.advantages]] as const) {
    if (arr !== undefined && arr.length !== n) throw bad(`${key} has ${arr.length} entries, inputTokens ${n}`);
  }
  if (LOSSES[lossFn].rl && (!d.logprobs || !d.advantages)) throw bad(`${lossFn} needs logprobs and advantages`);
  const V = limits.vocabSize;
  if (V !== undefined) {
    for (const [key, arr] of [['inputTokens', d.inputTokens], ['targetTokens', d.targetTokens]] as const) {
      for (let t = 0; t < n; t++) if (!Number.isInteger(arr[t]) || arr[t]! < 0 || arr[t]! >= V) throw bad(`${key}[${t}] = ${arr[t]} is not a token id (vocabulary ${V})`);
    }
  }
  for (const [key, arr] of [['weights', d.weights], ['logprobs', d.logprobs], ['advantages', d.advantages]] as const) {
    if (arr) for (let t = 0; t < n; t++) if (!Number.isFinite(arr[t])) throw bad(`${key}[${t}] is not a finite number`);
  }
}
