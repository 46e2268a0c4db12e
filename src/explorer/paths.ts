import { existsSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isRunDir } from '../runs/store.js';

/**
 * Run ids are paths relative to RUNS_DIR written with '/', e.g. `grpo-1` or `grpo-1/evals/step-4`.
 * Every id that arrives over HTTP goes through runDirOf, which refuses anything that could leave
 * RUNS_DIR: absolute paths, `..` segments (after URL decoding, which the caller has done once),
 * backslashes, NUL bytes, and symbolic links whose target lies outside.
 */
export class PathRefused extends Error {}

const SEGMENT = /^[^/\\\0]+$/u;

export function checkRunId(id: string): string[] {
  // '.' alone is RUNS_DIR itself, when it is a run directory (`sleuth explore runs/one-run`).
  if (id === '.') return [];
  if (id.length === 0 || id.length > 500) throw new PathRefused('run id must be 1 to 500 characters');
  const segments = id.split('/');
  for (const s of segments) {
    if (!SEGMENT.test(s) || s === '.' || s === '..') throw new PathRefused(`run id '${id}' is not a path inside the runs directory`);
  }
  return segments;
}

/** The real directory of a run id inside root, or PathRefused. `root` must already be a realpath. */
export function runDirOf(root: string, id: string): string {
  const segments = checkRunId(id);
  const dir = join(root, ...segments);
  if (!existsSync(dir)) throw new PathRefused(`no run '${id}'`);
  const real = realpathSync(dir);
  if (!inside(root, real)) throw new PathRefused(`run '${id}' lies outside the runs directory`);
  if (!statSync(real).isDirectory() || !isRunDir(real)) throw new PathRefused(`'${id}' is not a run directory (no config.json)`);
  return real;
}

export function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && !rel.split(sep).includes('..'));
}

/** The realpath of the runs directory (created by nobody: the explorer never writes). */
export function realRoot(dir: string): string {
  return realpathSync(resolve(dir));
}
