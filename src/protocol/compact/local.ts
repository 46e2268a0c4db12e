import type { ToolSpec } from '../../env/types.js';
import type { BpeTokenizer } from './bpe.js';
import { CompactRenderer, type CompactOptions } from './renderer.js';

/** Candidate spans shown per new hit (spans.ts): the names and numbers a follow-up can point at. */
export const LOCAL_SPANS = 3;

/**
 * How sleuth's small local model sees an episode: ids as per-episode numbers, titles, and short
 * snippets, so that a search with ten hits costs about 120 tokens and a whole episode fits the
 * model's context.
 */
export const LOCAL_RESULT_FORMAT: CompactOptions = { maxSnippet: 40, maxText: 240, maxString: 120, aliasIds: true, references: true, spans: LOCAL_SPANS };

/**
 * The compact format with the tool list cut to signatures (`- curate(ids)`) and the system prompt
 * to its first paragraph (the role): the descriptions and the instructions would be ~350 of every
 * episode's tokens, paid in every forward pass, and a model trained on the tools' use does not
 * read them.
 */
export class LocalRenderer extends CompactRenderer {
  override prompt(input: { system: string; user: string; tools: ToolSpec[] }): number[] {
    const role = input.system.split(/\n\s*\n/u)[0]!.trim();
    return super.prompt({ ...input, system: role, tools: input.tools.map((t) => ({ ...t, description: '' })) });
  }
}

/** The local model's renderer (fork it per episode with forEpisode(): it keeps id aliases). */
export function localRenderer(tokenizer: BpeTokenizer): LocalRenderer {
  return new LocalRenderer(tokenizer, LOCAL_RESULT_FORMAT);
}
