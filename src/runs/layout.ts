import { join } from 'node:path';

/**
 * A run directory is plain files, appended to. Three writes replace a file whole, through a
 * temporary file and a rename: summary.json when a run ends; metrics.jsonl and rollouts.jsonl when a
 * training run resumes with records of steps after its last checkpoint (truncateRunAfter in
 * training.ts drops them, as the resumed run does those steps again); and a new checkpoint removes
 * the previous one's optimiser state. The explorer only reads them. (docs/ARCHITECTURE.md, Data flow.)
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
