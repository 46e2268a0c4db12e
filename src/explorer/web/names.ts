/**
 * Short forms of the long names runs carry, for tables that must fit a screen; the full name
 * stays in the element's title. Nothing here is parsed for meaning beyond what the name shows.
 */

/** `sleuth demo`'s default folder name ends in a toISOString() stamp with ':' and '.' made '-'. */
const STAMP = /^(.*?)[-_]?(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})(?:-\d{3})?Z?$/u;

/** `demo-2026-12-03T07-04-31-361Z` → `demo 2026-12-03 07:04`; other names unchanged. */
export function shortName(name: string): string {
  const m = STAMP.exec(name);
  if (!m) return name;
  const [, prefix, day, hh, mm] = m;
  return `${prefix ? `${prefix} ` : ''}${day} ${hh}:${mm}`;
}

/**
 * An agent spec or model path with its directories cut: `local:/a/b/runs/x/sft/checkpoints/epoch-1.sampler.ckpt`
 * → `local:…/epoch-1.sampler.ckpt`, `train:/a/runs/x/grpo@step-2` → `train:…/grpo@step-2`.
 */
export function shortSpec(spec: string): string {
  const m = /^([a-z][\w-]*:)?(.*)$/u.exec(spec)!;
  const prefix = m[1] ?? '';
  const rest = m[2]!;
  // A URL (openai:model@http://host/v1) is kept whole: its host is the point.
  if (rest.includes('://') || !rest.includes('/')) return spec;
  return `${prefix}…/${rest.split('/').filter(Boolean).at(-1) ?? rest}`;
}

/**
 * Sub-run names that number a series (`step-16`, `epoch-2`): the series word and the number, so a
 * list of them reads `step: 0 8 16`. Null for any other name.
 */
export function seriesOf(name: string): { word: string; n: number } | null {
  const m = /^([a-z]+)-(\d+)$/u.exec(name);
  return m ? { word: m[1]!, n: Number(m[2]) } : null;
}

/** A time as `2026-12-03 07:04` (local time): one short line in a table cell. */
export function shortTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (x: number) => String(x).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}
