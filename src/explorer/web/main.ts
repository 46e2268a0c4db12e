import './style.css';
import { api, type CallRecord, type ChunkInfo, type Interval, type RolloutSummary, type RunInfo, type ShownResult, type TurnRecord } from './api.js';
import { lineChart, type Series } from './charts.js';
import { clear, fmt, h, type Child } from './dom.js';
import { shortName, shortSpec } from './names.js';
import { go, link } from './nav.js';
import { runsPage } from './runs-page.js';

/**
 * The explorer's pages, routed by the URL hash: #/ (runs), #/run?runs=A,B (dashboard, runs
 * overlaid), #/rollouts?run=A&... (table), #/rollout?run=A&n=N, #/group?run=A&step=S&group=G.
 * A poll of /api/runs every few seconds redraws the page when a run it shows has grown.
 */

const app = document.getElementById('app')!;
const crumbs = document.getElementById('crumbs')!;
const live = document.getElementById('live')!;
const POLL_MS = Number(new URLSearchParams(location.search).get('poll') ?? 2000);

interface Route {
  path: string;
  params: URLSearchParams;
}

function route(): Route {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query] = hash.split('?', 2);
  return { path: path || '/', params: new URLSearchParams(query ?? '') };
}

/** Versions of the runs the current page was drawn from; a change redraws it. */
let shown = new Map<string, string>();
let renderToken = 0;

async function render(): Promise<void> {
  const token = ++renderToken;
  const r = route();
  const page = h('div', { class: 'page' });
  try {
    const runs = await api<{ runs: RunInfo[] }>('runs');
    const versions = new Map(runs.runs.map((x) => [x.id, x.version]));
    let content: Child;
    let used: string[];
    switch (r.path) {
      case '/run': {
        used = (r.params.get('runs') ?? '').split(',').filter(Boolean);
        content = await dashboard(used, r.params, runs.runs);
        break;
      }
      case '/rollouts':
        used = [r.params.get('run') ?? ''];
        content = await rolloutsPage(r.params);
        break;
      case '/rollout':
        used = [];
        content = await rolloutPage(r.params);
        break;
      case '/group':
        used = [];
        content = await groupPage(r.params);
        break;
      default:
        used = ['*'];
        content = runsPage(runs.runs, () => void render());
    }
    if (token !== renderToken) return;
    shown = new Map(used.map((id) => [id, id === '*' ? [...versions].join(';') : (versions.get(id) ?? '')]));
    page.append(...([content] as unknown[]).flat(Infinity).filter((c): c is Node => c instanceof Node));
  } catch (err) {
    if (token !== renderToken) return;
    page.append(h('p', { class: 'error' }, String((err as Error).message)));
  }
  setCrumbs(r);
  const y = window.scrollY;
  clear(app);
  app.append(page);
  window.scrollTo(0, y);
  // Tests (and anyone scripting the page) wait for this: the page for this hash is drawn.
  document.body.dataset['rendered'] = location.hash;
  document.body.dataset['renders'] = String(Number(document.body.dataset['renders'] ?? 0) + 1);
}

function setCrumbs(r: Route): void {
  clear(crumbs);
  const run = r.params.get('run') ?? r.params.get('runs')?.split(',')[0];
  const parts: Child[] = [h('a', { href: '#/' }, 'runs')];
  if (run) parts.push(' / ', h('a', { href: link('/run', { runs: run }), title: run }, run.split('/').map(shortName).join('/')));
  if (run && r.path !== '/run' && r.path !== '/') parts.push(' / ', h('a', { href: link('/rollouts', { run }) }, 'rollouts'));
  if (r.path === '/rollout') parts.push(' / ', `rollout ${r.params.get('n')}`);
  if (r.path === '/group') parts.push(' / ', 'group');
  crumbs.append(...parts.flat().map((p) => (typeof p === 'string' ? document.createTextNode(p) : (p as Node))));
}

async function poll(): Promise<void> {
  try {
    const runs = await api<{ runs: RunInfo[] }>('runs');
    const versions = new Map(runs.runs.map((x) => [x.id, x.version]));
    const all = [...versions].join(';');
    const changed = [...shown].some(([id, v]) => (id === '*' ? all !== v : versions.get(id) !== v));
    live.textContent = `live · checked ${new Date().toLocaleTimeString()}`;
    if (changed && !document.activeElement?.closest('form')) await render();
  } catch {
    live.textContent = 'server not answering';
  }
}

// ---------------------------------------------------------------------------------------------
// Warnings (every page)
// ---------------------------------------------------------------------------------------------

function warningsBanner(warnings: { file?: string; line: number; reason: string }[]): Child {
  if (warnings.length === 0) return null;
  return h('div', { class: 'warnings', role: 'alert' }, h('strong', {}, `⚠ ${warnings.length} line(s) skipped`), h('ul', {}, warnings.slice(0, 20).map((w) => h('li', {}, `${w.file ?? 'rollouts.jsonl'} line ${w.line}: ${w.reason}`))));
}

// ---------------------------------------------------------------------------------------------
// Dashboard
// ---------------------------------------------------------------------------------------------

interface RunData {
  info: RunInfo;
  config: Record<string, unknown>;
  summary: Record<string, unknown> | null;
  metrics: Record<string, unknown>[];
  /** This run's and its sub-runs' eval summaries, each named by its path under this run. */
  evalTable: { run: string; name: string; step: number | null; intervals: Record<string, Interval> }[];
  evalRuns: { id: string; name: string }[];
}

const CHARTS: { title: string; kind: 'train' | 'eval'; keys: string[] }[] = [
  { title: 'train reward', kind: 'train', keys: ['reward'] },
  { title: 'valid rollouts (curated ≥ 1)', kind: 'train', keys: ['valid_share'] },
  { title: 'entropy (nats / sampled token)', kind: 'train', keys: ['entropy'] },
  { title: 'eval F1 / precision / recall', kind: 'eval', keys: ['f1', 'precision', 'recall'] },
  { title: 'trajectory vs curated recall', kind: 'train', keys: ['trajectory_recall', 'curated_recall'] },
  { title: 'off-form calls (share of calls, of episodes)', kind: 'train', keys: ['offform_call_share', 'offform_episode_share'] },
  { title: 'turns per episode', kind: 'train', keys: ['turns'] },
  { title: 'curated documents', kind: 'train', keys: ['curated_size'] },
  { title: 'groups with no reward variance', kind: 'train', keys: ['groups_all_equal_share'] },
  { title: 'eval reward', kind: 'eval', keys: ['reward'] },
  { title: 'training loss', kind: 'train', keys: ['loss'] },
];

/** Prompts (queries) seen by the end of each step: the sum of queries consumed, groups when absent. */
function promptsSeen(metrics: Record<string, unknown>[]): Map<number, number> {
  const out = new Map<number, number>([[0, 0]]);
  let total = 0;
  for (const m of metrics.filter((x) => x['kind'] === 'train').sort((a, b) => (a['step'] as number) - (b['step'] as number))) {
    const q = m['queries_consumed'] ?? m['groups'];
    total += typeof q === 'number' ? q : 0;
    out.set(m['step'] as number, total);
  }
  return out;
}

async function dashboard(ids: string[], params: URLSearchParams, all: RunInfo[]): Promise<Child> {
  if (ids.length === 0) return h('p', { class: 'error' }, 'no run chosen');
  const runs = await Promise.all(ids.map((id) => api<RunData>('run', { run: id })));
  const byPrompts = params.get('x') === 'prompts';
  const xLabel = byPrompts ? 'prompts seen' : 'step';
  const toggle = h('button', { type: 'button', id: 'x-toggle', onclick: () => go('/run', { runs: ids.join(','), x: byPrompts ? undefined : 'prompts', more: params.get('more') }) }, byPrompts ? 'x: prompts seen (show steps)' : 'x: step (show prompts seen)');
  const addable = all.filter((r) => !ids.includes(r.id));
  const add = h('select', { id: 'add-run', onchange: (e) => { const v = (e.target as HTMLSelectElement).value; if (v) go('/run', { runs: [...ids, v].join(','), x: params.get('x'), more: params.get('more') }); } }, h('option', { value: '' }, 'overlay another run…'), addable.map((r) => h('option', { value: r.id }, r.id.split('/').map(shortName).join('/'))));

  // Any other number the runs log can be charted too (a newer trainer's, e.g. per-hop recall): picked by
  // kind and key, kept in the URL as more=train:key,eval:key.
  const more = (params.get('more') ?? '').split(',').filter(Boolean);
  const charted = new Set([...CHARTS.flatMap((c) => c.keys.map((k) => `${c.kind}:${k}`)), ...more]);
  const loggable = [...new Set(runs.flatMap((r) => r.metrics.flatMap((m) => Object.keys(m).filter((k) => k !== 'step' && typeof m[k] === 'number').map((k) => `${String(m['kind'])}:${k}`))))]
    .filter((k) => !charted.has(k))
    .sort();
  const moreCharts = more.map((k) => ({ title: k.replace(':', ' '), kind: k.slice(0, k.indexOf(':')), keys: [k.slice(k.indexOf(':') + 1)] }));
  const pick = loggable.length
    ? h('select', { id: 'more-metric', onchange: (e) => { const v = (e.target as HTMLSelectElement).value; if (v) go('/run', { runs: ids.join(','), x: params.get('x'), more: [...more, v].join(',') }); } }, h('option', { value: '' }, 'chart another metric…'), loggable.map((k) => h('option', { value: k }, k.replace(':', ' · '))))
    : null;

  const charts: Child[] = [];
  // Two charts a row, each as wide as its cell (the grid's gap and the figure's padding aside).
  const chartWidth = Math.max(340, Math.floor((app.clientWidth - 16) / 2) - 24);
  const hasMetrics = runs.some((r) => r.metrics.length > 0);
  if (hasMetrics) {
    for (const c of [...CHARTS, ...moreCharts]) {
      const series: Series[] = [];
      for (const run of runs) {
        const seen = promptsSeen(run.metrics);
        for (const key of c.keys) {
          const pts = run.metrics
            .filter((m) => m['kind'] === c.kind && typeof m[key] === 'number')
            .map((m) => [byPrompts ? (seen.get(m['step'] as number) ?? Number.NaN) : (m['step'] as number), m[key] as number] as [number, number])
            .filter((p) => Number.isFinite(p[0]));
          series.push({ label: `${runs.length > 1 ? `${run.info.id} ` : ''}${key}`, points: pts });
        }
      }
      // A chart no run has data for is left out (an SFT run logs loss, not rewards).
      if (series.some((x) => x.points.length > 0)) charts.push(lineChart(c.title, xLabel, series, chartWidth));
    }
  }
  const head = runs.map((r) =>
    h('div', { class: 'run-head' },
      h('h1', { title: r.info.id }, r.info.id === '.' ? r.info.name : r.info.id.split('/').map(shortName).join('/'), ' ', h('span', { class: `kind kind-${r.info.kind}` }, r.info.kind), ' ', h('span', { class: `state state-${r.info.state}` }, r.info.state)),
      h('p', { class: 'muted', title: `task set ${r.info.tasks ?? '—'} · model ${r.info.model ?? '—'}` }, `task set ${r.info.tasks ? shortSpec(r.info.tasks) : '—'} · model ${r.info.model ? shortSpec(r.info.model) : '—'} · ${r.info.steps} steps · ${r.info.rollouts} rollouts`),
      h('p', {}, h('a', { href: link('/rollouts', { run: r.info.id }), class: 'rollouts-link' }, 'rollouts →'), r.evalRuns.length ? [' · evals: ', r.evalRuns.map((e) => [h('a', { href: link('/run', { runs: e.id }), title: e.id }, e.name.replace(/^evals\//u, '')), ' '])] : null),
      warningsBanner(r.info.warnings),
    ),
  );
  const evalRuns = runs.filter((r) => r.info.kind === 'eval');
  let comparison: Child = null;
  if (evalRuns.length >= 2) {
    try {
      comparison = compareTable(await api('compare', new URLSearchParams(evalRuns.map((r) => ['run', r.info.id]))));
    } catch (err) {
      comparison = h('p', { class: 'error' }, `compare: ${(err as Error).message}`);
    }
  }
  return [
    head,
    h('div', { class: 'toolbar' }, hasMetrics ? toggle : null, add, pick),
    hasMetrics ? h('div', { class: 'charts' }, charts) : h('p', { class: 'muted' }, 'No per-step metrics (an eval run): see the table below.'),
    evalTable(runs),
    comparison,
  ];
}

function interval(ci: Interval | undefined): string {
  if (!ci) return '—';
  return ci.n >= 2 ? `${fmt(ci.mean)} [${fmt(ci.lo)}, ${fmt(ci.hi)}]` : fmt(ci.mean);
}

function evalTable(runs: RunData[]): Child {
  // Overlaid runs' columns carry the run's name too; one run's are named under it (evals/step-8, test).
  const cols = runs.flatMap((r) => r.evalTable.map((e) => ({ label: runs.length > 1 && e.run !== r.info.id ? `${shortName(r.info.id)} ${e.name}` : e.name, title: e.run, intervals: e.intervals })));
  if (cols.length === 0) return null;
  const metrics = [...new Set(cols.flatMap((c) => Object.keys(c.intervals)))];
  return h('section', {},
    h('h2', {}, 'Eval (mean, 95% bootstrap interval over tasks)'),
    h('table', { class: 'grid', id: 'eval-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'metric'), cols.map((c) => h('th', { title: c.title }, c.label)))),
      h('tbody', {}, metrics.map((m) => h('tr', {}, h('td', {}, m), cols.map((c) => h('td', { class: 'num' }, interval(c.intervals[m])))))),
    ),
  );
}

function compareTable(c: { sharedTasks: string[]; metrics: string[]; runs: { dir: string; values: Record<string, Interval>; diffs: Record<string, Interval & { shown: boolean }> }[] }): Child {
  return h('section', {},
    h('h2', {}, `Compare (paired over ${c.sharedTasks.length} shared tasks; later runs minus the first)`),
    h('table', { class: 'grid', id: 'compare-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'metric'), c.runs.map((r, i) => h('th', {}, i === 0 ? r.dir : `${r.dir} (Δ vs first)`)))),
      h('tbody', {}, c.metrics.map((m) => h('tr', {}, h('td', {}, m), c.runs.map((r, i) => {
        const d = r.diffs[m];
        return h('td', { class: 'num' }, interval(r.values[m]), i > 0 && d ? h('span', { class: d.shown ? 'diff shown' : 'diff ns' }, ` ${d.mean >= 0 ? '+' : ''}${fmt(d.mean)} [${fmt(d.lo)}, ${fmt(d.hi)}]${d.shown ? '' : ' n.s.'}`) : null);
      })))),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Rollouts table
// ---------------------------------------------------------------------------------------------

/** One row of the rollouts table: the server's index entry of a rollout. */
type Summary = RolloutSummary;

const FILTERS = ['task', 'step', 'group', 'minReward', 'maxReward', 'endReason', 'offform', 'minCurated', 'maxCurated'] as const;

async function rolloutsPage(p: URLSearchParams): Promise<Child> {
  const run = p.get('run') ?? '';
  const data = await api<{ total: number; page: number; pageSize: number; rows: Summary[]; endReasons: string[]; warnings: { line: number; reason: string }[]; indexingBytes: number }>('rollouts', p);
  const current = Object.fromEntries(p);
  const set = (changes: Record<string, string | number | undefined>) => go('/rollouts', { ...current, ...changes });
  const input = (name: string, label: string, width = 6) => h('label', {}, label, h('input', { name, size: width, value: p.get(name) ?? '' }));
  const form = h('form', { id: 'filters', onsubmit: (e) => {
    e.preventDefault();
    const fd = new FormData(e.target as HTMLFormElement);
    const next: Record<string, string | undefined> = { run, sort: p.get('sort') ?? undefined, desc: p.get('desc') ?? undefined, pageSize: p.get('pageSize') ?? undefined };
    for (const f of FILTERS) next[f] = String(fd.get(f) ?? '') || undefined;
    (document.activeElement as HTMLElement | null)?.blur();
    go('/rollouts', next);
  } },
    input('task', 'task ', 14), input('step', 'step ', 4), input('group', 'group ', 4), input('minReward', 'reward ≥ '), input('maxReward', '≤ '),
    h('label', {}, 'end ', h('select', { name: 'endReason' }, h('option', { value: '' }, 'any'), data.endReasons.map((e) => h('option', { value: e, selected: p.get('endReason') === e }, e)))),
    h('label', {}, 'off-form ', h('select', { name: 'offform' }, ['', 'yes', 'no'].map((v) => h('option', { value: v, selected: (p.get('offform') ?? '') === v }, v || 'any')))),
    input('minCurated', 'curated ≥ ', 3), input('maxCurated', '≤ ', 3),
    h('button', { type: 'submit' }, 'filter'),
  );
  const sort = p.get('sort') ?? 'n';
  const desc = p.get('desc') === '1';
  const col = (key: string, label: string) => h('th', { class: 'sortable', 'data-sort': key, onclick: () => set({ sort: key, desc: sort === key && !desc ? '1' : undefined, page: undefined }) }, label, sort === key ? (desc ? ' ▼' : ' ▲') : '');
  const pages = Math.max(1, Math.ceil(data.total / data.pageSize));
  const pager = h('div', { class: 'pager' },
    h('button', { type: 'button', disabled: data.page === 0, onclick: () => set({ page: data.page - 1 }) }, '← prev'),
    h('span', { id: 'page-info' }, ` page ${data.page + 1} of ${pages} · ${data.total} rollouts `),
    h('button', { type: 'button', disabled: data.page + 1 >= pages, onclick: () => set({ page: data.page + 1 }) }, 'next →'),
  );
  const groupLink = (r: Summary) => (r.group !== null ? link('/group', { run, step: r.step, group: r.group }) : link('/group', { run, task: r.taskId }));
  return [
    h('h1', { title: run }, `Rollouts of ${run.split('/').map(shortName).join('/')}`),
    data.indexingBytes > 0 ? h('p', { class: 'muted', id: 'indexing' }, `indexing… ${(data.indexingBytes / 1e6).toFixed(0)} MB of rollouts.jsonl to go; the table grows as it does`) : null,
    warningsBanner(data.warnings),
    form,
    pager,
    h('table', { class: 'grid', id: 'rollouts' },
      h('thead', {}, h('tr', {}, col('n', '#'), col('taskId', 'task'), col('step', 'step'), col('group', 'group'), col('sample', 'sample'), col('reward', 'reward'), col('advantage', 'adv.'), col('endReason', 'end'), col('offform', 'off-form'), col('curated', 'curated'), col('turns', 'turns'), h('th', {}, 'query'))),
      h('tbody', {}, data.rows.map((r) => h('tr', { 'data-n': r.n },
        h('td', {}, h('a', { href: link('/rollout', { run, n: r.n }), class: 'rollout-link' }, r.n)),
        h('td', {}, r.taskId), h('td', { class: 'num' }, r.step ?? '—'),
        h('td', {}, h('a', { href: groupLink(r), class: 'group-link' }, r.group ?? 'samples')),
        h('td', { class: 'num' }, r.sample), h('td', { class: 'num' }, fmt(r.reward)), h('td', { class: 'num' }, fmt(r.advantage)),
        h('td', {}, r.endReason), h('td', { class: 'num' }, r.offform), h('td', { class: 'num' }, r.curated), h('td', { class: 'num' }, r.turns),
        h('td', { class: 'query' }, r.query),
      ))),
    ),
  ];
}

// ---------------------------------------------------------------------------------------------
// One rollout
// ---------------------------------------------------------------------------------------------

type Turn = Pick<TurnRecord, 'index' | 'insertedTokens' | 'sampledTokens' | 'sampledLogprobs' | 'text' | 'calls' | 'curated'>;

const TOKEN_CAP = 3000;

function tokenStrip(ids: number[], decoded: string[] | null, logprobs: number[] | null, cls: string): HTMLElement {
  const box = h('div', { class: `tokens ${cls}` });
  ids.slice(0, TOKEN_CAP).forEach((id, i) => {
    const lp = logprobs?.[i];
    const span = h('span', { class: 'tok', title: `id ${id}${lp !== undefined ? ` · logprob ${lp.toFixed(3)} · p ${Math.exp(lp).toFixed(3)}` : ''}` }, decoded ? decoded[i]! : `${id} `);
    // Shade by surprise: a sure token (p near 1) stays clear, an unlikely one turns red.
    if (lp !== undefined) span.style.backgroundColor = `rgba(214, 39, 40, ${(1 - Math.exp(lp)).toFixed(3)})`;
    box.appendChild(span);
  });
  if (ids.length > TOKEN_CAP) box.appendChild(h('span', { class: 'muted' }, ` … ${ids.length - TOKEN_CAP} more tokens`));
  return box;
}

/** Facts are named F1, F2, ... on the rollout page: the curated set and the hits refer to them so. */
function factLabel(i: number): string {
  return `F${i + 1}`;
}

/** A chunk id with its number in the episode: `#3 d01bbd701a`. */
function numbered(c: ChunkInfo | undefined, id: string): string {
  return c?.n ? `#${c.n} ${id}` : id;
}

/** The facts a chunk supports, as F-labels with the fact's text in the title. */
function factCell(ids: number[], facts: { text: string }[] | null): Child {
  if (ids.length === 0) return h('span', { class: 'muted' }, '—');
  return ids.map((i) => [h('span', { class: 'fact-tag', title: facts?.[i]?.text ?? '' }, factLabel(i)), ' ']);
}

/** The curated set: each chunk's number, title and id, and the task's facts it covers. */
function curatedTable(ids: string[], chunks: Map<string, ChunkInfo>, facts: { text: string }[] | null): Child {
  if (ids.length === 0) return h('p', { class: 'curated' }, '(empty)');
  return h('table', { class: 'grid small', id: 'curated' },
    h('thead', {}, h('tr', {}, ['#', 'title', 'id', 'covers'].map((t) => h('th', {}, t)))),
    h('tbody', {}, ids.map((id) => {
      const c = chunks.get(id);
      return h('tr', { 'data-id': id, class: c && c.facts.length ? 'gold' : '' },
        h('td', { class: 'num' }, c?.n ?? '—'),
        h('td', {}, c?.title ?? h('span', { class: 'muted' }, '(not shown in a result)')),
        h('td', {}, h('code', {}, id)),
        h('td', { class: 'covers' }, c ? [factCell(c.facts, facts), c.facts.length ? facts?.filter((_, i) => c.facts.includes(i)).map((f) => h('span', { class: 'muted' }, ` ${f.text}`)) : null] : '—'),
      );
    })),
  );
}

/** The fields of the rollout record this page knows and shows (or folds into the ones it shows). */
const SHOWN_FIELDS = new Set(['version', 'id', 'taskId', 'agent', 'env', 'sample', 'query', 'turns', 'curated', 'trajectory', 'read', 'answer', 'endReason', 'error', 'promptTokens', 'completionTokens', 'wallMs', 'startedAt', 'reward', 'budgets', 'step', 'group', 'advantage']);

/**
 * Fields of the record this page does not know (a newer writer's, e.g. per-hop numbers), shown as
 * they are: a number formatted, an object of numbers as its pairs, anything else as JSON text.
 */
function moreFields(r: Record<string, unknown>): Child {
  const extra = Object.entries(r).filter(([k]) => !SHOWN_FIELDS.has(k));
  if (extra.length === 0) return null;
  const value = (v: unknown): Child => {
    if (typeof v === 'number') return fmt(v);
    if (typeof v === 'string') return v;
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'number')) {
      return Object.entries(v as Record<string, number>).map(([k, x]) => h('span', { class: 'metric' }, `${k} ${fmt(x)}`));
    }
    return h('code', {}, JSON.stringify(v));
  };
  return [
    h('h2', {}, 'More fields of this rollout'),
    h('table', { class: 'grid small', id: 'more-fields' }, h('tbody', {}, extra.map(([k, v]) => h('tr', { 'data-field': k }, h('td', {}, k), h('td', {}, value(v)))))),
  ];
}

/** A tool result: hits as a table, a read document as its title and text, anything else as the raw text. */
function resultView(result: CallRecord['result'], shown: ShownResult | null, chunks: Map<string, ChunkInfo>, facts: { text: string }[] | null): Child {
  const head = `result: ${result.outcome}${result.errorKind ? ` (${result.errorKind})` : ''} · ${result.chunkIds.length} chunks`;
  const raw = h('pre', { class: 'result-text' }, result.content);
  if (shown === null) return h('details', { class: 'result', open: true }, h('summary', {}, head), raw);
  const rawFold = h('details', { class: 'raw-result' }, h('summary', { class: 'muted' }, 'raw result'), raw);
  if (shown.kind === 'document') {
    return h('details', { class: 'result', open: true }, h('summary', {}, head),
      h('div', { class: 'document' }, h('div', {}, h('strong', {}, `#${shown.n ?? '?'} `), shown.title ?? '', ' ', h('code', {}, shown.id)), h('pre', { class: 'result-text' }, shown.text)),
      rawFold);
  }
  const fields = Object.entries(shown.fields).map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' · ');
  const hasScore = shown.hits.some((x) => x.score !== null);
  return h('details', { class: 'result', open: true }, h('summary', {}, `${head}${fields ? ` · ${fields}` : ''}`),
    shown.hits.length === 0 ? h('p', { class: 'muted' }, 'no hits') : h('table', { class: 'grid small hits' },
      h('thead', {}, h('tr', {}, ['#', 'title', 'id', ...(hasScore ? ['score'] : []), 'snippet', 'facts'].map((t) => h('th', {}, t)))),
      h('tbody', {}, shown.hits.map((x) => {
        const supports = chunks.get(x.id)?.facts ?? [];
        return h('tr', { 'data-id': x.id, class: supports.length ? 'gold' : '' },
          h('td', { class: 'num' }, x.n ?? '—'),
          h('td', { class: 'hit-title' }, x.title ?? ''),
          h('td', {}, h('code', {}, x.id)),
          hasScore ? h('td', { class: 'num' }, fmt(x.score)) : null,
          h('td', { class: 'snippet' }, x.snippet ?? ''),
          h('td', {}, factCell(supports, facts)),
        );
      })),
    ),
    rawFold);
}

async function rolloutPage(p: URLSearchParams): Promise<Child> {
  const run = p.get('run') ?? '';
  const d = await api<{
    n: number;
    summary: Summary;
    rollout: { id: string; taskId: string; query: string; agent: string; turns: Turn[]; curated: string[]; trajectory: string[]; endReason: string; error?: string; answer?: string; reward?: { total: number; parts: Record<string, number>; weights: Record<string, number> }; step?: number; group?: number; advantage?: number; sample: number };
    facts: { text: string; chunkIds: string[]; covered: boolean; seen: boolean; hop: number | null }[] | null;
    chunks: ChunkInfo[];
    results: (ShownResult | null)[][];
    tasksError: string | null;
    decodedWith: string | null;
    /** Why the ids are not decoded (the checkpoint file that is missing), when they are not. */
    undecoded: string | null;
    tokens: { inserted: string[] | null; sampled: string[] | null }[];
  }>('rollout', { run, n: p.get('n') ?? '' });
  const r = d.rollout;
  const nav = h('p', { class: 'toolbar' },
    d.n > 0 ? h('a', { href: link('/rollout', { run, n: d.n - 1 }) }, '← previous') : null, ' ',
    h('a', { href: link('/rollout', { run, n: d.n + 1 }) }, 'next →'), ' · ',
    h('a', { href: r.group !== undefined ? link('/group', { run, step: r.step, group: r.group }) : link('/group', { run, task: r.taskId }), id: 'open-group' }, r.group !== undefined ? `group ${r.group} of step ${r.step}` : 'all samples of this task'),
  );
  const chunks = new Map(d.chunks.map((c) => [c.id, c]));
  const facts = d.facts
    ? h('ul', { class: 'facts' }, d.facts.map((f, i) => h('li', { class: f.covered ? 'covered' : 'missed' }, `${f.covered ? '✓' : '✗'} ${factLabel(i)}${typeof f.hop === 'number' ? ` · hop ${f.hop}` : ''} `, f.text, h('span', { class: 'muted' }, ` (${f.chunkIds.map((id) => numbered(chunks.get(id), id)).join(', ')}${f.seen && !f.covered ? '; seen in results, not curated' : ''})`))))
    : h('p', { class: 'muted' }, `facts unavailable: ${d.tasksError ?? ''}`);
  const reward = r.reward
    ? h('table', { class: 'grid small', id: 'reward-parts' },
        h('thead', {}, h('tr', {}, h('th', {}, 'part'), h('th', {}, 'value'), h('th', {}, 'weight'), h('th', {}, 'contribution'))),
        h('tbody', {},
          Object.entries(r.reward.parts).map(([k, v]) => h('tr', {}, h('td', {}, k), h('td', { class: 'num' }, fmt(v)), h('td', { class: 'num' }, fmt(r.reward!.weights[k] ?? 0)), h('td', { class: 'num' }, fmt(v * (r.reward!.weights[k] ?? 0))))),
          h('tr', { class: 'total' }, h('td', {}, 'total'), h('td', {}), h('td', {}), h('td', { class: 'num' }, fmt(r.reward.total))),
        ))
    : h('p', { class: 'muted' }, 'not scored');
  let prev: string[] = [];
  const turns = r.turns.map((t, i) => {
    const now = t.curated ?? [];
    const added = now.filter((x) => !prev.includes(x));
    const removed = prev.filter((x) => !now.includes(x));
    prev = now;
    const tok = d.tokens[i];
    return h('section', { class: 'turn', 'data-turn': i },
      h('h3', {}, `turn ${i}`, h('span', { class: 'muted' }, ` · ${t.insertedTokens?.length ?? 0} inserted, ${t.sampledTokens?.length ?? 0} sampled tokens`)),
      h('pre', { class: 'model-text' }, t.text),
      t.calls.map((c, j) => h('div', { class: `call status-${c.status}` },
        h('div', {}, h('span', { class: `badge ${c.status}` }, c.status), ' ', h('code', {}, c.name), ' ', h('code', { class: 'args' }, JSON.stringify(c.arguments))),
        c.raw !== undefined && c.status !== 'ok' ? h('div', {}, h('span', { class: 'muted' }, 'raw: '), h('code', { class: 'raw' }, c.raw)) : null,
        c.tokenSpan && c.status !== 'ok' ? h('div', {}, h('span', { class: 'muted' }, 'raw tokens: '), tokenStrip(t.sampledTokens.slice(c.tokenSpan[0], c.tokenSpan[1]), tok?.sampled?.slice(c.tokenSpan[0], c.tokenSpan[1]) ?? null, t.sampledLogprobs?.slice(c.tokenSpan[0], c.tokenSpan[1]) ?? null, 'raw-tokens')) : null,
        resultView(c.result, d.results[i]?.[j] ?? null, chunks, d.facts),
      )),
      h('p', { class: 'curated-change' }, `curated: ${now.length}`, added.length ? h('span', { class: 'added' }, ` +${added.join(' +')}`) : null, removed.length ? h('span', { class: 'removed' }, ` −${removed.join(' −')}`) : null),
      h('details', { class: 'token-view' },
        h('summary', {}, 'tokens'),
        // A long insertion (turn 0: the whole prompt with the tool declarations) folds away.
        (t.insertedTokens?.length ?? 0) > 300
          ? h('details', { class: 'inserted-fold' }, h('summary', { class: 'muted' }, `inserted (template, tool results; not trained on): ${t.insertedTokens.length} tokens`), tokenStrip(t.insertedTokens, tok?.inserted ?? null, null, 'inserted'))
          : [h('div', { class: 'muted' }, 'inserted (template, tool results; not trained on):'), tokenStrip(t.insertedTokens ?? [], tok?.inserted ?? null, null, 'inserted')],
        h('div', { class: 'muted' }, 'sampled (shaded by sampler logprob: the redder, the less likely):'),
        tokenStrip(t.sampledTokens ?? [], tok?.sampled ?? null, t.sampledLogprobs ?? null, 'sampled'),
      ),
    );
  });
  return [
    h('h1', {}, `Rollout ${d.n}: ${r.taskId} #${r.sample}`),
    nav,
    h('p', { class: 'query' }, h('strong', {}, 'query: '), r.query),
    h('p', { class: 'muted' }, `${r.agent} · end: ${r.endReason}${r.error ? ` (${r.error})` : ''} · ${r.turns.length} turns${r.step !== undefined ? ` · step ${r.step}, group ${r.group}, advantage ${fmt(r.advantage)}` : ''}${d.decodedWith ? ` · tokens decoded with ${d.decodedWith}` : ` · token ids shown (${d.undecoded ?? 'no tokenizer for this run here'})`}`),
    r.answer !== undefined ? h('p', {}, h('strong', {}, 'answer: '), r.answer) : null,
    h('div', { class: 'cols' }, h('section', {}, h('h2', {}, 'Facts'), facts), h('section', {}, h('h2', {}, `Reward ${r.reward ? fmt(r.reward.total) : ''}`), reward)),
    h('h2', {}, `Curated set (${new Set(r.curated).size})`),
    curatedTable([...new Set(r.curated)], chunks, d.facts),
    moreFields(r),
    h('h2', {}, 'Turns'),
    turns,
  ];
}

// ---------------------------------------------------------------------------------------------
// One group and the reward-shape lab
// ---------------------------------------------------------------------------------------------

interface GroupData {
  taskId: string;
  query: string;
  step: number | null;
  group: number | null;
  kind: string;
  members: (Summary & { parts: Record<string, number>; curatedIds: string[]; curatedChunks: ChunkInfo[]; finalText: string })[];
  defaults: { weights: Record<string, number>; beta: number; advantage: string };
  parts: string[];
  lab: { source: string; allEqual: boolean; rows: { id: string; sample: number; reward: number; advantage: number; recordedReward: number | null; recordedAdvantage: number | null }[] };
}

async function groupPage(p: URLSearchParams): Promise<Child> {
  const run = p.get('run') ?? '';
  const base = { run, step: p.get('step') ?? undefined, group: p.get('group') ?? undefined, task: p.get('task') ?? undefined };
  const g = await api<GroupData>('group', base);
  const cards = h('div', { class: 'group-cards' }, g.members.map((m) => h('div', { class: 'card', 'data-sample': m.sample },
    h('h3', {}, h('a', { href: link('/rollout', { run, n: m.n }) }, `sample ${m.sample}`)),
    h('p', {}, `reward ${fmt(m.reward)} · advantage ${fmt(m.advantage)}`),
    h('p', { class: 'muted' }, `${m.endReason} · ${m.turns} turns · ${m.offform} off-form · curated ${m.curated}`),
    h('table', { class: 'grid small' }, h('tbody', {}, Object.entries(m.parts).map(([k, v]) => h('tr', {}, h('td', {}, k), h('td', { class: 'num' }, fmt(v)))))),
    m.curatedChunks.length
      ? h('ul', { class: 'curated-titles' }, m.curatedChunks.map((c) => h('li', { 'data-id': c.id, title: c.id }, c.n !== null ? `#${c.n} ` : '', c.title ?? c.id, c.facts.length ? [' ', factCell(c.facts, null)] : null)))
      : h('p', { class: 'curated' }, '(empty)'),
    h('pre', { class: 'model-text' }, m.finalText),
  )));

  const labBody = h('tbody', {});
  const note = h('p', { class: 'muted', id: 'lab-note' });
  const fill = (lab: GroupData['lab']) => {
    clear(labBody);
    for (const row of lab.rows) {
      const moved = row.recordedAdvantage === null || Math.abs(row.advantage - row.recordedAdvantage) > 1e-9;
      labBody.appendChild(h('tr', { 'data-sample': row.sample },
        h('td', {}, row.sample), h('td', { class: 'num' }, fmt(row.recordedReward)), h('td', { class: 'num lab-reward' }, fmt(row.reward)),
        h('td', { class: 'num' }, fmt(row.recordedAdvantage)), h('td', { class: `num lab-adv${moved ? ' moved' : ''}` }, fmt(row.advantage, 4)),
      ));
    }
    note.textContent = `recomputed with ${lab.source}${lab.allEqual ? ' · all rewards equal: this group carries no gradient' : ''}`;
  };
  fill(g.lab);

  const form = h('form', { id: 'lab', onsubmit: (e) => e.preventDefault() });
  const fields: Record<string, HTMLInputElement | HTMLSelectElement> = {};
  const beta = h('input', { name: 'beta', type: 'number', step: '0.5', min: '0.1', value: g.defaults.beta });
  fields['beta'] = beta;
  const adv = h('select', { name: 'advantage' }, ['dr-grpo', 'grpo'].map((a) => h('option', { value: a, selected: g.defaults.advantage === a }, a)));
  fields['advantage'] = adv;
  form.append(
    h('label', {}, 'beta ', beta),
    h('label', {}, 'advantage ', adv),
    ...g.parts.map((part) => {
      const input = h('input', { name: `w.${part}`, type: 'number', step: '0.05', value: g.defaults.weights[part] ?? 0, 'data-part': part });
      fields[`w.${part}`] = input;
      return h('label', {}, `${part} `, input);
    }),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  let asked = 0;
  form.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const mine = ++asked;
      const q = new URLSearchParams(Object.entries(base).filter(([, v]) => v !== undefined) as [string, string][]);
      for (const [k, el] of Object.entries(fields)) if (el.value !== '') q.set(k, el.value);
      try {
        const next = await api<GroupData>('group', q);
        if (mine === asked) fill(next.lab);
      } catch (err) {
        note.textContent = `lab: ${(err as Error).message}`;
      }
    }, 150);
  });

  return [
    h('h1', {}, g.group !== null ? `Group ${g.group} of step ${g.step}` : `Samples of ${g.taskId}`),
    h('p', { class: 'query' }, h('strong', {}, `${g.taskId}: `), g.query),
    cards,
    h('section', { class: 'lab' },
      h('h2', {}, 'Reward-shape lab'),
      h('p', { class: 'muted' }, 'Score this group again under another rubric and see the advantages GRPO would have used. Nothing is re-sampled.'),
      form,
      h('table', { class: 'grid', id: 'lab-table' }, h('thead', {}, h('tr', {}, ['sample', 'reward (run)', 'reward (lab)', 'advantage (run)', 'advantage (lab)'].map((t) => h('th', {}, t)))), labBody),
      note,
    ),
  ];
}

window.addEventListener('hashchange', () => void render());
void render();
setInterval(() => void poll(), POLL_MS);
