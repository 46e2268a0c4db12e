/**
 * The curves that tell a training run's story (train reward, share of valid rollouts, entropy,
 * eval F1 against the step, plus eval reward and curated-set size), drawn as one standalone SVG from a run's metrics.jsonl lines, so a
 * README or a report can show them without a browser. The explorer draws the same series live.
 */

export interface CurvePanel {
  title: string;
  /** Which lines of metrics.jsonl, and which field of them. */
  kind: 'train' | 'eval';
  field: string;
}

/** Train reward, valid share, entropy and mixed groups, with the eval reward, the curated-set size and the searches per episode that explain them. */
export const SEED_CURVES: readonly CurvePanel[] = [
  { title: 'train reward', kind: 'train', field: 'reward' },
  { title: 'eval reward', kind: 'eval', field: 'reward' },
  { title: 'valid rollouts (share)', kind: 'train', field: 'valid_share' },
  { title: 'entropy (nats / token)', kind: 'train', field: 'entropy' },
  { title: 'eval F1', kind: 'eval', field: 'f1' },
  { title: 'curated-set size (train)', kind: 'train', field: 'curated_size' },
  { title: 'searches per episode (train)', kind: 'train', field: 'searches_per_episode' },
];

type MetricsLine = Record<string, unknown>;

const W = 320, H = 200, PAD = { left: 46, right: 12, top: 26, bottom: 30 };

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A short label for an axis value: 3 significant digits, no trailing zeros. */
function tick(v: number): string {
  return Number(v.toPrecision(3)).toString();
}

/** [x, y] points of one series, by step, skipping lines without a finite value. */
export function seriesOf(lines: readonly MetricsLine[], panel: CurvePanel): [number, number][] {
  const points: [number, number][] = [];
  for (const line of lines) {
    if (line['kind'] !== panel.kind) continue;
    const x = line['step'], y = line[panel.field];
    if (typeof x === 'number' && typeof y === 'number' && Number.isFinite(y)) points.push([x, y]);
  }
  return points.sort((a, b) => a[0] - b[0]);
}

function panelSvg(panel: CurvePanel, points: [number, number][], ox: number, oy: number): string {
  const iw = W - PAD.left - PAD.right, ih = H - PAD.top - PAD.bottom;
  const parts = [`<g transform="translate(${ox},${oy})">`, `<text x="${PAD.left}" y="16" class="t">${escapeXml(panel.title)}</text>`];
  parts.push(`<rect x="${PAD.left}" y="${PAD.top}" width="${iw}" height="${ih}" class="box"/>`);
  if (points.length === 0) {
    parts.push(`<text x="${PAD.left + iw / 2}" y="${PAD.top + ih / 2}" class="n" text-anchor="middle">no data</text></g>`);
    return parts.join('');
  }
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
  if (y0 === y1) [y0, y1] = [y0 - Math.max(Math.abs(y0) * 0.1, 0.05), y1 + Math.max(Math.abs(y1) * 0.1, 0.05)];
  const margin = (y1 - y0) * 0.08;
  y0 -= margin;
  y1 += margin;
  const px = (x: number) => PAD.left + ((x - x0) / (x1 - x0)) * iw;
  const py = (y: number) => PAD.top + ih - ((y - y0) / (y1 - y0)) * ih;
  for (const v of [y0, (y0 + y1) / 2, y1]) {
    parts.push(`<line x1="${PAD.left}" x2="${PAD.left + iw}" y1="${py(v).toFixed(1)}" y2="${py(v).toFixed(1)}" class="g"/>`);
    parts.push(`<text x="${PAD.left - 4}" y="${(py(v) + 4).toFixed(1)}" class="n" text-anchor="end">${tick(v)}</text>`);
  }
  for (const v of [x0, x1]) parts.push(`<text x="${px(v).toFixed(1)}" y="${H - 10}" class="n" text-anchor="middle">${tick(v)}</text>`);
  parts.push(`<text x="${PAD.left + iw / 2}" y="${H - 10}" class="n" text-anchor="middle">step</text>`);
  const path = points.map(([x, y], i) => `${i ? 'L' : 'M'}${px(x).toFixed(1)},${py(y).toFixed(1)}`).join('');
  parts.push(`<path d="${path}" class="c"/>`);
  for (const [x, y] of points) parts.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="2.2" class="d"/>`);
  parts.push('</g>');
  return parts.join('');
}

/** An SVG of the panels (two per row) from a run's metrics.jsonl lines. */
export function curvesSvg(lines: readonly MetricsLine[], options: { title?: string; panels?: readonly CurvePanel[] } = {}): string {
  const panels = options.panels ?? SEED_CURVES;
  const cols = 2, rows = Math.ceil(panels.length / cols);
  const top = options.title ? 24 : 0;
  const width = cols * W, height = rows * H + top;
  const style = [
    'text{font-family:system-ui,sans-serif;fill:#222}',
    '.t{font-size:13px;font-weight:600}',
    '.n{font-size:10px;fill:#555}',
    '.box{fill:#fff;stroke:#bbb}',
    '.g{stroke:#eee}',
    '.c{fill:none;stroke:#1f6feb;stroke-width:1.8}',
    '.d{fill:#1f6feb}',
  ].join('');
  const body = panels.map((p, i) => panelSvg(p, seriesOf(lines, p), (i % cols) * W, top + Math.floor(i / cols) * H));
  const title = options.title ? `<text x="12" y="17" class="t">${escapeXml(options.title)}</text>` : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><style>${style}</style><rect width="100%" height="100%" fill="#fafafa"/>${title}${body.join('')}</svg>\n`;
}
