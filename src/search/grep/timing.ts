/**
 * Latency of grep calls, for benchmarks (bench/search.ts times `SearchIndex.grep` this way or by hand):
 * each pattern is run once untimed (to compile and cache it, as a long-running agent environment would
 * have), then `rounds` times timed; percentiles are over all timed calls.
 */
export interface GrepLatency {
  p50_ms: number;
  p99_ms: number;
  samples: number;
}

export function grepLatency(run: (pattern: string) => unknown, patterns: string[], rounds = 3): GrepLatency {
  for (const p of patterns) run(p);
  const ms: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const p of patterns) {
      const start = performance.now();
      run(p);
      ms.push(performance.now() - start);
    }
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => (ms.length === 0 ? NaN : ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!);
  return { p50_ms: at(0.5), p99_ms: at(0.99), samples: ms.length };
}
