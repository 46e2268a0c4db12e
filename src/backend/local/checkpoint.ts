import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { InputError } from '../../errors.js';
import { BpeDataSchema } from '../../protocol/compact/bpe.js';
import { ModelConfigSchema } from './model.js';

/**
 * The local model's checkpoint file, versioned:
 *   8 bytes  "SLEUTHLM"
 *   4 bytes  header length H (uint32, little-endian)
 *   H bytes  header JSON (format version, model config, tokenizer, optimiser step, tensor list)
 *   padding to a multiple of 4, then each tensor's float32 values (little-endian) in list order.
 * Written to a temporary file and renamed, so a crash never leaves half a checkpoint. The header's
 * `sha256` is the hash of the tensor bytes, checked on every read: a checkpoint whose bytes changed
 * on disk (a bad sector, a stray write) is refused, not trained from. Checkpoints written before
 * the hash was kept (the shipped base models among them) have none and are read unchecked.
 */
const MAGIC = 'SLEUTHLM';
export const CHECKPOINT_VERSION = 1;

export const CheckpointHeaderSchema = z.object({
  format: z.literal('sleuth-local-lm'),
  version: z.literal(CHECKPOINT_VERSION),
  /** 'sampler': weights only; 'state': weights and Adam moments, for resuming training. */
  kind: z.enum(['sampler', 'state']),
  name: z.string(),
  config: ModelConfigSchema,
  tokenizer: BpeDataSchema,
  /** Optimiser steps taken. */
  step: z.number().int().min(0),
  tensors: z.array(z.object({ name: z.enum(['params', 'adamM', 'adamV']), length: z.number().int().min(0) })),
  /** SHA-256 of the tensor bytes, hex (writeCheckpoint fills it in). */
  sha256: z.string().regex(/^[0-9a-f]{64}$/u).optional(),
});

export type CheckpointHeader = z.infer<typeof CheckpointHeaderSchema>;

/** A checkpoint whose tensor bytes are not the ones it was written with. */
export class CorruptCheckpoint extends InputError {
  constructor(readonly path: string) {
    super(`checkpoint ${path}: corrupted (its tensors' SHA-256 differs from the one written in its header)`);
  }
}

/** Whether the checkpoint at `path` reads back whole and unchanged. */
export function checkpointIntact(path: string): boolean {
  try {
    readCheckpoint(path);
    return true;
  } catch (err) {
    if (err instanceof InputError) return false;
    throw err;
  }
}

export function writeCheckpoint(path: string, header: CheckpointHeader, tensors: Record<string, Float32Array>): void {
  mkdirSync(dirname(path), { recursive: true });
  const bytes = header.tensors.map((t) => {
    const a = tensors[t.name];
    if (!a || a.length !== t.length) throw new Error(`checkpoint tensor ${t.name} missing or of the wrong length`);
    return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  });
  const hash = createHash('sha256');
  for (const b of bytes) hash.update(b);
  const json = Buffer.from(JSON.stringify({ ...header, sha256: hash.digest('hex') }), 'utf8');
  const pre = Buffer.alloc(12);
  pre.write(MAGIC, 0, 'latin1');
  pre.writeUInt32LE(json.length, 8);
  const pad = Buffer.alloc((4 - ((12 + json.length) % 4)) % 4);
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    for (const b of [pre, json, pad, ...bytes]) writeSync(fd, b);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export function readCheckpoint(path: string): { header: CheckpointHeader; tensors: Record<string, Float32Array> } {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (err) {
    throw new InputError(`checkpoint ${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (buf.length < 12 || buf.toString('latin1', 0, 8) !== MAGIC) throw new InputError(`checkpoint ${path}: not a sleuth local-model checkpoint (no ${MAGIC} header)`);
  const len = buf.readUInt32LE(8);
  if (12 + len > buf.length) throw new InputError(`checkpoint ${path}: truncated header`);
  let raw: unknown;
  try {
    raw = JSON.parse(buf.toString('utf8', 12, 12 + len));
  } catch {
    throw new InputError(`checkpoint ${path}: header is not valid JSON`);
  }
  const version = (raw as { version?: unknown })?.version;
  if (version !== CHECKPOINT_VERSION) throw new InputError(`checkpoint ${path}: format version ${String(version)} is not supported (this sleuth reads version ${CHECKPOINT_VERSION})`);
  const parsed = CheckpointHeaderSchema.safeParse(raw);
  if (!parsed.success) throw new InputError(`checkpoint ${path}: bad header: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const header = parsed.data;
  let off = 12 + len;
  off += (4 - (off % 4)) % 4;
  const tensors: Record<string, Float32Array> = {};
  const hash = createHash('sha256');
  for (const t of header.tensors) {
    const bytes = t.length * 4;
    if (off + bytes > buf.length) throw new InputError(`checkpoint ${path}: truncated (tensor ${t.name} needs ${bytes} bytes)`);
    // Copy out: the Buffer's offset need not be 4-aligned.
    tensors[t.name] = new Float32Array(buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + off + bytes));
    hash.update(buf.subarray(off, off + bytes));
    off += bytes;
  }
  if (header.sha256 !== undefined && hash.digest('hex') !== header.sha256) throw new CorruptCheckpoint(path);
  return { header, tensors };
}
