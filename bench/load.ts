/**
 * Benchmarks that know when the machine is busy. A timing taken while other builds run misleads
 * (a committed local.json showed a 9.2 s GRPO step that is 1.6 s on a quiet machine), so every
 * bench starts with guardLoad: when the 1-minute load average is above half the cores it refuses to
 * run, unless --allow-loaded is given; then its result is marked "loaded": true. Every result
 * records the load averages at start and end, the wall time and the CPU time of the bench's own
 * process and of the children it waited for, so a reader can tell a quiet run from a busy one.
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

/** The flag every bench takes (spread into its benchArgs options). */
export const LOAD_FLAG = { 'allow-loaded': { type: 'boolean' } } as const;

/** A machine is loaded when its 1-minute load average is above this share of its cores. */
export const LOADED_SHARE = 0.5;

/** What a result records of the machine's load and of its own time. */
export interface LoadRecord {
  loaded: boolean;
  cores: number;
  load_average_at_start: number[];
  load_average_at_end: number[];
  wall_s: number;
  /** CPU seconds of this process (all its threads) and of the child processes it waited for; null where the system does not say (no /proc). */
  cpu_s: { self: number; children: number | null };
}

/** Whether a load average (1, 5, 15 minutes) is too high on this many cores for a timing to be quoted. */
export function isLoaded(load: readonly number[], cores: number): boolean {
  return load[0]! > LOADED_SHARE * cores;
}

/** The load average, to two places; SLEUTH_BENCH_LOADAVG ("a,b,c") stands in for the machine's in tests of the refusal. */
function loadAverage(): number[] {
  const given = process.env['SLEUTH_BENCH_LOADAVG'];
  const values = given ? given.split(',').map(Number) : loadavg();
  return values.map((x) => Number(x.toFixed(2)));
}

/** CPU seconds of the children this process waited for (Linux's /proc/self/stat: cutime + cstime, in clock ticks of 1/100 s). */
function childrenCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}

export interface LoadGuard {
  /** The record to write beside the results, read now (at the end of the run). */
  record(): LoadRecord;
  /** The fields a result file gets: `load` (the record) and, for a run on a busy machine, `"loaded": true`. */
  fields(): { load: LoadRecord; loaded?: true };
}

/**
 * Check the machine before a bench named `bench` runs: refuse (exit 2, saying why) when it is
 * loaded and `allowLoaded` is not set; else start the clocks.
 */
export function guardLoad(bench: string, allowLoaded: boolean | undefined): LoadGuard {
  const cores = cpus().length;
  const start = loadAverage();
  const loaded = isLoaded(start, cores);
  if (loaded && !allowLoaded) {
    process.stderr.write(
      `${bench}: the machine is busy (load average ${start.join(', ')} on ${cores} cores; a quiet machine is at most ${LOADED_SHARE * cores}), so its timings would mislead: run it when the machine is quiet, or pass --allow-loaded to write results marked "loaded": true\n`,
    );
    process.exit(2);
  }
  if (loaded) process.stderr.write(`${bench}: the machine is busy (load average ${start[0]} on ${cores} cores): results are marked "loaded": true\n`);
  const wall = performance.now();
  const self = process.cpuUsage();
  const children = childrenCpuSeconds();
  const guard: LoadGuard = {
    fields: () => {
      const load = guard.record();
      return load.loaded ? { loaded: true, load } : { load };
    },
    record: () => {
      const used = process.cpuUsage(self);
      const childrenNow = childrenCpuSeconds();
      return {
        loaded,
        cores,
        load_average_at_start: start,
        load_average_at_end: loadAverage(),
        wall_s: Number(((performance.now() - wall) / 1000).toFixed(3)),
        cpu_s: {
          self: Number(((used.user + used.system) / 1e6).toFixed(3)),
          children: children === null || childrenNow === null ? null : Number((childrenNow - children).toFixed(2)),
        },
      };
    },
  };
  return guard;
}
