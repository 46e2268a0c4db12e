import { createLocalBackend, loadSampler, type LocalBackend } from '../backend/local/index.js';
import type { Sampler, TrainingBackend } from '../backend/types.js';
import type { Agent } from '../agent/types.js';
import { TokenAgent, type TokenSampling } from '../agent/token-agent.js';
import { openingSearch } from '../suites/search/opening.js';
import { InputError } from '../errors.js';
import { getRenderer } from '../protocol/registry.js';
import type { Renderer } from '../protocol/types.js';
import { modelSize, type TrainConfig } from './config.js';
import { baseSpecOf, ensureBaseModel, isShippedName, shippedBasePath, SHIPPED_MODELS } from '../backend/local/base-model.js';
import { localRenderer } from '../protocol/compact/local.js';
import { verifyRecordedCheckpoint } from '../runs/checkpoints.js';
import type { BpeTokenizer } from '../protocol/compact/bpe.js';

/**
 * The seam between the trainer and the backends: the trainer asks for a backend, a renderer for its
 * model, and a way to turn a sampler into an agent; it never learns which backend it drives.
 * The Tinker client is imported only when asked for, so a build without it still trains locally.
 */
export interface TrainingSetup {
  backend: TrainingBackend;
  renderer: Renderer;
  /** A token-level agent over a sampler of this backend. */
  agent(sampler: Sampler, spec: string, temperature: number, seed?: number): Agent;
  /** A sampler this backend saved, loaded back from its file (the KL reference on resume); absent when the backend cannot. */
  samplerFromFile?(path: string): Sampler;
}

export interface BackendFactoryOptions {
  /** Where checkpoints go (the run directory's checkpoints/). */
  checkpointDir: string;
  /** Resume from this saved state (a path or tinker:// URI from checkpoints.jsonl). */
  resumeFrom?: string;
  log?: (line: string) => void;
}

/** How the trainer's agents sample: temperature, seed, and the config's opening search. */
export function samplingOf(config: Pick<TrainConfig, 'openingSearch'>, temperature: number, seed?: number): TokenSampling {
  return { temperature, ...(seed !== undefined ? { seed } : {}), ...(config.openingSearch ? { opening: openingSearch(config.openingSearch) } : {}) };
}

/** A variable, so the build does not require the module to exist. */
const TINKER_MODULE = '../backend/tinker/index.js';

/** The shape src/backend/tinker/index.ts exports. */
interface TinkerModule {
  createTinkerBackend(options: { baseUrl?: string; baseModel: string; loraRank: number; apiKeyEnv?: string }): Promise<TrainingBackend>;
}

export async function createBackend(config: TrainConfig, opts: BackendFactoryOptions): Promise<TrainingSetup> {
  if (config.backend === 'local') {
    let backend: LocalBackend;
    if (opts.resumeFrom) backend = createLocalBackend({ checkpoint: opts.resumeFrom, dir: opts.checkpointDir });
    else {
      let path = config.model;
      if (config.model === 'base') path = await ensureBaseModel(baseSpecOf({ ...modelSize(config.localModel), seed: config.seed }), { ...(opts.log ? { log: opts.log } : {}) });
      else if (isShippedName(config.model)) {
        const size = SHIPPED_MODELS[config.model];
        const shipped = shippedBasePath(size);
        if (!shipped) throw new InputError(`model ${config.model}: src/backend/local/assets/local-${size}.sampler.ckpt is missing (build it with sleuth demo --build-base${size === 'long' ? ' --size long' : ''})`);
        path = shipped;
      }
      // --model naming another run's checkpoint: checked against the checksum that run recorded.
      verifyRecordedCheckpoint(path);
      backend = createLocalBackend({ checkpoint: path, dir: opts.checkpointDir });
      // A run starts with a fresh optimiser (moments and step) even from a 'state' checkpoint of another run.
      backend.resetOptimizer();
    }
    if (config.localModel.threads !== undefined) backend.threads = config.localModel.threads;
    if (config.budgets.contextTokens > backend.config.context) {
      throw new InputError(`budgets.contextTokens ${config.budgets.contextTokens} exceeds the local model's context of ${backend.config.context} tokens`);
    }
    const renderer = localRenderer(backend.tokenizer);
    return {
      backend,
      renderer,
      agent: (sampler, spec, temperature, seed) => new TokenAgent(spec, renderer, sampler, samplingOf(config, temperature, seed)),
      samplerFromFile: loadSampler,
    };
  }
  let mod: TinkerModule;
  try {
    mod = (await import(TINKER_MODULE)) as TinkerModule;
  } catch (err) {
    throw new InputError(`backend tinker: the Tinker client (src/backend/tinker/) is not available in this build (${(err as Error).message})`);
  }
  if (typeof mod.createTinkerBackend !== 'function') throw new InputError('backend tinker: src/backend/tinker/index.js does not export createTinkerBackend');
  const backend = await mod.createTinkerBackend({
    baseModel: config.model,
    loraRank: config.loraRank,
    ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
    ...(config.apiKeyEnv ? { apiKeyEnv: config.apiKeyEnv } : {}),
  });
  if (opts.resumeFrom) await backend.loadState(opts.resumeFrom);
  // `sleuth serve-tinker` serves the local model and hands out its tokenizer: the compact renderer needs it.
  const served = (backend as { tokenizer?: BpeTokenizer }).tokenizer;
  const renderer = config.renderer === 'compact' && served ? localRenderer(served) : await getRenderer(config.renderer);
  return {
    backend,
    renderer,
    agent: (sampler, spec, temperature, seed) => new TokenAgent(spec, renderer, sampler, samplingOf(config, temperature, seed)),
  };
}
