import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.js';
import { legendValue } from './legend.js';

export interface Series {
  label: string;
  points: [number, number][];
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];

/**
 * One line chart; series share the x axis (step or prompts seen), so their x values are merged
 * and a series without a point at some x leaves a gap that the line spans.
 */
export function lineChart(title: string, xLabel: string, series: Series[], width = 440, height = 230): HTMLElement {
  const box = h('figure', { class: 'chart', 'data-chart': title }, h('figcaption', {}, title));
  const live = series.filter((s) => s.points.length > 0);
  if (live.length === 0) {
    box.appendChild(h('p', { class: 'muted' }, 'no data yet'));
    return box;
  }
  const xs = [...new Set(live.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const ys = live.map((s) => {
    const col: (number | null)[] = xs.map(() => null);
    for (const [x, y] of s.points) col[at.get(x)!] = y;
    return col;
  });
  const opts: uPlot.Options = {
    width,
    height,
    scales: { x: { time: false } },
    axes: [{ label: xLabel }, {}],
    // Off the chart, the legend reads each series' latest value (and the x axis its last step), not "--".
    series: [{ label: xLabel, value: legendValue(xs) }, ...live.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length]!, width: 2, spanGaps: true, points: { show: xs.length < 40 }, value: legendValue(ys[i]!) }))],
    legend: { live: true },
  };
  new uPlot(opts, [xs, ...ys] as uPlot.AlignedData, box);
  return box;
}
