import type { Rollout } from '../agent/rollout.js';

/**
 * The difficulty filter (TrainConfig.difficultyFilter = K; 0 = off): a task whose last K groups
 * were each flat (every rollout scored the same: all solved or all failed, so every advantage was
 * 0) is skipped when the data order reaches it again; like prime-rl's online difficulty filtering,
 * it spends sampling on tasks that still teach. A task is skipped until the filter is reset (the
 * next run), so easy tasks stay out once learned.
 */
export class DifficultyFilter {
  /** Per task, whether each of its recent groups was flat (newest last, at most K). */
  private readonly flat = new Map<string, boolean[]>();
  constructor(readonly groups: number) {}

  record(taskId: string, rewards: readonly number[]): void {
    if (this.groups === 0 || rewards.length === 0) return;
    const h = this.flat.get(taskId) ?? [];
    h.push(rewards.every((r) => r === rewards[0]));
    if (h.length > this.groups) h.shift();
    this.flat.set(taskId, h);
  }

  skips(taskId: string): boolean {
    const h = this.flat.get(taskId);
    return this.groups > 0 && h !== undefined && h.length >= this.groups && h.every(Boolean);
  }

  /** Rebuild from recorded rollouts (a resumed run's rollouts.jsonl), group by group in step order. */
  replay(rollouts: readonly Pick<Rollout, 'taskId' | 'step' | 'group' | 'reward'>[]): void {
    const groups = new Map<string, { taskId: string; order: number; rewards: number[] }>();
    for (const r of rollouts) {
      if (r.step === undefined || r.group === undefined || !r.reward) continue;
      const key = `${r.step}/${r.group}`;
      const g = groups.get(key) ?? { taskId: r.taskId, order: r.step * 1e6 + r.group, rewards: [] };
      g.rewards.push(r.reward.total);
      groups.set(key, g);
    }
    for (const g of [...groups.values()].sort((a, b) => a.order - b.order)) this.record(g.taskId, g.rewards);
  }
}
