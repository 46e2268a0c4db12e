import { rmSync } from 'node:fs';

/**
 * Keep-last-N state checkpoints (TrainConfig.keepCheckpoints; HF's `save_total_limit`, verl's
 * `max_actor_ckpt_to_keep`): state files (weights and optimiser, three times the weights) of all
 * but the newest N checkpoint records are deleted; the records and every sampler file stay.
 * Remote (tinker://) paths are left to their service.
 */
export function pruneStateCheckpoints(records: readonly { step: number; path: string }[], keep: number): string[] {
  const local = records.filter((r) => !r.path.startsWith('tinker://'));
  // Newest records by step (a resumed run may record a step twice: the later record wins).
  const newest = new Map<number, string>();
  for (const r of local) newest.set(r.step, r.path);
  const kept = new Set([...newest.entries()].sort((a, b) => b[0] - a[0]).slice(0, keep).map(([, p]) => p));
  const removed = [...new Set(local.map((r) => r.path))].filter((p) => !kept.has(p));
  for (const p of removed) rmSync(p, { force: true });
  return removed;
}
