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
  ].join('  ');
}

export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
