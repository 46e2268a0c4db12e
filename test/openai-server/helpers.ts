import type { ToolSpec } from '../../src/env/types.js';
import { trainBpe } from '../../src/protocol/compact/bpe.js';
import { localRenderer } from '../../src/protocol/compact/local.js';
import { SPECIALS } from '../../src/protocol/compact/renderer.js';
import { ADAM, ensureWasm, TEXTS, tinyBackend } from '../backend/helpers.js';

export { TEXTS };

export const SEARCH_TOOL = { type: 'function' as const, function: { name: 'bm25_search', description: 'Keyword search over the corpus.', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } } };
export const SYSTEM = 'Find the evidence.';
export const USER = 'capital of France';
/**
 * The query a client sees when the model searches USER: the local format has the model write its
 * search as references to the question's numbered words, expanded into the words BM25 keeps.
 */
export const SEARCHED = 'capital France';

/** A question and the assistant turn a model is trained to answer it with, as the model writes it (compact format). */
export interface TrainedReply {
  user: string;
  reply: string;
}

/**
 * A tiny model trained (cross-entropy on its own turn only) to answer SYSTEM + USER with a
 * bm25_search call, and each of `more` with its reply, with `tools` declared (the tools a request
 * to it should declare); its checkpoint path.
 */
export async function toolCallingCheckpoint(more: readonly TrainedReply[] = [], tools: readonly ToolSpec[] = [{ name: 'bm25_search', description: SEARCH_TOOL.function.description, parameters: SEARCH_TOOL.function.parameters }]): Promise<string> {
  ensureWasm();
  const call = { name: 'bm25_search', arguments: { query: USER } };
  const tok = trainBpe([...TEXTS, `${SYSTEM} ${USER} ${JSON.stringify(call)} ${SEARCH_TOOL.function.description}`, ...more.map((m) => `${m.user} ${m.reply}`)], 400, [...SPECIALS]);
  // The server renders as the trainer does (the local model's format).
  const datumOf = (user: string, reply: (r: ReturnType<typeof localRenderer>) => string) => {
    const r = localRenderer(tok).forEpisode();
    const prompt = r.prompt({ system: SYSTEM, user, tools: [...tools] });
    const seq = [...prompt, ...r.encode(reply(r))];
    return { inputTokens: seq.slice(0, -1), targetTokens: seq.slice(1), weights: seq.slice(1).map((_, t) => (t + 1 >= prompt.length ? 1 : 0)) };
  };
  const data = [datumOf(USER, (r) => r.renderAssistant('', [call])), ...more.map((m) => datumOf(m.user, () => m.reply))];
  const b = tinyBackend(tok, { context: 128, dModel: 32, nLayers: 2, nHeads: 2 });
  for (let i = 0; i < 120; i++) {
    b.forwardBackwardSync(data, 'cross_entropy');
    b.optimStepSync({ ...ADAM, learningRate: 1e-2 });
  }
  return (await b.saveWeightsForSampler('served')).modelPath;
}
