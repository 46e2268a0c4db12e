import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readFlashragCorpus } from '../corpus/flashrag.js';
import { ensureIndexOf } from '../search/index.js';
import { FLASHRAG_BENCHMARKS, FLASHRAG_ROW_SHAPE, flashragQuestionsPath, loadFlashragQuestions, type FlashragBenchmark } from '../tasks/loaders/flashrag.js';
import { loadTaskSet, taskSetOf, type TaskSet } from '../tasks/registry.js';
import { taskSource } from '../tasks/split.js';
import { sleuthHome } from '../tasks/store.js';
import type { Task } from '../tasks/task.js';
import type { Rollout } from '../agent/rollout.js';
import type { Summary } from './metrics.js';
import { processMetrics } from './process.js';

/** The shipped task set whose test half stands in for the benchmarks it holds (HotpotQA, MuSiQue) when DIR lacks them. */
export const SHIPPED_STAND_IN = { set: 'default', split: 'test' } as const;

/**
 * Where the wiki-18 passages may be in a benchmarks folder, in the order looked for: Search-R1's
 * file name (gunzipped or not), then FlashRAG's (`retrieval-corpus/wiki18_100w.zip`, unzipped).
 */
export const WIKI18_FILES = ['wiki-18.jsonl', 'wiki-18.jsonl.gz', 'wiki18_100w.jsonl', join('retrieval-corpus', 'wiki18_100w.jsonl')] as const;

/** One benchmark ready to run: its tasks as a task set over an index, and what data they are. */
export interface BenchmarkSource {
  benchmark: string;
  /** The data the row used, for the table: the question file, or the shipped set it was taken from. */
  data: string;
  taskSet: TaskSet;
  split: string;
}

export interface BenchmarkPlan {
  sources: BenchmarkSource[];
  /** One line per benchmark that cannot run, saying what is missing and where it goes. */
  missing: string[];
}

export interface PlanOptions {
  /** Called before the corpus is indexed (only when its index is not already built). */
  onIndexing?: (corpus: string, indexDir: string) => void;
  /** Called as the corpus is indexed: passages so far, and the share of the file read. */
  onIndexProgress?: (passages: number, fraction: number) => void;
}

/** The wiki-18 file of a benchmarks folder, or undefined. */
export function findWiki18(dir: string): string | undefined {
  return WIKI18_FILES.map((name) => join(dir, name)).find((path) => existsSync(path));
}

/**
 * Where a corpus file's index is kept: one per file path under sleuth's home, rebuilt when the
 * file's size or modification time changes (hashing wiki-18's 14 GB on every run would cost more
 * than the eval).
 */
export function corpusIndexPlace(corpus: string): { dir: string; source: string } {
  const path = resolve(corpus);
  const st = statSync(path);
  const key = createHash('sha256').update(path).digest('hex').slice(0, 12);
  return { dir: join(sleuthHome(), 'index', `flashrag-${key}`), source: `flashrag:${path}:${st.size}:${Math.floor(st.mtimeMs)}` };
}

/**
 * The seven benchmarks over a FlashRAG folder: each one whose question file is there runs on it,
 * over the folder's wiki-18 (indexed once); HotpotQA and MuSiQue, when absent, run on the shipped
 * default set's test half (its tasks of that source, over the shipped corpus); any other absent
 * benchmark, or one with questions and no corpus, gets a line saying what is missing. Malformed
 * question rows are InputErrors naming the file and line.
 */
export async function planBenchmarks(dir: string, options: PlanOptions = {}): Promise<BenchmarkPlan> {
  const present: { benchmark: string; path: string; split: string; tasks: Task[] }[] = [];
  const absent: FlashragBenchmark[] = [];
  const missing: string[] = [];
  for (const b of FLASHRAG_BENCHMARKS) {
    const path = flashragQuestionsPath(dir, b);
    if (existsSync(path)) present.push({ benchmark: b.name, path, split: b.split, tasks: await loadFlashragQuestions(path, b.name) });
    else absent.push(b);
  }

  const sources: BenchmarkSource[] = [];
  const corpus = findWiki18(dir);
  if (present.length > 0 && corpus === undefined) {
    for (const p of present) missing.push(`${p.benchmark}: ${p.path} has ${p.tasks.length} questions but ${dir} has no corpus: put wiki-18 at ${join(dir, WIKI18_FILES[0])} ({id, contents} per line, contents "Title"\\ntext)`);
  } else if (present.length > 0 && corpus !== undefined) {
    const place = corpusIndexPlace(corpus);
    const size = statSync(corpus).size;
    const announce = once(() => options.onIndexing?.(corpus, place.dir));
    let read = 0;
    const indexDir = await ensureIndexOf(place.source, () => readFlashragCorpus(corpus, (bytes) => (read = bytes)), place.dir, {
      onProgress: (passages) => {
        announce();
        options.onIndexProgress?.(passages, size > 0 ? read / size : 1);
      },
    });
    for (const p of present) sources.push({ benchmark: p.benchmark, data: p.path, split: p.split, taskSet: taskSetOf(p.benchmark, p.tasks.map((t) => ({ ...t, split: p.split })), indexDir) });
  }

  let shipped: TaskSet | undefined;
  for (const b of absent) {
    shipped ??= await loadTaskSet(SHIPPED_STAND_IN.set);
    const { split } = SHIPPED_STAND_IN;
    const tasks = shipped.tasks(split).filter((t) => taskSource(t) === b.name);
    if (tasks.length > 0) {
      sources.push({ benchmark: b.name, data: `shipped ${SHIPPED_STAND_IN.set}/${split} (its ${b.name} tasks)`, split, taskSet: taskSetOf(SHIPPED_STAND_IN.set, tasks.map((t) => ({ ...t, split })), shipped.indexDir) });
    } else {
      missing.push(`${b.name}: missing ${flashragQuestionsPath(dir, b)} (FlashRAG layout: ${FLASHRAG_ROW_SHAPE})`);
    }
  }
  // The table keeps the benchmarks' own order, whatever data each row used.
  const order = (name: string) => FLASHRAG_BENCHMARKS.findIndex((b) => b.name === name);
  sources.sort((a, b) => order(a.benchmark) - order(b.benchmark));
  missing.sort((a, b) => order(a.slice(0, a.indexOf(':'))) - order(b.slice(0, b.indexOf(':'))));
  return { sources, missing };
}

function once(f: () => void): () => void {
  let called = false;
  return () => {
    if (!called) f();
    called = true;
  };
}

/** One row of the benchmarks table (and of benchmarks.json). */
export interface BenchmarkRow {
  benchmark: string;
  data: string;
  split: string;
  /** The run directory of its rollouts (the explorer lists it). */
  run: string;
  /** Episodes scored (tasks x samples). */
  n: number;
  exact_match: number;
  f1: number;
  abort_rate: number;
  length_clip_ratio: number;
  searches_per_episode: number;
  /** Episodes per number of searches: {"1": 40, "2": 9}. */
  search_count_profile: Record<string, number>;
  errors: number;
}

export interface BenchmarksReport {
  agent: string;
  env: string;
  /** The sampling temperature the agent was given (0: greedy). */
  temperature: number;
  benchmarks: BenchmarkRow[];
  missing: string[];
}

/** A row from a benchmark's eval: EM and F1 from its summary, the process metrics from its rollouts. */
export function benchmarkRow(source: BenchmarkSource, run: string, summary: Summary, rollouts: readonly Rollout[], lookupTools: ReadonlySet<string>): BenchmarkRow {
  const p = processMetrics(rollouts, lookupTools);
  return {
    benchmark: source.benchmark,
    data: source.data,
    split: source.split,
    run,
    n: p.episodes,
    exact_match: (summary['exact_match'] as number | undefined) ?? 0,
    f1: (summary['f1'] as number | undefined) ?? 0,
    abort_rate: p.abort_rate,
    length_clip_ratio: p.length_clip_ratio,
    searches_per_episode: p.searches_per_episode,
    search_count_profile: p.search_count_profile,
    errors: summary.errors,
  };
}
