import { clock } from '../train/progress.js';
import { fit, outputWidth } from '../text/width.js';

/**
 * The one progress line of a long step (`index`, `eval`, `headroom`), on stderr so that stdout
 * stays the result: on a terminal a single line redrawn in place (at most ten times a second),
 * `label [####......]  45%  1,234/2,740 rollouts  35.2/s  ETA 43s  (35.1 s)`, cut to the
 * terminal's width; elsewhere (a log file, CI) a plain line at every tenth of the way, when the
 * share done is known.
 */
export interface Progress {
  /**
   * `count` items done (the rate is counted in them) of `total` when known; `fraction` when the
   * share done is measured otherwise (bytes read of a corpus of unknown chunk count).
   */
  update(count: number, o?: { total?: number; fraction?: number }): void;
  /** The last state drawn and the line ended (nothing, when nothing was counted). */
  done(): void;
}

interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  /** What the line is about: `index`, `eval`. */
  label: string;
  /** The items counted: `chunks`, `rollouts`. */
  unit: string;
  /** False: draw nothing (--json, or the caller's own quiet mode). */
  enabled?: boolean;
  stream?: Stream;
  /** The clock, in milliseconds (tests pass their own). */
  now?: () => number;
}

const BAR = 24;
const number = (n: number) => Math.round(n).toLocaleString('en-US');

/** The progress line's text for a state (exported for the tests). */
export function progressText(label: string, unit: string, count: number, elapsedS: number, o: { total?: number; fraction?: number }): string {
  const fraction = o.fraction ?? (o.total ? count / o.total : undefined);
  const rate = elapsedS > 0 ? count / elapsedS : 0;
  const parts = [label];
  if (fraction !== undefined) {
    const f = Math.min(1, Math.max(0, fraction));
    const filled = Math.round(f * BAR);
    parts.push(`[${'#'.repeat(filled)}${'.'.repeat(BAR - filled)}] ${`${Math.floor(f * 100)}%`.padStart(4)}`);
  }
  parts.push(`${number(count)}${o.total !== undefined ? `/${number(o.total)}` : ''} ${unit}`);
  if (elapsedS > 0) parts.push(`${rate >= 100 ? number(rate) : rate.toFixed(1)}/s`);
  if (fraction !== undefined && fraction > 0 && fraction < 1) {
    const left = o.total !== undefined && rate > 0 ? (o.total - count) / rate : (elapsedS * (1 - fraction)) / fraction;
    parts.push(`ETA ${clock(left)}`);
  }
  parts.push(`(${elapsedS.toFixed(1)} s)`);
  return parts.join('  ');
}

export function liveProgress(o: ProgressOptions): Progress {
  const stream = o.stream ?? process.stderr;
  const now = o.now ?? Date.now;
  const enabled = o.enabled ?? true;
  const live = stream.isTTY === true;
  const started = now();
  let last = -Infinity;
  let lastTenth = -1;
  let state: { count: number; total?: number; fraction?: number } | undefined;
  const text = () => progressText(o.label, o.unit, state!.count, (now() - started) / 1000, state!);
  const tenth = () => {
    const f = state!.fraction ?? (state!.total ? state!.count / state!.total : undefined);
    return f === undefined ? -1 : Math.floor(Math.min(1, f) * 10);
  };
  return {
    update(count, u = {}) {
      state = { count, ...u };
      if (!enabled) return;
      if (live) {
        const t = now();
        if (t - last < 100) return;
        last = t;
        // \r and erase-to-end: the line is redrawn in place, one character short of the width so
        // that the terminal never wraps it.
        stream.write(`\r\x1b[K${fit(text(), outputWidth(stream) - 1)}`);
      } else if (tenth() > lastTenth) {
        lastTenth = tenth();
        if (lastTenth < 10) stream.write(`${text()}\n`);
      }
    },
    done() {
      // Nothing was counted (a resumed eval with nothing left to run): nothing to show.
      if (!enabled || !state) return;
      if (live) stream.write(`\r\x1b[K${fit(text(), outputWidth(stream) - 1)}\n`);
      // Not a terminal: the closing line goes with the tenths; a count of unknown share shows none.
      else if (lastTenth >= 0) stream.write(`${text()}\n`);
    },
  };
}
