import { isAbsolute, relative, resolve, sep } from 'node:path';
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
}

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

export function appendCheckpoints<T extends CheckpointPaths>(dir: string, records: readonly T[]): void {
  appendJsonl(
    runPath(dir, 'checkpoints'),
    records.map((r) => ({ ...r, path: storedPath(dir, r.path), ...(typeof r.samplerPath === 'string' ? { samplerPath: storedPath(dir, r.samplerPath) } : {}) })),
  );
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
