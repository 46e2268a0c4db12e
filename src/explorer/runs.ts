import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseJsonl } from '../runs/jsonl.js';
import { runPath } from '../runs/layout.js';
import { isRunDir } from '../runs/store.js';
import { GuardedReader } from './guarded-read.js';
import { inside, PathRefused, runDirOf } from './paths.js';
import { RolloutIndex, type IndexWarning } from './rollout-index.js';

/** What the runs list shows of one run directory. */
export interface RunInfo {
  id: string;
  name: string;
  kind: string;
  tasks: string | null;
  model: string | null;
  steps: number;
  /** Rollouts indexed so far. */
  rollouts: number;
  /** Bytes of rollouts.jsonl not indexed yet (0 once the index has caught up). */
  indexingBytes: number;
  /** Plain numbers from summary.json, or the latest train metrics of a run still going. */
  headline: Record<string, number>;
  startedAt: string | null;
  state: 'done' | 'running' | 'stopped';
  /** Files changed: the client refetches when this moves. */
  version: string;
  warnings: { file: string; line: number; reason: string }[];
  /** The nearest run directory above this one (a training run above its evals/step-N), or null. */
  parent: string | null;
  /** The top folder under RUNS_DIR that holds this run when that folder is not a run itself (a demo's), or null. */
  group: string | null;
}

/** A run that wrote nothing for this long and has no summary is shown as stopped, not running. */
const RUNNING_WINDOW_MS = 120_000;
/** Time one listing may spend indexing one run; API calls on a run get more (API_BUDGET_MS). */
const INFO_BUDGET_MS = 250;
export const API_BUDGET_MS = 1500;

const HEADLINE = ['reward', 'f1', 'recall', 'precision', 'fbeta', 'exact_match', 'valid', 'valid_share', 'entropy', 'curated_size', 'turns'];

interface Cached<T> {
  key: string;
  value: T;
}

/** One run directory: its config, its rollout index and metrics, re-read only when files grow. */
export class RunView {
  readonly index: RolloutIndex;
  private metricsCache: Cached<{ records: Record<string, unknown>[]; skipped: IndexWarning[] }> | undefined;
  private configCache: Cached<Record<string, unknown>> | undefined;
  /** Files of this run the guarded reader refused (a link out of the root, a FIFO, a device, too big). */
  private refused = new Map<string, string>();

  constructor(readonly id: string, readonly dir: string, readonly reader: GuardedReader) {
    this.index = new RolloutIndex(runPath(dir, 'rollouts'), reader);
  }

  /** A file's text through the guarded reader: undefined when it is missing or refused (and then noted). */
  private text(file: 'config' | 'metrics' | 'summary'): string | undefined {
    const path = runPath(this.dir, file);
    try {
      const text = this.reader.readText(path);
      this.refused.delete(file);
      return text;
    } catch (err) {
      if (!(err instanceof PathRefused)) throw err;
      this.refused.set(file, err.message);
      return undefined;
    }
  }

  config(): Record<string, unknown> {
    const key = this.fileVersion('config');
    if (this.configCache?.key !== key) {
      let value: Record<string, unknown>;
      try {
        value = JSON.parse(this.text('config') ?? '') as Record<string, unknown>;
      } catch {
        value = { kind: 'unknown' };
      }
      this.configCache = { key, value };
    }
    return this.configCache.value;
  }

  metrics(): { records: Record<string, unknown>[]; skipped: IndexWarning[] } {
    const key = this.fileVersion('metrics');
    if (this.metricsCache?.key !== key) {
      const read = parseJsonl<Record<string, unknown>>(this.text('metrics') ?? '');
      const records = read.records.filter((r) => typeof r === 'object' && r !== null && typeof r['step'] === 'number');
      this.metricsCache = { key, value: { records, skipped: read.skipped } };
    }
    return this.metricsCache.value;
  }

  summary(): Record<string, unknown> | null {
    const text = this.text('summary');
    if (text === undefined) return null;
    try {
      const v = JSON.parse(text) as unknown;
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  }

  /** Changes when that file changes (size, mtime, or a new file in its place). */
  fileVersion(file: 'config' | 'rollouts' | 'metrics' | 'summary' | 'checkpoints'): string {
    const st = this.guardedStat(runPath(this.dir, file));
    return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : '-';
  }

  /** Moves when a file changes, and while a large rollouts file is still being indexed. */
  version(): string {
    return [...(['config', 'rollouts', 'metrics', 'summary', 'checkpoints'] as const).map((f) => this.fileVersion(f)), this.index.behind].join('|');
  }

  private guardedStat(path: string) {
    try {
      return this.reader.stat(path);
    } catch (err) {
      if (err instanceof PathRefused) return undefined;
      throw err;
    }
  }

  info(): RunInfo {
    // A short budget: listing many runs must not wait for one huge file (the next poll goes on).
    this.index.refresh(INFO_BUDGET_MS);
    const config = this.config();
    const summary = this.summary();
    const { records, skipped } = this.metrics();
    const kind = String(config['kind'] ?? 'unknown');
    const train = records.filter((r) => r['kind'] === 'train');
    const steps = train.length ? Math.max(...train.map((r) => r['step'] as number)) : 0;
    const headline: Record<string, number> = {};
    const source: Record<string, unknown> = { ...(train.at(-1) ?? {}), ...(summary ?? {}), ...((summary?.['eval'] as Record<string, unknown> | undefined) ?? {}) };
    for (const k of HEADLINE) if (typeof source[k] === 'number') headline[k] = source[k] as number;
    const mtimeOf = (path: string) => this.guardedStat(path)?.mtimeMs ?? 0;
    const latest = Math.max(...(['rollouts', 'metrics', 'summary', 'checkpoints', 'config'] as const).map((f) => mtimeOf(runPath(this.dir, f))));
    const finished = summary !== null && summary['done'] !== false;
    const state = finished ? 'done' : Date.now() - latest < RUNNING_WINDOW_MS ? 'running' : 'stopped';
    const firstRollout = this.index.rollouts.length ? this.index.read(0)?.startedAt : undefined;
    const startedAt = str(config['createdAt']) ?? str(config['startedAt']) ?? firstRollout ?? new Date(mtimeOf(runPath(this.dir, 'config'))).toISOString();
    return {
      id: this.id,
      name: this.id === '.' ? basename(this.dir) : this.id.split('/').at(-1)!,
      kind,
      tasks: str(config['tasks']) ?? null,
      model: str(config['model']) ?? str(config['agent']) ?? null,
      steps,
      rollouts: this.index.rollouts.length,
      indexingBytes: this.index.behind,
      headline,
      startedAt,
      state,
      version: this.version(),
      warnings: [
        ...this.index.warnings().map((w) => ({ file: 'rollouts.jsonl', ...w })),
        ...skipped.map((w) => ({ file: 'metrics.jsonl', line: w.line, reason: `not JSON: ${w.reason}` })),
        ...[...this.refused].map(([file, reason]) => ({ file: `${file}.json${file === 'metrics' ? 'l' : ''}`, line: 0, reason: `not read: ${reason}` })),
      ],
      // Where it sits among the other runs: RunStore.list() knows them all.
      parent: null,
      group: null,
    };
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Names in natural order: step-8 before step-16, run-2 before run-10. */
const naturalOrder = new Intl.Collator('en', { numeric: true }).compare;

/** The run directories under root, as ids, depth-first (a training run's evals/step-N included), siblings in natural order. */
export function findRuns(root: string, maxDepth = 4): string[] {
  const out: string[] = [];
  const walk = (dir: string, prefix: string[], depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => naturalOrder(a.name, b.name))) {
      if (!e.isDirectory() || e.name.startsWith('.')) continue;
      const path = join(dir, e.name);
      if (!inside(root, path)) continue;
      const id = [...prefix, e.name];
      if (isRunDir(path)) out.push(id.join('/'));
      if (depth < maxDepth) walk(path, id, depth + 1);
    }
  };
  if (isRunDir(root)) out.push('.');
  walk(root, [], 1);
  return out;
}

/** All runs under a root, each opened once and kept (their indexes grow incrementally). */
export class RunStore {
  private views = new Map<string, RunView>();
  /** Every run file is read through this, confined to the runs directory. */
  readonly reader: GuardedReader;

  constructor(readonly root: string) {
    this.reader = new GuardedReader([root]);
  }

  get(id: string): RunView {
    const dir = runDirOf(this.root, id);
    let v = this.views.get(id);
    if (!v || v.dir !== dir) {
      v = new RunView(id, dir, this.reader);
      this.views.set(id, v);
    }
    return v;
  }

  list(): RunInfo[] {
    const ids = findRuns(this.root);
    const known = new Set(ids);
    return ids.map((id) => ({ ...this.get(id).info(), parent: parentOf(id, known), group: groupOf(id, known) }));
  }
}

/** The nearest run above a run id among the runs found ('.' when RUNS_DIR is a run itself). */
export function parentOf(id: string, runs: ReadonlySet<string>): string | null {
  if (id === '.') return null;
  const segments = id.split('/');
  for (let n = segments.length - 1; n > 0; n--) {
    const above = segments.slice(0, n).join('/');
    if (runs.has(above)) return above;
  }
  return runs.has('.') ? '.' : null;
}

/** The top folder of a run id when it holds runs but is not one (a demo's directory). */
export function groupOf(id: string, runs: ReadonlySet<string>): string | null {
  const top = id.split('/')[0]!;
  // Under a RUNS_DIR that is a run itself, every folder belongs to that run.
  return !runs.has('.') && top !== id && !runs.has(top) ? top : null;
}
