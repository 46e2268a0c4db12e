import { InputError } from '../errors.js';
import type { HarmonyRendererOptions } from './harmony/renderer.js';
import type { Renderer } from './types.js';

/**
 * Renderers by name. Modules load on first use: each brings a tokenizer that takes up to a second
 * to load, and most commands need none or one.
 */
export type RendererFactory = (options: RendererOptions) => Renderer | Promise<Renderer>;

export interface RendererOptions {
  /** Harmony system message settings (pin currentDate for reproducible prompts). */
  harmony?: Omit<HarmonyRendererOptions, 'tools'>;
}

const factories = new Map<string, RendererFactory>([
  ['harmony', async (o) => (await import('./harmony/renderer.js')).createHarmonyRenderer(o.harmony ?? {})],
  ['qwen3', async () => (await import('./qwen3/renderer.js')).createQwen3Renderer({ thinking: false })],
  ['qwen3-thinking', async () => (await import('./qwen3/renderer.js')).createQwen3Renderer({ thinking: true })],
  ['qwen3-tags', async () => (await import('./qwen3/tags-renderer.js')).createQwen3TagsRenderer({ thinking: false })],
]);

/** Adds a renderer (e.g. a local model's compact one); a name may be registered once. */
export function registerRenderer(name: string, factory: RendererFactory): void {
  if (factories.has(name)) throw new Error(`renderer ${JSON.stringify(name)} is already registered`);
  factories.set(name, factory);
}

export function rendererNames(): string[] {
  return [...factories.keys()];
}

/** The renderer called `name`; an unknown name is an InputError that lists the known ones. */
export async function getRenderer(name: string, options: RendererOptions = {}): Promise<Renderer> {
  const factory = factories.get(name);
  if (!factory) throw new InputError(`unknown renderer ${JSON.stringify(name)}: expected one of ${rendererNames().join(', ')}`);
  return factory(options);
}
