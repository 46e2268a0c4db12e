import { existsSync } from 'node:fs';
import type { Chunk } from '../corpus/chunk.js';
import { InputError } from '../errors.js';
import { checkReplaceable } from '../files/owned-dir.js';
import { buildIndex, openIndex, type SearchIndex } from '../search/index.js';
import { TASKSET_DIR, writeTaskSetDir, type TaskSet } from './registry.js';
import { sampleTasks, seededKey, type SplitTask } from './split.js';

export type DistractorMode = 'bm25' | 'random';

export interface SubsetOptions {
  /** Train and eval queries to keep. */
  train: number;
  eval: number;
  /** Distractor chunks added per query besides its gold chunks (default 20). */
  distractors?: number;
  /** BM25 neighbours of the query (hard negatives, which make retrieval harder than random chunks) or uniform random chunks. */
  mode?: DistractorMode;
  seed?: number | string;
  /** Replace an existing set at the destination. */
  force?: boolean;
}

export interface SubsetSummary {
  name: string;
  dir: string;
  counts: Record<string, number>;
  goldChunks: number;
  distractorChunks: number;
  chunks: number;
}

/**
 * A cheap ablation: N train and M eval queries chosen by a seeded hash, over a reduced
 * corpus of every gold chunk of those queries plus D distractors per query. Written as a task set
 * (tasks.jsonl with splits, taskset.json, index/) into `dir`, built beside it and renamed into place.
 */
export async function buildSubset(from: TaskSet, name: string, dir: string, options: SubsetOptions): Promise<SubsetSummary> {
  const seed = options.seed ?? '0';
  const perQuery = options.distractors ?? 20;
  const mode = options.mode ?? 'bm25';
  const chosen: SplitTask[] = [];
  for (const [split, n] of [['train', options.train], ['eval', options.eval]] as const) {
    const pool = from.splits.includes(split) ? from.tasks(split) : [];
    if (n > pool.length) throw new InputError(`--${split} ${n}: task set '${from.name}' has only ${pool.length} ${split} tasks`);
    for (const task of sampleTasks(pool, n, `${seed}:${split}`)) chosen.push({ split, ...task });
  }
  if (chosen.length === 0) throw new InputError('--train and --eval are both 0: a task set needs at least one task');
  checkReplaceable(dir, TASKSET_DIR, options.force);
  if (existsSync(dir) && !options.force) throw new InputError(`task set '${name}' already exists at ${dir} (pass --force to replace it)`);

  const source = await openIndex(from.indexDir);
  // Gold chunks first, in task order, so that the reduced corpus always covers every fact it can.
  const keep = new Set<string>();
  for (const task of chosen) for (const fact of task.facts) for (const id of fact.chunkIds) if (source.has(id)) keep.add(id);
  const goldChunks = keep.size;
  for (const task of chosen) {
    if (mode === 'bm25') addBm25Distractors(source, task, perQuery, keep);
    else addRandomDistractors(source, `${seed}:${task.id}`, perQuery, keep);
  }

  const manifest = await writeTaskSetDir(
    dir,
    { name, origin: `subset of ${from.name}`, options: { train: options.train, eval: options.eval, distractors: perQuery, distractorMode: mode, seed }, tasks: chosen },
    async (indexDir) => (await buildIndex(readKept(source, keep), indexDir)).docs,
  );
  return { name, dir, counts: manifest.counts, goldChunks, distractorChunks: keep.size - goldChunks, chunks: manifest.chunks };
}

/** The top BM25 hits of the query that are not already kept: near misses that make the search hard. */
function addBm25Distractors(index: SearchIndex, task: SplitTask, n: number, keep: Set<string>): void {
  if (n === 0) return;
  let hits;
  try {
    hits = index.search(task.query, Math.min(index.size, n * 3 + 30));
  } catch (err) {
    // A query of only stopwords has no BM25 neighbours; it still gets its gold chunks.
    if (err instanceof InputError) return;
    throw err;
  }
  let added = 0;
  for (const hit of hits) {
    if (added === n) break;
    if (keep.has(hit.id)) continue;
    keep.add(hit.id);
    added += 1;
  }
}

/** n chunks drawn uniformly (reproducibly, from the seed) from those not already kept. */
function addRandomDistractors(index: SearchIndex, seed: string, n: number, keep: Set<string>): void {
  const available = index.size - keep.size;
  const want = Math.min(n, available);
  let added = 0;
  for (let draw = 0; added < want && draw < want * 50 + 1000; draw += 1) {
    // 48 bits of a seeded hash per draw: uniform enough over any corpus size sleuth will see.
    const doc = Number(BigInt(`0x${seededKey(seed, String(draw)).slice(0, 12)}`) % BigInt(index.size));
    const id = index.store.id(doc);
    if (keep.has(id)) continue;
    keep.add(id);
    added += 1;
  }
}

async function* readKept(index: SearchIndex, keep: Set<string>): AsyncGenerator<Chunk> {
  for (const id of keep) {
    const chunk = index.read(id);
    if (chunk) yield chunk;
  }
}
