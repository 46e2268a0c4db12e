import { join } from 'node:path';

/**
 * A run directory is plain files, appended and never rewritten (but summary.json, rewritten
 * whole at the end through a temporary file and a rename). The explorer only reads them.
 */
export const RUN_FILES = {
  /** The resolved configuration (flags and file merged), with `kind`: eval | sft | train. */
  config: 'config.json',
  /** One Rollout (src/agent/rollout.ts) per line. */
  rollouts: 'rollouts.jsonl',
  /** One object per training step or eval point: {step, kind: 'train'|'eval', ...metrics}. */
  metrics: 'metrics.jsonl',
  /** One object per saved checkpoint: {step, path, samplerPath?, time}. */
  checkpoints: 'checkpoints.jsonl',
  /** Final means under plain metric names (reward, recall, precision, f1, fbeta, ...). */
  summary: 'summary.json',
} as const;

export function runPath(dir: string, file: keyof typeof RUN_FILES): string {
  return join(dir, RUN_FILES[file]);
}
