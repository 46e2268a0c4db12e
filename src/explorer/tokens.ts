import { closeSync, existsSync, readSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { isShippedName, shippedAssetPath, SHIPPED_MODELS } from '../backend/local/base-model.js';
import { BpeDataSchema, BpeTokenizer } from '../protocol/compact/bpe.js';
import { getRenderer } from '../protocol/registry.js';
import { checkpointRecords } from '../runs/checkpoints.js';
import { parseJsonl } from '../runs/jsonl.js';
import { runPath } from '../runs/layout.js';
import { GuardedReader } from './guarded-read.js';

/**
 * Decoding a run's token ids for the token view, one token at a time. A named renderer (qwen3,
 * harmony, ...) brings its tokenizer; the local model's `compact` renderer has its tokenizer inside
 * the checkpoints, so it is read from the header of a checkpoint the run recorded (the header
 * only: never the weights). Without either, the view shows ids and says which file it lacks.
 */
export interface TokenDecoder {
  /** What decoded the ids, shown next to the token view. */
  source: string;
  decode(id: number): string;
}

const MAGIC = 'SLEUTHLM';
/** A header larger than this is not a sleuth checkpoint's (its tokenizer is a few MB at most). */
const MAX_HEADER = 64 << 20;

/**
 * Checkpoints a run names may lie anywhere (a starting model in the package, a shared models
 * folder), so their reader allows any path, but still only regular files, opened non-blocking: a
 * FIFO or a device named as a checkpoint is refused instead of hanging the server. Only a header
 * that is a sleuth checkpoint's (the magic, then a tokenizer that validates) is ever used.
 */
const CHECKPOINT_READER = new GuardedReader(['/']);

/**
 * The tokenizer in a local checkpoint's header, or undefined when the file is not one. A gzipped
 * checkpoint (how the long shipped model is shipped) is unpacked in memory, never onto the disk:
 * the explorer writes nothing.
 */
export function checkpointTokenizer(path: string): BpeTokenizer | undefined {
  try {
    if (path.endsWith('.gz')) {
      const packed = CHECKPOINT_READER.readBytes(path);
      if (!packed) return undefined;
      const whole = gunzipSync(packed, { maxOutputLength: MAX_UNPACKED });
      return headerTokenizer((at, length) => (at + length <= whole.length ? whole.subarray(at, at + length) : undefined));
    }
    const file = CHECKPOINT_READER.open(path);
    if (!file) return undefined;
    try {
      return headerTokenizer((at, length) => {
        const b = Buffer.alloc(length);
        return readSync(file.fd, b, 0, length, at) === length ? b : undefined;
      });
    } finally {
      closeSync(file.fd);
    }
  } catch {
    return undefined;
  }
}

/** The largest gzipped checkpoint unpacked (the long shipped model is about 5 MB). */
const MAX_UNPACKED = 256 << 20;

/** The tokenizer of a checkpoint header read by `bytes(offset, length)` (undefined when the file is shorter). */
function headerTokenizer(bytes: (at: number, length: number) => Buffer | undefined): BpeTokenizer | undefined {
  const pre = bytes(0, 12);
  if (!pre || pre.toString('latin1', 0, 8) !== MAGIC) return undefined;
  const len = pre.readUInt32LE(8);
  if (len > MAX_HEADER) return undefined;
  const head = bytes(12, len);
  if (!head) return undefined;
  const parsed = BpeDataSchema.safeParse((JSON.parse(head.toString('utf8')) as { tokenizer?: unknown }).tokenizer);
  return parsed.success ? new BpeTokenizer(parsed.data) : undefined;
}

/**
 * The model files a run names, each with how to show it when it is missing: its checkpoints.jsonl
 * (newest first), the model it started from (`config.model` of a train or SFT run) and the agent it
 * ran (`local:PATH` or `local:shipped` in `config.agent`, as eval, the demo and the benchmarks record).
 */
function modelFiles(dir: string, config: Record<string, unknown>, reader: GuardedReader): { path: string | undefined; shown: string }[] {
  let text: string | undefined;
  try {
    text = reader.readText(runPath(dir, 'checkpoints'));
  } catch {
    text = undefined;
  }
  // Read through the guarded reader; paths stored relative to the run directory resolve against it.
  const records = checkpointRecords(dir, parseJsonl(text ?? '').records).reverse();
  const files: { path: string | undefined; shown: string }[] = records.flatMap((r) => [r.samplerPath, r.path]).filter((p): p is string => typeof p === 'string' && !p.includes('://')).map((p) => ({ path: p, shown: p }));
  const model = config['model'];
  // `base` is a fresh model built on first use; nothing names its file.
  if (typeof model === 'string' && model !== 'base') files.push(namedModel(dir, model));
  const agent = localAgentModel(config);
  if (agent !== undefined) files.push(namedModel(dir, agent));
  return files;
}

/** What a `local:` agent spec loads, or undefined for any other agent. */
function localAgentModel(config: Record<string, unknown>): string | undefined {
  const agent = config['agent'];
  return typeof agent === 'string' && agent.startsWith('local:') ? agent.slice('local:'.length) : undefined;
}

/**
 * The file a model name in a run's config stands for: a shipped model (its file in the package,
 * gzipped or not), or a path. A relative path was relative to where the run was
 * made, which is not always where the explorer runs: it is looked for there, then beside each folder
 * above the run directory.
 */
function namedModel(dir: string, name: string): { path: string | undefined; shown: string } {
  if (isShippedName(name)) {
    const size = SHIPPED_MODELS[name];
    return { path: shippedAssetPath(size), shown: `src/backend/local/assets/local-${size}.sampler.ckpt (the ${name} model)` };
  }
  if (isAbsolute(name)) return { path: name, shown: name };
  const bases = [process.cwd()];
  for (let d = resolve(dir); dirname(d) !== d; d = dirname(d)) bases.push(dirname(d));
  return { path: bases.map((b) => resolve(b, name)).find((p) => existsSync(p)), shown: name };
}

/** A run's token decoder, or why there is none (a missing checkpoint is named). */
export type TokenLookup = { decoder: TokenDecoder; missing?: undefined } | { decoder?: undefined; missing: string };

/** `reader` reads the run's own files (checkpoints.jsonl): by default confined to the run directory. */
export async function tokenDecoderFor(dir: string, config: Record<string, unknown>, reader = new GuardedReader([realpathSync(dir)])): Promise<TokenLookup> {
  // An eval made during training (DIR/evals/step-N, DIR/evals/epoch-N, agent `train:...` or
  // `sft:...`) sampled with the trainer's model and records no renderer: its tokens are DIR's.
  const agent = config['agent'];
  if (typeof agent === 'string' && /^(train|sft):/.test(agent) && basename(dirname(dir)) === 'evals') {
    const trainer = dirname(dirname(dir));
    let trainerConfig: unknown;
    try {
      trainerConfig = JSON.parse(reader.readText(runPath(trainer, 'config')) ?? 'null');
    } catch {
      trainerConfig = null;
    }
    if (typeof trainerConfig !== 'object' || trainerConfig === null) return { missing: `the training run's ${runPath(trainer, 'config')} cannot be read` };
    return tokenDecoderFor(trainer, trainerConfig as Record<string, unknown>, reader);
  }
  // An eval of a local: agent records no renderer: the local model speaks only compact.
  const name = config['renderer'] ?? (localAgentModel(config) !== undefined ? 'compact' : undefined);
  if (typeof name !== 'string') return { missing: 'the run records no renderer' };
  if (name === 'compact') {
    const files = modelFiles(dir, config, reader);
    for (const { path } of files) {
      const tok = path === undefined ? undefined : checkpointTokenizer(path);
      if (tok) return { decoder: { source: `compact (tokenizer of ${path})`, decode: (id) => safe(() => tok.decode([id]), id) } };
    }
    if (files.length === 0) return { missing: 'the run names no checkpoint of its model yet' };
    const why = files.map(({ path, shown }) => (path !== undefined && existsSync(path) ? `${shown} is not a local model checkpoint` : `${shown} is missing`));
    return { missing: `no tokenizer: ${[...new Set(why)].join('; ')}` };
  }
  try {
    const renderer = await getRenderer(name);
    return { decoder: { source: name, decode: (id) => safe(() => renderer.decode([id]), id) } };
  } catch {
    return { missing: `no tokenizer for renderer '${name}' here` };
  }
}

function safe(f: () => string, id: number): string {
  try {
    return f();
  } catch {
    return `#${id}`;
  }
}
