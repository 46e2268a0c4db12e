import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../errors.js';
import { asHttpError, HttpError } from '../http/request.js';
import { closeServer, listen } from '../http/lifecycle.js';
import { send as sendBody, sendJson } from '../http/response.js';
import { compareRuns, loadRunRows } from '../eval/compare.js';
import { betaAt, BetaScheduleSchema } from '../reward/schedule.js';
import { suiteOfRun } from '../suites/registry.js';
import { readTaskSet, TASKSET_FILES, taskSetDir } from '../tasks/registry.js';
import { isShippedTaskSet, sleuthHome } from '../tasks/store.js';
import { runPath } from '../runs/layout.js';
import { GuardedReader, MAX_READ_BYTES } from './guarded-read.js';
import type { Task } from '../tasks/task.js';
import { rescoreGroup, type AdvantageKind, type LabSettings } from './lab.js';
import { PathRefused, realRoot } from './paths.js';
import { queryRollouts, SORT_KEYS, type RolloutQuery, type SortKey } from './rollout-index.js';
import { API_BUDGET_MS, RunStore, type RunView } from './runs.js';
import { tokenDecoderFor, type TokenLookup } from './tokens.js';
import { chunkInfo, episodeNumbers, shownResult } from './tool-results.js';

/**
 * The explorer's HTTP server: a JSON API over run directories and the built front end. It only
 * ever reads. Every run is named by an id checked by paths.ts; static files are served from a
 * table of the built front end's files made at start, so no URL path reaches the file system.
 */
export interface ExplorerOptions {
  runsDir: string;
  port?: number;
  host?: string;
  /** The built front end (default: dist/explorer-web). */
  webDir?: string;
}

export interface Explorer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Where the built front end is, from src/explorer (vitest) or dist/src/explorer (the CLI). */
export function defaultWebDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, '..', '..', 'explorer-web'), join(here, '..', '..', 'dist', 'explorer-web')];
  return candidates.find((c) => existsSync(join(c, 'index.html'))) ?? candidates[0]!;
}

function staticTable(webDir: string): Map<string, string> {
  const table = new Map<string, string>();
  const walk = (dir: string, prefix: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name), `${prefix}${e.name}/`);
      else if (e.isFile()) table.set(`/${prefix}${e.name}`, join(dir, e.name));
    }
  };
  if (existsSync(webDir)) walk(webDir, '');
  return table;
}

/** A strict-mode page: no inline script, nothing from elsewhere (the page works offline). */
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export async function startExplorer(o: ExplorerOptions): Promise<Explorer> {
  const root = realRoot(o.runsDir);
  if (!statSync(root).isDirectory()) throw new InputError(`RUNS_DIR ${o.runsDir} is not a directory`);
  const store = new RunStore(root);
  const files = staticTable(o.webDir ?? defaultWebDir());
  const api = new Api(store);

  const server = createServer((req, res) => {
    // Every request gets an answer within the limit, even one waiting on slow work.
    const timer = setTimeout(() => send(res, 503, { error: `the request took longer than ${REQUEST_TIMEOUT_MS} ms` }), REQUEST_TIMEOUT_MS);
    handle(req, res)
      .catch((err: unknown) => {
        const e = err instanceof PathRefused ? new HttpError(404, err.message) : asHttpError(err);
        send(res, e.status, { error: e.message }, e.headers);
      })
      .finally(() => clearTimeout(timer));
  });
  // A client that sends its request slowly (or never finishes it) is dropped, not waited on.
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = REQUEST_TIMEOUT_MS;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'the explorer is read-only: GET only', { allow: 'GET, HEAD' });
    const url = new URL(req.url ?? '/', 'http://explorer.invalid');
    if (url.pathname.startsWith('/api/')) return send(res, 200, await api.route(url.pathname.slice(5), url.searchParams));
    const file = files.get(url.pathname === '/' ? '/index.html' : url.pathname);
    if (!file) return send(res, 404, { error: `no such page: ${url.pathname}` });
    sendBody(res, 200, readFileSync(file), { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' });
  }

  const host = o.host ?? '127.0.0.1';
  const port = await listen(server, o.port ?? 0, host);
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    server,
    close: () => closeServer(server, { cut: true }),
  };
}

/** Longest the explorer works on one request (file reads are bounded by the guarded reader). */
const REQUEST_TIMEOUT_MS = 10_000;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  // The time limit may have answered already.
  if (res.headersSent) return;
  sendJson(res, status, body, { 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', ...headers });
}

function num(p: URLSearchParams, name: string): number | undefined {
  const v = p.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new HttpError(400, `${name} must be a number, got '${v}'`);
  return n;
}

function required(p: URLSearchParams, name: string): string {
  const v = p.get(name);
  if (v === null || v === '') throw new HttpError(400, `missing parameter '${name}'`);
  return v;
}

/** The JSON API; each method reads the files it needs (cached while they do not change). */
class Api {
  private tasks = new Map<string, { tasks?: Map<string, Task>; error?: string }>();
  private decoders = new Map<string, Promise<TokenLookup>>();

  constructor(private store: RunStore) {}

  async route(name: string, p: URLSearchParams): Promise<unknown> {
    switch (name) {
      case 'runs':
        return { runs: this.store.list() };
      case 'run':
        return this.run(this.store.get(required(p, 'run')));
      case 'compare':
        return this.compare(p.getAll('run'));
      case 'rollouts':
        return this.rollouts(this.store.get(required(p, 'run')), p);
      case 'rollout':
        return await this.rollout(this.store.get(required(p, 'run')), num(p, 'n') ?? -1);
      case 'group':
        return this.group(this.store.get(required(p, 'run')), p);
      default:
        throw new PathRefused(`no API '${name}'`);
    }
  }

  private run(v: RunView) {
    const all = this.store.list();
    const info = all.find((r) => r.id === v.id) ?? v.info();
    // The runs below this one (evals/step-N in step order, a demo's test-split eval), each named by its path under this run.
    const children = all.filter((r) => r.parent === v.id);
    const nameUnder = (id: string) => (v.id === '.' ? id : id.slice(v.id.length + 1));
    const evalTable = [{ run: v, name: info.name }, ...children.map((c) => ({ run: this.store.get(c.id), name: nameUnder(c.id) }))]
      .map(({ run, name }) => ({ run: run.id, name, step: numberOr(run.config()['step']), intervals: intervalsOf(run.summary()) }))
      .filter((row) => Object.keys(row.intervals).length > 0);
    return { info, config: v.config(), summary: v.summary(), metrics: v.metrics().records, evalTable, evalRuns: children.map((c) => ({ id: c.id, name: nameUnder(c.id) })) };
  }

  private compare(ids: string[]) {
    if (ids.length < 2) throw new HttpError(400, 'compare needs at least two runs');
    const runs = ids.map((id) => {
      const dir = this.store.get(id).dir;
      // loadRunRows reads these two files whole: through the guard first (regular, inside, not too big).
      for (const file of ['config', 'rollouts'] as const) {
        const st = this.store.reader.stat(runPath(dir, file));
        if (st && st.size > MAX_READ_BYTES) throw new PathRefused(`${id}: ${file} is too large to compare here (${st.size} bytes); use sleuth compare`);
      }
      return { id, rows: loadRunRows(dir) };
    });
    const c = compareRuns(runs.map((r) => r.rows), { seed: 0 });
    return { ...c, runs: c.runs.map((r, i) => ({ ...r, dir: runs[i]!.id })) };
  }

  private rollouts(v: RunView, p: URLSearchParams) {
    v.index.refresh(API_BUDGET_MS);
    const sort = p.get('sort') ?? undefined;
    if (sort !== undefined && !(SORT_KEYS as readonly string[]).includes(sort)) throw new HttpError(400, `sort must be one of ${SORT_KEYS.join(', ')}, got '${sort}'`);
    const off = p.get('offform');
    const q: RolloutQuery = {
      ...(p.get('task') ? { task: p.get('task')! } : {}),
      ...(p.get('endReason') ? { endReason: p.get('endReason')! } : {}),
      ...(off === 'yes' ? { offform: true } : off === 'no' ? { offform: false } : {}),
      ...(sort ? { sort: sort as SortKey } : {}),
      desc: p.get('desc') === '1',
    };
    for (const k of ['step', 'group', 'minReward', 'maxReward', 'minCurated', 'maxCurated', 'page', 'pageSize'] as const) {
      const n = num(p, k);
      if (n !== undefined) q[k] = n;
    }
    const all = v.index.rollouts;
    return { ...queryRollouts(all, q), endReasons: [...new Set(all.map((r) => r.endReason))].sort(), warnings: v.index.warnings(), indexingBytes: v.index.behind };
  }

  private async rollout(v: RunView, n: number) {
    v.index.refresh(API_BUDGET_MS);
    const r = v.index.read(n);
    if (!r) throw new PathRefused(v.index.behind > 0 ? `run '${v.id}': rollout ${n} is not indexed yet (${(v.index.behind / 1e6).toFixed(0)} MB to go); try again in a moment` : `run '${v.id}' has no rollout ${n}`);
    const { task, error } = this.task(v, r.taskId);
    const curated = new Set(r.curated);
    // A multi-hop task (meta.hops the number of its facts) lists its facts hop by hop, in order.
    const hops = task?.meta?.['hops'];
    const chain = typeof hops === 'number' && hops === task?.facts.length;
    const facts = task?.facts.map((f, i) => ({ text: f.text, chunkIds: f.chunkIds, covered: f.chunkIds.some((id) => curated.has(id)), seen: f.chunkIds.some((id) => r.trajectory.includes(id)), hop: chain ? i + 1 : null })) ?? null;
    const numberOf = episodeNumbers(r);
    const results = r.turns.map((t) => t.calls.map((c) => shownResult(c, numberOf)));
    const { decoder, missing } = await this.decoderFor(v);
    const decode = decoder ? (ids: number[]) => ids.map((t) => decoder.decode(t)) : undefined;
    const tokens = r.turns.map((t) => ({
      inserted: decode ? decode(t.insertedTokens ?? []) : null,
      sampled: decode ? decode(t.sampledTokens ?? []) : null,
    }));
    return { n, summary: v.index.rollouts[n], rollout: r, facts, chunks: chunkInfo(r, task), results, tasksError: error ?? null, decodedWith: decoder?.source ?? null, undecoded: missing ?? null, tokens };
  }

  private group(v: RunView, p: URLSearchParams) {
    v.index.refresh();
    const step = num(p, 'step');
    const group = num(p, 'group');
    const task = p.get('task');
    const members = v.index.rollouts.filter((s) => (group !== undefined ? s.group === group && (step === undefined || s.step === step) : s.taskId === task && s.step === (step ?? null)));
    if (members.length === 0) throw new PathRefused(`run '${v.id}' has no such group`);
    const rollouts = members.map((s) => v.index.read(s.n)!);
    const config = v.config();
    const suite = suiteOfRun(config, rollouts);
    const defaults: LabSettings = {
      weights: { ...(rollouts[0]!.reward?.weights ?? {}) },
      // The trainer scores step s's rollouts with the beta of step s - 1 (the policy that sampled them).
      beta: configBeta(config, Math.max(0, (rollouts[0]!.step ?? 1) - 1)),
      advantage: config['advantage'] === 'grpo' ? 'grpo' : 'dr-grpo',
    };
    const settings = labSettings(p, defaults, Object.keys(rollouts[0]!.reward?.parts ?? {}));
    const tasks = this.taskMap(v);
    const lab = rescoreGroup(rollouts, settings, suite.kind, tasks.tasks);
    return {
      taskId: rollouts[0]!.taskId,
      query: rollouts[0]!.query,
      step: rollouts[0]!.step ?? null,
      group: rollouts[0]!.group ?? null,
      kind: suite.kind,
      members: members.map((s, i) => {
        const r = rollouts[i]!;
        const chunks = new Map(chunkInfo(r, tasks.tasks?.get(r.taskId)).map((c) => [c.id, c]));
        const curated = [...new Set(r.curated)].map((id) => chunks.get(id) ?? { id, n: null, title: null, facts: [] });
        return { ...s, parts: r.reward?.parts ?? {}, curatedIds: curated.map((c) => c.id), curatedChunks: curated, finalText: r.turns.at(-1)?.text.slice(0, 600) ?? '' };
      }),
      defaults,
      parts: Object.keys(rollouts[0]!.reward?.parts ?? {}),
      lab,
    };
  }

  private taskMap(v: RunView): { tasks?: Map<string, Task>; error?: string } {
    const name = v.config()['tasks'];
    if (typeof name !== 'string') return { error: 'the run config names no task set' };
    let entry = this.tasks.get(name);
    if (!entry) {
      try {
        this.checkTaskSet(name);
        entry = { tasks: new Map(readTaskSet(name).tasks.map((t) => [t.id, t as Task])) };
      } catch (err) {
        entry = { error: `task set '${name}': ${(err as Error).message}` };
      }
      this.tasks.set(name, entry);
    }
    return entry;
  }

  /**
   * A run's config names its task set, and a config is data: a path there is followed only inside
   * the runs directory or sleuth's own task store, and only to regular files (so a config cannot
   * show the facts of any directory on the machine, or hang the server on a FIFO).
   */
  private checkTaskSet(name: string): void {
    if (isShippedTaskSet(name)) return;
    const store = join(sleuthHome(), 'tasks');
    const roots = [this.store.root, ...(existsSync(store) ? [realRoot(store)] : [])];
    const reader = new GuardedReader(roots);
    const dir = taskSetDir(name);
    for (const file of [TASKSET_FILES.tasks, TASKSET_FILES.manifest]) {
      try {
        reader.stat(join(dir, file));
      } catch (err) {
        if (err instanceof PathRefused) throw new PathRefused(`${dir} is outside the runs directory and sleuth's task store, or not a plain task-set file: not read`);
        throw err;
      }
    }
  }

  private task(v: RunView, id: string): { task?: Task; error?: string } {
    const m = this.taskMap(v);
    if (!m.tasks) return { error: m.error ?? 'no tasks' };
    const task = m.tasks.get(id);
    return task ? { task } : { error: `task '${id}' is not in the run's task set` };
  }

  /**
   * The run's token decoder, looked for once per run. A miss is not kept: the checkpoint it names
   * may appear later (a training run's next one, a model copied in), so the next rollout looks again.
   */
  private decoderFor(v: RunView): Promise<TokenLookup> {
    let d = this.decoders.get(v.dir);
    if (!d) {
      d = tokenDecoderFor(v.dir, v.config(), v.reader);
      this.decoders.set(v.dir, d);
      void d.then((l) => l.decoder === undefined && this.decoders.delete(v.dir), () => this.decoders.delete(v.dir));
    }
    return d;
  }
}

function numberOr(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}

function intervalsOf(summary: Record<string, unknown> | null): Record<string, { mean: number; lo: number; hi: number; n: number }> {
  const iv = summary?.['intervals'];
  return typeof iv === 'object' && iv !== null ? (iv as Record<string, { mean: number; lo: number; hi: number; n: number }>) : {};
}

/** F-beta's beta the run used at a step: eval runs store the rubric, training runs their reward config. */
function configBeta(config: Record<string, unknown>, step: number): number {
  const rubric = config['rubric'] as { beta?: unknown } | undefined;
  const reward = config['reward'] as { beta?: unknown } | undefined;
  const b = rubric?.beta ?? reward?.beta;
  if (typeof b === 'number' && b > 0) return b;
  const schedule = BetaScheduleSchema.safeParse(b);
  return schedule.success ? betaAt(schedule.data, step) : 4;
}

function labSettings(p: URLSearchParams, defaults: LabSettings, parts: string[]): LabSettings {
  const weights = { ...defaults.weights };
  for (const [key, value] of p) {
    if (!key.startsWith('w.')) continue;
    const part = key.slice(2);
    if (!parts.includes(part)) throw new HttpError(400, `${key}: '${part}' is not a reward part of these rollouts (${parts.join(', ')})`);
    const w = Number(value);
    if (value === '' || !Number.isFinite(w)) throw new HttpError(400, `${key} must be a number, got '${value}'`);
    weights[part] = w;
  }
  const beta = num(p, 'beta') ?? defaults.beta;
  if (!(beta > 0)) throw new HttpError(400, `beta must be positive, got ${beta}`);
  const adv = p.get('advantage') ?? defaults.advantage;
  if (adv !== 'dr-grpo' && adv !== 'grpo') throw new HttpError(400, `advantage must be dr-grpo or grpo, got '${adv}'`);
  return { weights, beta, advantage: adv as AdvantageKind };
}
