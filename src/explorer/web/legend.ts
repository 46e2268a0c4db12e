/**
 * What a chart's legend shows for one series. uPlot's own formatter shows "--" whenever the cursor
 * is off the chart, so a page of charts reads as blank until hovered; this shows the value under
 * the cursor while hovering and otherwise the series' latest value (the last x with a point), which
 * is the number a running or finished run is read by.
 */
const NUMBER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

/** The last non-null value of a column, or null when it has none. */
export function latestValue(col: readonly (number | null)[]): number | null {
  for (let i = col.length - 1; i >= 0; i--) if (col[i] != null) return col[i]!;
  return null;
}

/** A legend value function for uPlot's `series.value`: `idx` is null when the cursor is off the chart. */
export function legendValue(col: readonly (number | null)[]): (u: unknown, value: number | null, series: number, idx: number | null | undefined) => string {
  return (_u, value, _series, idx) => {
    const shown = idx == null ? latestValue(col) : value;
    return shown == null ? '--' : NUMBER.format(shown);
  };
}
