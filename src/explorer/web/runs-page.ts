import type { RunInfo } from './api.js';
import { fmt, h, type Child } from './dom.js';
import { shortName, shortSpec, shortTime, seriesOf } from './names.js';
import { go, link } from './nav.js';

/**
 * The front page: runs as a tree. A folder of runs that is not a run itself (a demo's) is one
 * group row with its runs under it; a run's sub-runs are rows under it, and its eval points
 * (evals/step-N, evals/epoch-N) one line of links in numeric order instead of a row each.
 */

const HEADLINE = ['reward', 'f1', 'recall', 'precision', 'valid_share', 'valid', 'entropy'];

/** Groups the user opened or closed, and the runs ticked for overlay: kept across the redraws a poll makes. */
const groupOpen = new Map<string, boolean>();
const picked = new Set<string>();

interface Tree {
  children: Map<string, RunInfo[]>;
  evals: Map<string, RunInfo[]>;
}

/** The path of a sub-run under its parent run (`evals/step-8`, `test`). */
function nameUnder(r: RunInfo): string {
  return r.parent === null ? r.id : r.parent === '.' ? r.id : r.id.slice(r.parent.length + 1);
}

/** An eval point (evals/NAME under its run) with no runs of its own under it: a link, not a row. */
function isEvalPoint(r: RunInfo, parents: ReadonlySet<string>): boolean {
  return r.parent !== null && /^evals\/[^/]+$/u.test(nameUnder(r)) && !parents.has(r.id);
}

function tree(runs: RunInfo[]): Tree {
  const children = new Map<string, RunInfo[]>();
  const evals = new Map<string, RunInfo[]>();
  const parents = new Set(runs.map((r) => r.parent).filter((p): p is string => p !== null));
  for (const r of runs) {
    if (r.parent === null) continue;
    const into = isEvalPoint(r, parents) ? evals : children;
    into.set(r.parent, [...(into.get(r.parent) ?? []), r]);
  }
  return { children, evals };
}

/** The eval points of a run as one line: `evals · step: 0 8 16 24`, each number a link to that eval. */
function evalLine(points: RunInfo[]): Child {
  if (points.length === 0) return null;
  const named = points.map((p) => ({ p, name: nameUnder(p).slice('evals/'.length) })).map((x) => ({ ...x, series: seriesOf(x.name) }));
  const words = [...new Set(named.map((x) => x.series?.word ?? ''))];
  const sameSeries = words.length === 1 && words[0] !== '';
  // The server lists them in natural order; sort again so the line never depends on it.
  named.sort((a, b) => (a.series && b.series ? a.series.n - b.series.n : a.name.localeCompare(b.name, 'en', { numeric: true })));
  return h('div', { class: 'evals' },
    h('span', { class: 'muted' }, sameSeries ? `evals · ${words[0]}:` : 'evals:'),
    named.map((x) => [' ', h('a', {
      href: link('/run', { runs: x.p.id }),
      class: 'eval-link',
      'data-run': x.p.id,
      title: `${x.p.id}${typeof x.p.headline['reward'] === 'number' ? ` · reward ${fmt(x.p.headline['reward'])}` : ''}`,
    }, sameSeries ? String(x.series!.n) : x.name)]),
  );
}

function runRow(r: RunInfo, depth: number, t: Tree, group: string | null): Child {
  // A sub-run by its path under its run, a run in a group by its path in the group, any other run by its id.
  const label = r.parent !== null ? nameUnder(r) : r.group !== null ? r.id.slice(r.group.length + 1) : shortName(r.id === '.' ? r.name : r.id);
  const row = h('tr', { 'data-run': r.id, class: `run depth-${depth}`, ...(group !== null ? { 'data-in-group': group } : {}) },
    h('td', {}, h('input', { type: 'checkbox', 'aria-label': `select ${r.id}`, checked: picked.has(r.id), onchange: (e) => ((e.target as HTMLInputElement).checked ? picked.add(r.id) : picked.delete(r.id)) })),
    h('td', { class: 'run-name' }, h('a', { href: link('/run', { runs: r.id }), class: 'run-link', title: r.id }, label), evalLine(t.evals.get(r.id) ?? [])),
    h('td', {}, h('span', { class: `state state-${r.state}` }, r.state)),
    h('td', {}, h('span', { class: `kind kind-${r.kind}` }, r.kind)),
    h('td', { class: 'col-tasks', title: r.tasks ?? '' }, r.tasks ? shortSpec(r.tasks) : '—'),
    h('td', { class: 'model col-model', title: r.model ?? '' }, r.model ? shortSpec(r.model) : '—'),
    h('td', { class: 'num' }, r.steps),
    h('td', { class: 'num' }, r.indexingBytes > 0 ? `${r.rollouts}+ (indexing)` : r.rollouts),
    h('td', { class: 'headline' }, HEADLINE.filter((k) => k in r.headline).slice(0, 4).map((k) => [h('span', { class: 'metric' }, `${k} ${fmt(r.headline[k])}`), ' '])),
    h('td', { class: 'col-started' }, r.startedAt ? shortTime(r.startedAt) : '—'),
    h('td', {}, r.warnings.length ? h('span', { class: 'warn', title: r.warnings.map((w) => `${w.file}:${w.line} ${w.reason}`).join('\n') }, `⚠ ${r.warnings.length}`) : ''),
  );
  return [row, (t.children.get(r.id) ?? []).map((c) => runRow(c, depth + 1, t, group))];
}

/** A group's state: running while any run in it runs, stopped when one stopped, else done. */
function groupState(runs: RunInfo[]): RunInfo['state'] {
  return runs.some((r) => r.state === 'running') ? 'running' : runs.some((r) => r.state === 'stopped') ? 'stopped' : 'done';
}

export function runsPage(runs: RunInfo[], redraw: () => void): Child {
  if (runs.length === 0) return h('p', { class: 'muted' }, 'No run directories here yet (a run directory holds a config.json).');
  for (const id of picked) if (!runs.some((r) => r.id === id)) picked.delete(id);
  const overlay = h('button', { type: 'button', id: 'overlay', onclick: () => picked.size && go('/run', { runs: [...picked].join(',') }) }, 'Overlay selected runs');
  const t = tree(runs);
  const top = runs.filter((r) => r.parent === null);
  const groups = new Map<string, RunInfo[]>();
  for (const r of runs) if (r.group !== null) groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
  const started = (rs: RunInfo[]) => rs.map((r) => r.startedAt ?? '').sort()[0] ?? '';
  // Open by default: the newest group and any group still running; the others fold to one row.
  const newest = [...groups].sort((a, b) => started(b[1]).localeCompare(started(a[1])))[0]?.[0];
  const isOpen = (g: string, rs: RunInfo[]) => groupOpen.get(g) ?? (g === newest || groupState(rs) === 'running');

  const bodies: Child[] = [];
  const drawn = new Set<string>();
  for (const r of top) {
    if (r.group === null) {
      bodies.push(h('tbody', {}, runRow(r, 0, t, null)));
      continue;
    }
    if (drawn.has(r.group)) continue;
    drawn.add(r.group);
    const g = r.group;
    const members = groups.get(g)!;
    const open = isOpen(g, members);
    const evalPoints = members.filter((m) => m.parent !== null && t.evals.get(m.parent)?.includes(m)).length;
    const subRuns = members.length - evalPoints;
    const head = h('tr', { class: 'group-row', 'data-group': g },
      h('td', {}, h('button', { type: 'button', class: 'toggle', 'aria-expanded': String(open), 'aria-label': `${open ? 'fold' : 'unfold'} ${g}`, onclick: () => { groupOpen.set(g, !open); redraw(); } }, open ? '▾' : '▸')),
      h('td', { class: 'run-name', title: g }, h('strong', {}, shortName(g)), h('div', { class: 'muted group-count' }, `${subRuns} runs${evalPoints ? `, ${evalPoints} eval points` : ''}`)),
      h('td', {}, h('span', { class: `state state-${groupState(members)}` }, groupState(members))),
      h('td', {}), h('td', { class: 'col-tasks' }), h('td', { class: 'col-model' }), h('td', {}), h('td', {}), h('td', {}),
      h('td', { class: 'col-started' }, started(members) ? shortTime(started(members)) : '—'),
      h('td', {}),
    );
    const inside = open ? top.filter((m) => m.group === g).map((m) => runRow(m, 1, t, g)) : null;
    bodies.push(h('tbody', { class: 'group' }, head, inside));
  }
  return [
    h('h1', {}, 'Runs'),
    h('div', { class: 'table-scroll' },
      h('table', { class: 'grid', id: 'runs' },
        h('thead', {}, h('tr', {}, ['', 'run', 'state', 'kind', 'task set', 'model', 'steps', 'rollouts', 'headline', 'started', ''].map((label, i) => h('th', { class: ['', '', '', '', 'col-tasks', 'col-model', '', '', '', 'col-started', ''][i]! }, label)))),
        bodies,
      ),
    ),
    h('p', {}, overlay),
  ];
}
