import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { InputError } from '../errors.js';
import { checksumOf } from '../files/checksum.js';
import { appendJsonl, readJsonl } from './jsonl.js';
import { runPath } from './layout.js';

/**
 * checkpoints.jsonl names its files relative to the run directory, so that a run directory can be
 * moved or copied (`mv runs/a runs/b`, then `--resume runs/b`). A file outside the run directory
 * keeps its absolute path, a remote one (`tinker://...`) its URI; records written before paths
 * were relative hold absolute paths, and are read as they are.
 */
export interface CheckpointPaths {
  /** Weights and optimiser state (saveState), or the sampler weights for an SFT epoch. */
  path: string;
  /** Weights for sampling (saveWeightsForSampler), when saved. */
  samplerPath?: string | null;
  /**
   * xxHash32 (files/checksum.ts) of each local file as written, by the field that names it;
   * appendCheckpoints fills it in. Records written before it was kept have none.
   */
  checksums?: { path?: string; samplerPath?: string };
}

/** A checkpoint file whose checksum is not the one its record holds. */
export class DamagedCheckpoint extends InputError {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

type FileField = 'path' | 'samplerPath';
const FILE_FIELDS: readonly FileField[] = ['path', 'samplerPath'];

const isRemote = (p: string) => p.includes('://');

/** How `path` is written in `dir`'s checkpoints.jsonl. */
function storedPath(dir: string, path: string): string {
  if (isRemote(path)) return path;
  const rel = relative(resolve(dir), resolve(path));
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? resolve(path) : rel.split(sep).join('/');
}

/** The file a stored path names, for the run directory where it is now. */
function resolvedPath(dir: string, path: string): string {
  return isRemote(path) || isAbsolute(path) ? path : resolve(dir, path);
}

/** The checksums of a record's local files that exist (a remote or missing file has none). */
function fileChecksums(r: CheckpointPaths): CheckpointPaths['checksums'] | undefined {
  const sums: Partial<Record<FileField, string>> = {};
  for (const field of FILE_FIELDS) {
    const path = r[field];
    // An SFT epoch's path and samplerPath are one file: read it once.
    if (typeof path === 'string' && !isRemote(path) && existsSync(path)) sums[field] = field === 'samplerPath' && path === r.path && sums.path ? sums.path : checksumOf(readFileSync(path));
  }
  return Object.keys(sums).length ? sums : undefined;
}

export function appendCheckpoints<T extends CheckpointPaths>(dir: string, records: readonly T[]): void {
  appendJsonl(
    runPath(dir, 'checkpoints'),
    records.map((r) => {
      const checksums = r.checksums ?? fileChecksums(r);
      return { ...r, path: storedPath(dir, r.path), ...(typeof r.samplerPath === 'string' ? { samplerPath: storedPath(dir, r.samplerPath) } : {}), ...(checksums ? { checksums } : {}) };
    }),
  );
}

/**
 * Refuse a checkpoint file whose bytes are not the ones its record in `dir`'s checkpoints.jsonl
 * was written with (a bit flip, a stray write, a file copied over it): an InputError naming the
 * file and what to do. `fields`: the files about to be loaded. A record without checksums (written
 * before they were kept) is not checked: returns false; true when every file was.
 */
export function verifyCheckpointFiles(dir: string, record: CheckpointPaths & { step?: unknown }, fields: readonly FileField[] = FILE_FIELDS): boolean {
  let checked = true;
  for (const field of fields) {
    const path = record[field];
    if (typeof path !== 'string' || isRemote(path)) continue;
    const want = record.checksums?.[field];
    if (want === undefined) {
      checked = false;
      continue;
    }
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      throw new InputError(`checkpoint ${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const got = checksumOf(bytes);
    if (got !== want) {
      throw new DamagedCheckpoint(path, `checkpoint ${path}: corrupted (its xxh32 is ${got}; ${runPath(dir, 'checkpoints')} recorded ${want} when step ${String(record.step)} wrote it): restore the file from a copy, or use another checkpoint`);
    }
  }
  return checked;
}

/**
 * Verify a checkpoint file a command was given by path (`--model`, `local:PATH`, `serve
 * --checkpoint`) against the run that wrote it, when there is one: a file in a run directory's
 * checkpoints/ folder that the run's checkpoints.jsonl names. Anything else is left to the file's
 * own checks. Returns the run directory when the file was checked.
 */
export function verifyRecordedCheckpoint(path: string): string | undefined {
  const file = resolve(path);
  if (basename(dirname(file)) !== 'checkpoints') return undefined;
  const dir = dirname(dirname(file));
  if (!existsSync(runPath(dir, 'checkpoints'))) return undefined;
  for (const r of readCheckpoints(dir)) {
    const fields = FILE_FIELDS.filter((f) => typeof r[f] === 'string' && resolve(r[f]) === file);
    if (fields.length && r.checksums) return verifyCheckpointFiles(dir, r, fields) ? dir : undefined;
  }
  return undefined;
}

/**
 * The records of `dir`'s checkpoints.jsonl in file order, their paths resolved against `dir`.
 * Lines without a string `path` are skipped: they are not checkpoints (a half-written last line).
 */
export function readCheckpoints<T extends CheckpointPaths>(dir: string): T[] {
  return checkpointRecords<T>(dir, readJsonl<Record<string, unknown>>(runPath(dir, 'checkpoints')).records);
}

/** Parsed lines of `dir`'s checkpoints.jsonl (however they were read) as records with resolved paths. */
export function checkpointRecords<T extends CheckpointPaths>(dir: string, records: readonly unknown[]): T[] {
  return records
    .filter((r): r is Record<string, unknown> => r !== null && typeof r === 'object' && typeof (r as Record<string, unknown>)['path'] === 'string')
    .map((r) => ({
      ...r,
      path: resolvedPath(dir, r['path'] as string),
      ...(typeof r['samplerPath'] === 'string' ? { samplerPath: resolvedPath(dir, r['samplerPath']) } : {}),
    })) as unknown as T[];
}
