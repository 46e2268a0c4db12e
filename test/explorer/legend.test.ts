import { describe, expect, it } from 'vitest';
import { latestValue, legendValue } from '../../src/explorer/web/legend.js';

describe('chart legend values', () => {
  it('show the latest value off the chart and the hovered one on it, never "--" for a series with data', () => {
    // A series with gaps: eval points every other step, the last step without one.
    const col = [0.1, null, 0.25, null, 0.3456, null];
    expect(latestValue(col)).toBe(0.3456);
    const value = legendValue(col);
    expect(value(undefined, null, 1, null)).toBe('0.346');
    expect(value(undefined, null, 1, undefined)).toBe('0.346');
    expect(value(undefined, 0.25, 1, 2)).toBe('0.25');
    // Hovering a step the series has no point at is a gap, as uPlot shows it.
    expect(value(undefined, null, 1, 1)).toBe('--');
    expect(legendValue([null, null])(undefined, null, 1, null)).toBe('--');
    expect(legendValue([0, 8, 16])(undefined, null, 0, null)).toBe('16');
  });
});
