import type { StepReport } from './grpo.js';

/** One progress line: step, reward, valid share, last eval F1, time per step, ETA. */
export function progressLine(p: StepReport, evalF1: number | null, startedMs: number, nowMs = Date.now()): string {
  const m = p.metrics;
  const num = (x: unknown, d = 3) => (typeof x === 'number' ? x.toFixed(d) : '-');
  const elapsed = (nowMs - startedMs) / 1000;
  // Per-step time from this session's steps (a resumed run's earlier steps are not timed here).
  const eta = p.stepSeconds * (p.steps - p.step);
  return [
    `step ${String(p.step).padStart(String(p.steps).length)}/${p.steps}`,
    `reward ${num(m['reward'])}`,
    `valid ${num(m['valid_share'], 2)}`,
    `entropy ${num(m['entropy'], 2)}`,
    `mixed ${num(m['groups_mixed_share'], 2)}`,
    `eval F1 ${evalF1 === null ? '-' : evalF1.toFixed(3)}`,
    `${p.stepSeconds.toFixed(1)} s/step`,
    `ETA ${clock(eta)}`,
    `(${clock(elapsed)} so far)`,
    ...(m['reward'] === 0 ? [noRewardWhy(m['end_reasons'])] : []),
  ].join('  ');
}

/** Why a step earned nothing, from how its episodes ended (e.g. the invoice emails outgrow the small model's context). */
const END_MEANING: Record<string, string> = { context: 'ran out of context', tokens: 'ran out of tokens in a turn', turns: 'ran out of turns', error: 'ended in an error', finish: 'finished', answer: 'answered' };
function noRewardWhy(endReasons: unknown): string {
  const counts = Object.entries((endReasons ?? {}) as Record<string, number>).sort((a, b) => b[1] - a[1]);
  const total = counts.reduce((s, [, n]) => s + n, 0);
  if (total === 0) return '(no reward this step)';
  return `(no reward this step: ${counts.map(([reason, n]) => `${n} of ${total} episodes ${END_MEANING[reason] ?? `ended by ${reason}`}`).join(', ')})`;
}

export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
