import type { Task } from '../../tasks/task.js';
import { scoreReply } from './score.js';

/** The invoice suite's reward parts and failure buckets: the share of gold values in the reply. */

/** The gold values of a task in the shared shape (`answers`, also kept in meta.gold_values). */
export function goldValuesOf(task: Task): string[] {
  const fromMeta = task.meta?.['gold_values'];
  if (Array.isArray(fromMeta) && fromMeta.every((v) => typeof v === 'string')) return fromMeta;
  return task.answers ?? [];
}

/**
 * Reward parts for an invoice rollout: `gold_share` (share of gold values in the reply, the
 * reward) and `pass` (1 when all are there). Only a final reply counts: an episode cut off
 * by a budget has no reply and scores 0. Returns the same shape as the rubric's parts.
 */
export function invoiceParts(task: Task, rollout: { answer?: string }): { gold_share: number; pass: number; answered: number } {
  const reply = rollout.answer ?? '';
  const score = scoreReply(reply, goldValuesOf(task));
  return { gold_share: score.share, pass: score.pass ? 1 : 0, answered: reply === '' ? 0 : 1 };
}

/** Failure bucket of an invoice rollout: correct (all values), partial, wrong (none), no_answer. */
export function invoiceBucket(parts: Record<string, number>): 'correct' | 'partial' | 'wrong' | 'no_answer' {
  if (parts['answered'] !== 1) return 'no_answer';
  if (parts['pass'] === 1) return 'correct';
  return (parts['gold_share'] ?? 0) > 0 ? 'partial' : 'wrong';
}
