import { closeSync, readSync, realpathSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
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
 * only: never the weights). Without either, the view shows ids.
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

/** The tokenizer in a local checkpoint's header, or undefined when the file is not one. */
export function checkpointTokenizer(path: string): BpeTokenizer | undefined {
  let file;
  try {
    file = CHECKPOINT_READER.open(path);
  } catch {
    return undefined;
  }
  if (!file) return undefined;
  const { fd } = file;
  try {
    const pre = Buffer.alloc(12);
    if (readSync(fd, pre, 0, 12, 0) !== 12 || pre.toString('latin1', 0, 8) !== MAGIC) return undefined;
    const len = pre.readUInt32LE(8);
    if (len > MAX_HEADER) return undefined;
    const head = Buffer.alloc(len);
    if (readSync(fd, head, 0, len, 12) !== len) return undefined;
    const parsed = BpeDataSchema.safeParse((JSON.parse(head.toString('utf8')) as { tokenizer?: unknown }).tokenizer);
    return parsed.success ? new BpeTokenizer(parsed.data) : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Checkpoint files a run names: its checkpoints.jsonl (newest first), then its starting model. */
function checkpointPaths(dir: string, config: Record<string, unknown>, reader: GuardedReader): string[] {
  let text: string | undefined;
  try {
    text = reader.readText(runPath(dir, 'checkpoints'));
  } catch {
    text = undefined;
  }
  // Read through the guarded reader; paths stored relative to the run directory resolve against it.
  const records = checkpointRecords(dir, parseJsonl(text ?? '').records).reverse();
  const paths = records.flatMap((r) => [r.samplerPath, r.path]).filter((p): p is string => typeof p === 'string' && !p.includes('://'));
  if (typeof config['model'] === 'string' && config['model'] !== 'base') paths.push(config['model']);
  return paths.map((p) => (isAbsolute(p) ? p : resolve(p)));
}

/** `reader` reads the run's own files (checkpoints.jsonl): by default confined to the run directory. */
export async function tokenDecoderFor(dir: string, config: Record<string, unknown>, reader = new GuardedReader([realpathSync(dir)])): Promise<TokenDecoder | undefined> {
  const name = config['renderer'];
  if (typeof name !== 'string') return undefined;
  if (name === 'compact') {
    for (const path of checkpointPaths(dir, config, reader)) {
      const tok = checkpointTokenizer(path);
      if (tok) return { source: `compact (tokenizer of ${path})`, decode: (id) => safe(() => tok.decode([id]), id) };
    }
    return undefined;
  }
  try {
    const renderer = await getRenderer(name);
    return { source: name, decode: (id) => safe(() => renderer.decode([id]), id) };
  } catch {
    return undefined;
  }
}

function safe(f: () => string, id: number): string {
  try {
    return f();
  } catch {
    return `#${id}`;
  }
}
