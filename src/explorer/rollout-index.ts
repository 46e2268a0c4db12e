import { closeSync, readSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Rollout } from '../agent/rollout.js';
import { GuardedReader, type OpenFile } from './guarded-read.js';
import { PathRefused } from './paths.js';

/**
 * An index of rollouts.jsonl by byte offsets, so that a run with 100,000 rollouts is filtered,
 * sorted and paged from small summaries, and one rollout is read by seeking to its line.
 * refresh() reads only what was appended since the last call; a file that shrank or was replaced
 * (a resumed trainer drops the records of unfinished steps) is indexed again from the start.
 * A line without its newline yet is left for the next refresh (it is being written, or a crash
 * cut it); a complete line that does not parse is skipped and reported.
 */
export interface RolloutSummary {
  /** Position among indexed rollouts (0-based): the id the API uses. */
  n: number;
  /** 1-based line number in rollouts.jsonl. */
  line: number;
  offset: number;
  length: number;
  id: string;
  taskId: string;
  sample: number;
  step: number | null;
  group: number | null;
  reward: number | null;
  advantage: number | null;
  endReason: string;
  offform: number;
  curated: number;
  turns: number;
  agent: string;
  query: string;
}

export interface IndexWarning {
  line: number;
  reason: string;
}

const CHUNK = 4 << 20;

/**
 * The token arrays are most of a rollout line's bytes and none of its summary. Blanking them
 * before JSON.parse doubles indexing speed. Safe on JSON.stringify output: the arrays hold only
 * numbers (no ']'), and the same words inside a string would have escaped quotes (\"), which this
 * pattern does not match.
 */
const TOKEN_ARRAYS = /"(insertedTokens|sampledTokens|sampledLogprobs)":\[[^\]]*\]/gu;

export class RolloutIndex {
  readonly rollouts: RolloutSummary[] = [];
  readonly skipped: IndexWarning[] = [];
  /** Bytes at the end of the file that do not end in a newline yet. */
  pendingBytes = 0;
  private done = 0;
  private lines = 0;
  private ino = -1;

  /** Why the file was not read (a link out of the runs directory, not a regular file), if it was not. */
  refused: string | undefined;
  private readonly reader: GuardedReader;

  /** `reader` confines reads to the runs directory; without one, to the file's own directory. */
  constructor(readonly path: string, reader?: GuardedReader) {
    this.reader = reader ?? new GuardedReader([realpathSync(dirname(path))]);
  }

  private open(): OpenFile | undefined {
    try {
      const f = this.reader.open(this.path);
      this.refused = undefined;
      return f;
    } catch (err) {
      if (!(err instanceof PathRefused)) throw err;
      this.refused = err.message;
      return undefined;
    }
  }

  /** Bytes of the file not indexed yet (a refresh that ran out of time leaves some). */
  behind = 0;

  /**
   * Index what was appended; returns whether anything changed. With a time budget it stops after
   * about that many milliseconds (a whole chunk at least), so a server indexing a huge file stays
   * responsive; the next refresh goes on from there.
   */
  refresh(budgetMs = Infinity): boolean {
    const t0 = performance.now();
    const file = this.open();
    if (!file) {
      const changed = this.done > 0 || this.pendingBytes > 0;
      if (changed) this.reset();
      return changed;
    }
    const { fd, stat: st } = file;
    try {
      if (st.ino !== this.ino || st.size < this.done) {
        this.reset();
        this.ino = st.ino;
      }
      if (st.size === this.done + this.pendingBytes && this.behind === 0) return false;
      let carry: Buffer = Buffer.alloc(0);
      let pos = this.done;
      while (pos < st.size) {
        const buf = Buffer.allocUnsafe(Math.min(CHUNK, st.size - pos));
        const got = readSync(fd, buf, 0, buf.length, pos);
        if (got === 0) break;
        pos += got;
        const data = carry.length ? Buffer.concat([carry, buf.subarray(0, got)]) : buf.subarray(0, got);
        let start = 0;
        for (let nl = data.indexOf(0x0a, start); nl !== -1; nl = data.indexOf(0x0a, start)) {
          this.addLine(data.subarray(start, nl), this.done);
          this.done += nl - start + 1;
          start = nl + 1;
        }
        carry = Buffer.from(data.subarray(start));
        if (performance.now() - t0 > budgetMs) break;
      }
      this.behind = st.size - pos;
      this.pendingBytes = this.behind > 0 ? 0 : carry.length;
    } finally {
      closeSync(fd);
    }
    return true;
  }

  /** The full record of rollout n, read from its line. */
  read(n: number): Rollout | undefined {
    const s = this.rollouts[n];
    if (!s) return undefined;
    const file = this.open();
    if (!file) return undefined;
    const { fd } = file;
    try {
      const buf = Buffer.alloc(s.length);
      readSync(fd, buf, 0, s.length, s.offset);
      return JSON.parse(buf.toString('utf8')) as Rollout;
    } finally {
      closeSync(fd);
    }
  }

  warnings(): IndexWarning[] {
    const out = [...this.skipped];
    if (this.refused !== undefined) out.push({ line: 0, reason: `not read: ${this.refused}` });
    if (this.pendingBytes > 0 && this.behind === 0) out.push({ line: this.lines + 1, reason: `last line is incomplete (${this.pendingBytes} bytes without a newline: still being written, or cut by a crash); not shown` });
    return out;
  }

  private reset(): void {
    this.rollouts.length = 0;
    this.skipped.length = 0;
    this.done = 0;
    this.lines = 0;
    this.pendingBytes = 0;
    this.behind = 0;
  }

  private addLine(bytes: Buffer, offset: number): void {
    this.lines++;
    const text = bytes.toString('utf8');
    if (text.trim() === '') return;
    let r: Partial<Rollout>;
    try {
      r = JSON.parse(text.replace(TOKEN_ARRAYS, '"$1":0')) as Partial<Rollout>;
    } catch (err) {
      this.skipped.push({ line: this.lines, reason: `not JSON: ${(err as Error).message}` });
      return;
    }
    const missing = (['id', 'taskId', 'turns', 'curated', 'endReason'] as const).find((k) => r === null || typeof r !== 'object' || r[k] === undefined);
    if (missing || !Array.isArray(r.turns) || !Array.isArray(r.curated)) {
      this.skipped.push({ line: this.lines, reason: `not a rollout: ${missing ? `no '${missing}'` : 'turns and curated must be arrays'}` });
      return;
    }
    let offform = 0;
    for (const t of r.turns) for (const c of Array.isArray(t?.calls) ? t.calls : []) if (c?.status === 'off_form') offform++;
    this.rollouts.push({
      n: this.rollouts.length,
      line: this.lines,
      offset,
      length: bytes.length,
      id: String(r.id),
      taskId: String(r.taskId),
      sample: typeof r.sample === 'number' ? r.sample : 0,
      step: typeof r.step === 'number' ? r.step : null,
      group: typeof r.group === 'number' ? r.group : null,
      reward: typeof r.reward?.total === 'number' ? r.reward.total : null,
      advantage: typeof r.advantage === 'number' ? r.advantage : null,
      endReason: String(r.endReason),
      offform,
      curated: new Set(r.curated).size,
      turns: r.turns.length,
      agent: String(r.agent ?? ''),
      query: String(r.query ?? '').slice(0, 200),
    });
  }
}

export interface RolloutQuery {
  task?: string;
  step?: number;
  group?: number;
  minReward?: number;
  maxReward?: number;
  endReason?: string;
  /** true: only rollouts with an off-form call; false: only without. */
  offform?: boolean;
  minCurated?: number;
  maxCurated?: number;
  sort?: SortKey;
  desc?: boolean;
  page?: number;
  pageSize?: number;
}

export const SORT_KEYS = ['n', 'taskId', 'step', 'group', 'sample', 'reward', 'advantage', 'endReason', 'offform', 'curated', 'turns'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export interface RolloutPage {
  total: number;
  page: number;
  pageSize: number;
  rows: RolloutSummary[];
}

/** Filter, sort and cut one page; a task filter matches a substring of the task id. */
export function queryRollouts(all: readonly RolloutSummary[], q: RolloutQuery): RolloutPage {
  const rows = all.filter(
    (r) =>
      (q.task === undefined || r.taskId.includes(q.task)) &&
      (q.step === undefined || r.step === q.step) &&
      (q.group === undefined || r.group === q.group) &&
      (q.minReward === undefined || (r.reward !== null && r.reward >= q.minReward)) &&
      (q.maxReward === undefined || (r.reward !== null && r.reward <= q.maxReward)) &&
      (q.endReason === undefined || r.endReason === q.endReason) &&
      (q.offform === undefined || r.offform > 0 === q.offform) &&
      (q.minCurated === undefined || r.curated >= q.minCurated) &&
      (q.maxCurated === undefined || r.curated <= q.maxCurated),
  );
  const key = q.sort ?? 'n';
  if (key !== 'n' || q.desc) {
    const dir = q.desc ? -1 : 1;
    rows.sort((a, b) => {
      const x = a[key];
      const y = b[key];
      // Missing values (an eval rollout has no step) sort last in either direction.
      if (x === null || y === null) return x === y ? a.n - b.n : x === null ? 1 : -1;
      const c = typeof x === 'string' ? x.localeCompare(y as string) : (x as number) - (y as number);
      return c !== 0 ? c * dir : a.n - b.n;
    });
  }
  const pageSize = Math.min(Math.max(q.pageSize ?? 50, 1), 500);
  const pages = Math.max(1, Math.ceil(rows.length / pageSize));
  const page = Math.min(Math.max(q.page ?? 0, 0), pages - 1);
  return { total: rows.length, page, pageSize, rows: rows.slice(page * pageSize, (page + 1) * pageSize) };
}
