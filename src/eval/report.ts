import { suiteOf } from '../suites/registry.js';
import type { BenchmarksReport } from './benchmarks.js';
import type { Comparison } from './compare.js';
import type { Headroom, Summary } from './metrics.js';
import type { Interval } from './stats.js';
import { alignRows, groupedTable, UNLIMITED, wrap } from '../text/width.js';

/** Plain-text tables for the terminal (the CLI prints them; --json prints the objects instead). */

const LABELS: Record<string, string> = {
  reward: 'reward',
  recall: 'recall',
  precision: 'precision',
  f1: 'F1',
  fbeta: 'F-beta',
  trajectory_recall: 'trajectory recall',
  exact_match: 'exact match',
  f1_format: 'F1 + format floor',
  partial_credit: 'partial credit',
  answered: 'answered',
  gold_share: 'gold values found (share)',
  pass_rate: 'pass rate',
  valid: 'valid (curated >= 1)',
  curated_size: 'curated-set size',
  turns: 'turns',
  tokens: 'tokens',
  offform_episode: 'off-form episodes',
  offform_episode_share: 'off-form episodes',
  wall_s: 'wall s / rollout',
  cost_usd: 'cost / question $',
  cost_per_question: 'cost / question $',
};

export function fmt(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || Number.isNaN(x)) return '—';
  const a = Math.abs(x);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return x.toExponential(2);
  return a >= 100 ? x.toFixed(1) : x.toFixed(digits);
}

function interval(ci: Interval | undefined): string {
  return ci && ci.n >= 2 ? `[${fmt(ci.lo)}, ${fmt(ci.hi)}]` : '';
}

const signed = (x: number) => `${x >= 0 ? '+' : ''}${fmt(x)}`;

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function formatSummary(summary: Summary, title: string): string {
  const rows: string[][] = [['metric', 'mean', '95% interval']];
  for (const [key, ci] of Object.entries(summary.intervals)) rows.push([LABELS[key] ?? key, fmt(summary[key] as number), interval(ci)]);
  rows.push(['off-form calls (share)', fmt(summary['offform_call_share'] as number), '']);
  if (summary['pass_at_1'] !== undefined) {
    rows.push(['pass@1', fmt(summary['pass_at_1'] as number), '']);
    // With one sample per task, pass@k and best-of-N are pass@1 and best-of-1: shown once.
    if ((summary['pass_k'] as number) > 1) rows.push([`pass@${summary['pass_k']}`, fmt(summary['pass_at_k'] as number), '']);
    if (summary.samples > 1) rows.push([`best-of-${summary.samples} reward`, fmt(summary['best_of_n'] as number), '']);
    rows.push(['best-of-1 reward', fmt(summary['best_of_1'] as number), '']);
  }
  if (summary['total_cost_usd'] === null) rows.push(['cost', 'unknown', '(no price for this model)']);
  const lines = [title, `${summary.tasks} tasks x up to ${summary.samples} samples = ${summary.rollouts} rollouts${summary.errors ? `, ${summary.errors} ended in error` : ''}`, '', alignRows(rows).join('\n'), ''];
  lines.push('end reasons: ' + Object.entries(summary.end_reasons).map(([k, v]) => `${k} ${v}`).join(', '));
  lines.push(`${suiteOf(summary.scoring).result === 'curated set' ? 'curated sets' : 'answers'}: ` + Object.entries(summary.buckets).map(([k, v]) => `${k.replace('_', ' ')} ${pct(v)}`).join(', '));
  return lines.join('\n');
}

/**
 * Column names for runs: the shortest trailing parts of their paths that still tell them apart
 * (`runs/demo-x/grpo` and `runs/demo-x/sft` become `grpo` and `sft`), so the table stays narrow.
 */
export function runNames(dirs: readonly string[]): string[] {
  const parts = dirs.map((d) => d.split(/[\\/]+/).filter((p) => p !== '' && p !== '.'));
  const longest = Math.max(1, ...parts.map((p) => p.length));
  for (let n = 1; n <= longest; n++) {
    const names = parts.map((p, i) => (p.length === 0 ? dirs[i]! : p.slice(-n).join('/')));
    if (new Set(names).size === names.length) return names;
  }
  return [...dirs];
}

/**
 * The paired comparison: per metric, each run's mean and interval and, for every later run, its
 * difference from the first. Side by side when `width` allows, stacked per metric otherwise.
 */
export function formatComparison(comparison: Comparison, width = UNLIMITED): string {
  const names = runNames(comparison.runs.map((r) => r.dir));
  const rows = comparison.metrics.map((m) => ({
    label: LABELS[m] ?? m,
    cells: comparison.runs.map((r, i) => {
      const v = r.values[m]!;
      if (i === 0) return [fmt(v.mean), interval(v)];
      const d = r.diffs[m]!;
      return [fmt(v.mean), interval(v), signed(d.mean), interval(d), d.shown ? '' : 'n.s.'];
    }),
  }));
  return [
    `${comparison.sharedTasks.length} shared tasks; runs:`,
    ...comparison.runs.map((r, i) => `  ${names[i]}${names[i] === r.dir ? '' : ` = ${r.dir}`}  (agent ${r.agent})`),
    '',
    groupedTable({ label: 'metric', groups: names.map((name, i) => ({ name, head: i === 0 ? name : `${name}  (vs first, 95%)` })), rows }, width),
    '',
    wrap('Each later run minus the first, paired over shared tasks (seeded bootstrap). n.s. = not shown: the interval contains 0.', width),
  ].join('\n');
}

export function formatHeadroom(hs: Headroom[], width = UNLIMITED): string {
  const rows = hs.map((h) => ({
    label: LABELS[h.metric] ?? h.metric,
    cells: [[fmt(h.bestOf1.mean), interval(h.bestOf1)], [fmt(h.bestOfN.mean), interval(h.bestOfN)], [signed(h.gain.mean), interval(h.gain), h.gain.shown ? '' : 'n.s.']],
  }));
  const groups = [{ name: 'best-of-1' }, { name: 'best-of-N' }, { name: 'gain', head: 'gain (paired, 95%)' }];
  const n = hs[0]?.samples ?? 0;
  return [
    wrap(`best-of-${n} vs best-of-1 over ${hs[0]?.tasks ?? 0} tasks (best-of-1 = mean of the ${n} samples)`, width),
    '',
    groupedTable({ label: 'metric', groups, rows }, width),
    '',
    wrap('A gain whose interval excludes 0 is headroom RL can close by sharpening the policy.', width),
  ].join('\n');
}

/**
 * The QA benchmarks table: per benchmark the data it ran on, n, EM and F1 means, the abort rate,
 * the length-clip ratio and searches per episode; then each benchmark's search-count profile, and
 * a line per benchmark that could not run.
 */
export function formatBenchmarks(report: BenchmarksReport): string {
  const rows = [['benchmark', 'data', 'n', 'EM', 'F1', 'abort', 'clip', 'searches'], ...report.benchmarks.map((b) => [b.benchmark, b.data, String(b.n), fmt(b.exact_match), fmt(b.f1), fmt(b.abort_rate), fmt(b.length_clip_ratio), b.searches_per_episode.toFixed(2)])];
  const width = Math.max(0, ...report.benchmarks.map((b) => b.benchmark.length));
  const lines = [`${report.agent} on the QA benchmarks (env ${report.env}, temperature ${report.temperature})`, ''];
  if (report.benchmarks.length > 0) {
    lines.push(alignRows(rows, { left: 2 }).join('\n'), '', 'search-count profile (number of searches: episodes):');
    for (const b of report.benchmarks) lines.push(`  ${b.benchmark.padEnd(width)}  ${Object.entries(b.search_count_profile).map(([n, count]) => `${n}: ${count}`).join(', ')}`);
    lines.push('', 'abort: share of episodes that ended without an answer; clip: share with a turn cut at the token or context limit.');
  }
  if (report.missing.length > 0) lines.push('', ...report.missing);
  return lines.join('\n');
}
