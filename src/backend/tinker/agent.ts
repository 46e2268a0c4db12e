import type { AgentFactory } from '../../agent/registry.js';
import { TokenAgent } from '../../agent/token-agent.js';
import { InputError } from '../../errors.js';
import { getRenderer } from '../../protocol/registry.js';
import { createTinkerSampler } from './backend.js';

/**
 * The agent spec `tinker:MODEL_OR_PATH[@BASE_URL]`: a token-level agent sampling from a Tinker
 * base model (e.g. `tinker:openai/gpt-oss-20b`) or saved sampler weights (`tinker:tinker://…`).
 * The renderer is the context's `renderer`, else chosen by the model name: Harmony for gpt-oss,
 * Qwen3 for Qwen3 models. The base URL is the spec's `@URL`, else the context's `baseUrl`, else
 * $TINKER_BASE_URL, else hosted Tinker; the key comes from TINKER_API_KEY (or ctx.apiKeyEnv).
 */
export function rendererForModel(model: string): string | undefined {
  if (/gpt-oss/i.test(model)) return 'harmony';
  if (/qwen3/i.test(model)) return 'qwen3';
  return undefined;
}

/** The `tinker:` spec's factory: the spec, renderer and base URL as said above. */
export const tinkerAgentFactory: AgentFactory = async (arg, spec, ctx) => {
  if (!arg) throw new InputError(`agent '${spec}': tinker:MODEL_OR_PATH needs a base model name or a tinker:// sampler path`);
  const at = arg.lastIndexOf('@');
  const target = at < 0 ? arg : arg.slice(0, at);
  const baseUrl = at < 0 ? (typeof ctx['baseUrl'] === 'string' ? ctx['baseUrl'] : undefined) : arg.slice(at + 1);
  const rendererName = typeof ctx['renderer'] === 'string' ? ctx['renderer'] : rendererForModel(target);
  if (!rendererName) throw new InputError(`agent '${spec}': cannot tell the renderer from '${target}'; give one (harmony for gpt-oss, qwen3 for Qwen3)`);
  const renderer = await getRenderer(rendererName);
  const sampler = await createTinkerSampler(target, {
    ...(baseUrl ? { baseUrl } : {}),
    ...(typeof ctx['apiKeyEnv'] === 'string' ? { apiKeyEnv: ctx['apiKeyEnv'] } : {}),
    ...(typeof ctx['log'] === 'function' ? { log: ctx['log'] as (line: string) => void } : {}),
  });
  const temperature = typeof ctx['temperature'] === 'number' ? ctx['temperature'] : 1;
  const seed = typeof ctx['seed'] === 'number' ? ctx['seed'] : undefined;
  return new TokenAgent(spec, renderer, sampler, { temperature, ...(seed !== undefined ? { seed } : {}) });
};
