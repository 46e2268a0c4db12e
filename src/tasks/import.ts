import { existsSync, statSync } from 'node:fs';
import type { Chunk } from '../corpus/chunk.js';
import { readCorpora, type CorpusFormat } from '../corpus/read.js';
import { InputError } from '../errors.js';
import { checkReplaceable } from '../files/owned-dir.js';
import { coverageReport, requireCoverage, type CoverageReport } from './check.js';
import { buildIndex } from '../search/index.js';
import { beirFiles, loadBeir } from './loaders/beir.js';
import { harness1CorpusFiles, loadHarness1 } from './loaders/harness1.js';
import { loadHotpotQA, readHotpotQACorpusByTitle } from './loaders/hotpotqa.js';
import { loadJsonlTasks } from './loaders/jsonl.js';
import { loadMusique } from './loaders/musique.js';
import type { LoadedTasks } from './loaders/types.js';
import { TASKSET_DIR, writeTaskSetDir } from './registry.js';
import { splitTasks, type SplitTask } from './split.js';

export const TASK_FORMATS = ['harness1', 'hotpotqa', 'musique', 'jsonl', 'beir'] as const;
export type TaskFormat = (typeof TASK_FORMATS)[number];

export interface ImportOptions {
  format: TaskFormat;
  /** The task file (or, for harness1, the download directory; for beir, the dataset directory). */
  tasks: string;
  /** Corpus files or directories; default: the paragraphs in the task file, or a Harness-1 download's corpora/. */
  corpus?: string[];
  corpusFormat?: CorpusFormat;
  /** Harness-1 stage (default rl). */
  stage?: string;
  /** Eval share per source when the data has no splits of its own (default 0.2). */
  evalFraction?: number;
  seed?: string | number;
  allowMissing?: boolean;
  force?: boolean;
}

export interface ImportSummary {
  name: string;
  dir: string;
  counts: Record<string, number>;
  chunks: number;
  skipped: LoadedTasks['skipped'];
  coverage: CoverageReport;
}

/** Load tasks in one of the supported dataset layouts. */
export async function loadTasksInFormat(format: TaskFormat, path: string, options: { stage?: string; corpus?: string[] } = {}): Promise<LoadedTasks> {
  const loaded = await loadTasksByFormat(format, path, options);
  // A set of no tasks is never what was meant: an empty or wrong file, said so before anything is built.
  if (loaded.tasks.length === 0) throw new InputError(`${path}: no tasks in this ${format} file${loaded.skipped.length ? ` (${loaded.skipped.length} records skipped, first: ${loaded.skipped[0]!.where}: ${loaded.skipped[0]!.reason})` : ''}`);
  return loaded;
}

function loadTasksByFormat(format: TaskFormat, path: string, options: { stage?: string; corpus?: string[] }): Promise<LoadedTasks> | LoadedTasks {
  switch (format) {
    case 'harness1':
      return loadHarness1(path, options.stage === undefined ? {} : { stage: options.stage });
    case 'hotpotqa':
      return loadHotpotQA(path, { corpusByTitle: hotpotCorpusByTitle(options.corpus ?? []) });
    case 'musique':
      return loadMusique(path);
    case 'jsonl':
      return loadJsonlTasks(path);
    case 'beir':
      return loadBeir(path);
  }
}

/**
 * HotpotQA's fullwiki questions name supporting paragraphs that are not in their own context; a
 * corpus in the `{title: [sentences]}` layout resolves them. Other corpus files are skipped here.
 */
function hotpotCorpusByTitle(paths: string[]): Map<string, string[]> {
  const byTitle = new Map<string, string[]>();
  for (const path of paths) {
    if (!path.endsWith('.json') || !existsSync(path) || statSync(path).isDirectory()) continue;
    try {
      for (const [title, sentences] of readHotpotQACorpusByTitle(path)) byTitle.set(title, sentences);
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
    }
  }
  return byTitle;
}

/** Where the chunks of an import come from, as a stream. */
function chunkSource(options: ImportOptions, loaded: LoadedTasks): AsyncIterable<Chunk> {
  if (options.corpus && options.corpus.length > 0) {
    const format = options.corpusFormat ?? (options.format === 'jsonl' ? 'auto' : options.format);
    return readCorpora(options.corpus.map((path) => ({ path, format })));
  }
  if (options.format === 'beir') return readCorpora([{ path: beirFiles(options.tasks).corpus, format: 'beir' }]);
  if (options.format === 'harness1') {
    const files = harness1CorpusFiles(options.tasks);
    if (files.length === 0) throw new InputError(`${options.tasks}: no corpora/<domain>/*.parquet in the download; pass --corpus`);
    return readCorpora(files.map((path) => ({ path, format: 'harness1' as const })));
  }
  if (loaded.chunks.length === 0) throw new InputError(`--format ${options.format} tasks carry no corpus: pass --corpus PATH`);
  return (async function* () {
    yield* loaded.chunks;
  })();
}

/**
 * Turn a user's dataset into a task set: load and check the tasks, split them (the data's own
 * splits when every task has one, else seeded and stratified by source), index the corpus, and
 * stop before anything is written when facts point at chunks the corpus lacks (unless allowed).
 */
export async function importTaskSet(name: string, dir: string, options: ImportOptions): Promise<ImportSummary> {
  checkReplaceable(dir, TASKSET_DIR, options.force);
  if (existsSync(dir) && !options.force) throw new InputError(`task set '${name}' already exists at ${dir} (pass --force to replace it)`);
  const loaded = await loadTasksInFormat(options.format, options.tasks, { ...(options.stage ? { stage: options.stage } : {}), ...(options.corpus ? { corpus: options.corpus } : {}) });
  const own = loaded.splits;
  const split: SplitTask[] =
    own && own.size === loaded.tasks.length
      ? loaded.tasks.map((t) => ({ split: own.get(t.id) as string, ...t }))
      : splitTasks(loaded.tasks, { evalFraction: options.evalFraction ?? 0.2, seed: options.seed ?? 'sleuth-split-v1' });

  let coverage: CoverageReport | undefined;
  const manifest = await writeTaskSetDir(
    dir,
    {
      name,
      origin: `import of ${options.format} ${options.tasks}`,
      options: { format: options.format, tasks: options.tasks, ...(options.corpus ? { corpus: options.corpus } : {}), ...(options.stage ? { stage: options.stage } : {}) },
      tasks: split,
    },
    async (indexDir) => {
      const ids = new Set<string>();
      const stats = await buildIndex(recordIds(chunkSource(options, loaded), ids), indexDir);
      coverage = coverageReport(loaded.tasks, (id) => ids.has(id));
      requireCoverage(coverage, options.tasks, options.allowMissing ?? false);
      return stats.docs;
    },
  );
  return { name, dir, counts: manifest.counts, chunks: manifest.chunks, skipped: loaded.skipped, coverage: coverage! };
}

async function* recordIds(chunks: AsyncIterable<Chunk>, ids: Set<string>): AsyncGenerator<Chunk> {
  for await (const chunk of chunks) {
    ids.add(chunk.id);
    yield chunk;
  }
}
