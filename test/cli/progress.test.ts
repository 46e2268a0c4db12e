import { describe, expect, it } from 'vitest';
import { liveProgress, progressText } from '../../src/cli/progress.js';

/** A stream that records what is written, a terminal or not. */
function sink(isTTY: boolean, columns = 80) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns, write: (s: string) => writes.push(s) } };
}

describe('the progress line', () => {
  it('shows the share done, the count, the rate and the time left', () => {
    expect(progressText('eval', 'rollouts', 60, 2, { total: 240 })).toBe('eval  [######..................]  25%  60/240 rollouts  30.0/s  ETA 6s  (2.0 s)');
    // Measured in bytes, counted in chunks: the ETA comes from the share done.
    expect(progressText('index', 'chunks', 5000, 10, { fraction: 0.5 })).toMatch(/^index {2}\[#{12}\.{12}\] {2}50% {2}5,000 chunks {2}500\/s {2}ETA 10s {2}\(10\.0 s\)$/);
    expect(progressText('index', 'chunks', 7720, 4, {})).toBe('index  7,720 chunks  1,930/s  (4.0 s)');
  });

  it('on a terminal redraws one line in place, cut to the width, and ends it once', () => {
    const { writes, stream } = sink(true, 50);
    let t = 0;
    const p = liveProgress({ label: 'eval', unit: 'rollouts', stream, now: () => t });
    for (let i = 1; i <= 20; i++) {
      t += 60;
      p.update(i, { total: 20 });
    }
    p.done();
    const text = writes.join('');
    expect(text.split('\n')).toEqual([expect.any(String), '']);
    expect(writes.every((w) => w.startsWith('\r\x1b[K'))).toBe(true);
    // Redrawn at most ten times a second: 20 updates over 1.2 s.
    expect(writes.length).toBeLessThanOrEqual(13);
    for (const w of writes) expect(w.replace('\r\x1b[K', '').replace('\n', '').length).toBeLessThanOrEqual(49);
  });

  it('elsewhere writes a plain line at every tenth of the way and a last one, and nothing for a count of unknown share', () => {
    const { writes, stream } = sink(false);
    let t = 0;
    const p = liveProgress({ label: 'eval', unit: 'rollouts', stream, now: () => (t += 10) });
    for (let i = 1; i <= 100; i++) p.update(i, { total: 100 });
    p.done();
    expect(writes).toHaveLength(11);
    expect(writes.every((w) => w.endsWith('\n') && !w.includes('\r'))).toBe(true);
    expect(writes[10]).toMatch(/ 100% {2}100\/100 rollouts/);
    const unknown = sink(false);
    const q = liveProgress({ label: 'index', unit: 'chunks', stream: unknown.stream });
    q.update(7720);
    q.done();
    expect(unknown.writes).toEqual([]);
  });

  it('draws nothing when disabled (--json) or when nothing was counted', () => {
    const off = sink(true);
    const p = liveProgress({ label: 'eval', unit: 'rollouts', stream: off.stream, enabled: false });
    p.update(1, { total: 2 });
    p.done();
    expect(off.writes).toEqual([]);
    const idle = sink(false);
    liveProgress({ label: 'eval', unit: 'rollouts', stream: idle.stream }).done();
    expect(idle.writes).toEqual([]);
  });
});
