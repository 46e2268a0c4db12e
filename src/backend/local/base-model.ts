import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createLocalBackend, DEFAULT_MODEL, embeddedTokenizerTexts, pretrain, trainLocalTokenizer } from './index.js';
import { suiteTranscripts } from './suite-transcripts.js';
import { sleuthHome } from '../../tasks/store.js';
import { writeFileAtomic } from '../../files/atomic.js';
import type { Budgets } from '../../env/types.js';

/**
 * The local base model: a BPE tokenizer trained on the embedded corpus, synthetic search transcripts
 * and `suiteTranscripts` episodes of every registered suite's oracle (suite-transcripts.ts), a freshly initialised transformer of the given size, and optionally some next-token steps on the
 * same texts. Everything is seeded, so the same spec rebuilds the same file; it is cached under
 * $SLEUTH_HOME/models/ by the hash of its spec.
 */
export interface BaseModelSpec {
  vocab: number;
  dModel: number;
  nLayers: number;
  nHeads: number;
  context: number;
  pretrainSteps: number;
  /** Oracle episodes of each registered suite in the tokenizer's (and pretraining's) text. */
  suiteTranscripts: number;
  seed: number;
}

export const DEFAULT_BASE: BaseModelSpec = { vocab: 2048, dModel: 64, nLayers: 2, nHeads: 2, context: 768, pretrainSteps: 0, suiteTranscripts: 40, seed: 0 };

/** Characters of corpus text the tokenizer (and pretraining) read: a few seconds of BPE training. */
const TOKENIZER_CHARS = 400_000;
const TOKENIZER_TRANSCRIPTS = 200;

export function baseSpecOf(partial: Partial<BaseModelSpec>): BaseModelSpec {
  const spec = { ...DEFAULT_BASE };
  for (const [k, v] of Object.entries(partial)) if (v !== undefined) (spec as Record<string, number>)[k] = v;
  return spec;
}

export function baseModelPath(spec: BaseModelSpec, home = sleuthHome()): string {
  const hash = createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 12);
  return join(home, 'models', `base-${hash}.sampler.ckpt`);
}

/** The base model's sampler checkpoint, built on first use. */
export async function ensureBaseModel(spec: BaseModelSpec, opts: { home?: string; log?: (line: string) => void } = {}): Promise<string> {
  const path = baseModelPath(spec, opts.home);
  if (existsSync(path)) return path;
  const log = opts.log ?? (() => {});
  log(`base model: training a ${spec.vocab}-token BPE tokenizer on the embedded corpus and every suite's transcripts`);
  const texts = [...(await embeddedTokenizerTexts(TOKENIZER_CHARS, TOKENIZER_TRANSCRIPTS)), ...(await suiteTranscripts(spec.suiteTranscripts))];
  const tokenizer = trainLocalTokenizer(texts, spec.vocab);
  const dir = join(path, '..');
  const backend = createLocalBackend({
    tokenizer,
    config: { ...DEFAULT_MODEL, dModel: spec.dModel, nLayers: spec.nLayers, nHeads: spec.nHeads, context: spec.context },
    seed: spec.seed,
    dir,
  });
  if (spec.pretrainSteps > 0) {
    log(`base model: ${spec.pretrainSteps} next-token steps on corpus text and transcripts`);
    pretrain(backend, texts, { steps: spec.pretrainSteps, seed: spec.seed, seqLen: Math.min(256, spec.context - 1) });
  }
  const name = path.slice(dir.length + 1).replace(/\.sampler\.ckpt$/, '');
  await backend.saveWeightsForSampler(name);
  return path;
}

/** The names `train --model` and `local:` agents give the shipped models, and their sizes. */
export const SHIPPED_MODELS = { shipped: 'base', 'shipped-long': 'long' } as const;
export type ShippedName = keyof typeof SHIPPED_MODELS;
export const isShippedName = (name: string): name is ShippedName => Object.hasOwn(SHIPPED_MODELS, name);

/**
 * The budgets each shipped model is trained and evaluated with (configs/local-demo.json for the
 * base one, which sleuth demo evaluates; the long one's context for the long one), so that
 * `eval --agent local:shipped` scores the model as the demo does. A test keeps them equal to the config.
 */
export const SHIPPED_BUDGETS: Record<'base' | 'long', Partial<Budgets>> = {
  base: { maxTurns: 4, maxTokensPerTurn: 128, contextTokens: 1024 },
  long: { contextTokens: 2048 },
};

/**
 * Where a shipped model lies in the package (src/backend/local/assets/): its checkpoint, or the
 * gzipped copy it is shipped as, or undefined when neither is there. Nothing is unpacked.
 */
export function shippedAssetPath(size: 'base' | 'long' = 'base'): string | undefined {
  const file = `local-${size}.sampler.ckpt`;
  // From dist/src/backend/local/ (the build) the asset is in the sources; from src/backend/local/ it is beside.
  for (const rel of ['../../../../src/backend/local/assets/', './assets/']) {
    const p = fileURLToPath(new URL(rel + file, import.meta.url));
    if (existsSync(p)) return p;
    if (existsSync(`${p}.gz`)) return `${p}.gz`;
  }
  return undefined;
}

/**
 * A shipped, pretrained local model (src/backend/local/assets/, see demo/base-build.ts), if present:
 * the base (local-base.sampler.ckpt) or the long-episode one (local-long.sampler.ckpt). A model
 * shipped gzipped (the long one: kept under the repository's 5 MiB limit per file) is unpacked once
 * into $SLEUTH_HOME/models/, named by the hash of the packed file, so a new one is never shadowed.
 */
export function shippedBasePath(size: 'base' | 'long' = 'base', home = sleuthHome()): string | undefined {
  const asset = shippedAssetPath(size);
  if (asset === undefined || !asset.endsWith('.gz')) return asset;
  const packed = readFileSync(asset);
  const hash = createHash('sha256').update(packed).digest('hex').slice(0, 12);
  const unpacked = join(home, 'models', `shipped-${size}-${hash}.sampler.ckpt`);
  if (!existsSync(unpacked)) {
    mkdirSync(dirname(unpacked), { recursive: true });
    writeFileAtomic(unpacked, gunzipSync(packed));
  }
  return unpacked;
}
