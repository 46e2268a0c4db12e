import { cpSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { forEachConcurrently } from '../../concurrency.js';
import { InputError } from '../../errors.js';
import { checkReplaceable } from '../../files/owned-dir.js';
import type { SearchIndex } from '../../search/index.js';
import { TASKSET_DIR, writeTaskSetDir } from '../registry.js';
import { goldChunkIds, seededKey, splitByComponents, type SplitTask } from '../split.js';
import type { Task } from '../task.js';
import { findChains, keywords, type Chain } from './chains.js';
import { emptyWriterCounts, namesABridge, writeQuestion, type WriterCounts, type WriterOptions } from './writer.js';

/**
 * `sleuth tasks synthesize`: multi-hop search tasks from an index alone. Chains of chunks linked
 * by name (chains.ts) become tasks whose question leaves the bridges out; with no model the
 * question is keywords of the first and last chunk (a known-item task), with a writer it is a
 * model's question. Every task is verified against the index before it is kept:
 *
 * - the question's own BM25 top 10 must miss at least one gold chunk (one search is not enough);
 * - the hop oracle (each hop's query, the bridge filled in: meta.decomposition, what the
 *   `hop-oracle` agent searches) must find every gold chunk in the top `floor(10 / hops)` of its
 *   hop, which puts it in the oracle's curated 10.
 *
 * Both recalls are kept in meta.synth, so `sleuth headroom` can show the room between them.
 */

export interface SynthesisOptions {
  /** Tasks wanted. Fewer chains than this in the whole index is an InputError, and nothing is written. */
  count: number;
  /** Hop counts, dealt round-robin over chains (default [2]). */
  hops?: number[];
  seed?: string;
  /** Test and dev shares of each hop count (defaults 0.2 and 0.2; the rest is train). */
  testFraction?: number;
  devFraction?: number;
  /** Chunk ids no task may use as gold (a held-out split's gold chunks). */
  exclude?: ReadonlySet<string>;
  /**
   * Known-item tasks to add (default 0): one chunk each, asked by its most distinctive words. One
   * search finds them (that is checked instead), so they teach the first move, not the hops.
   */
  knownItems?: number;
  /** A model writes the questions; without one they are keywords. */
  writer?: WriterOptions;
  force?: boolean;
  /** Progress (chains tried, tasks kept). */
  onProgress?: (kept: number, tried: number) => void;
}

/** Why chains were dropped, and how many. */
export interface SynthesisCounts {
  /** Chains examined. */
  chains: number;
  kept: number;
  /** The question named a bridge (keyword questions; the writer's are counted in `writer`). */
  namesBridge: number;
  /** The question's own top 10 held every gold chunk: one search is enough. */
  oneSearch: number;
  /** The hop oracle missed a gold chunk: the task may not be answerable. */
  oracleMisses: number;
  /** Known-item tasks kept, and those whose question's top 10 missed their chunk (dropped). */
  knownItems?: { kept: number; missed: number };
  writer?: WriterCounts;
}

export interface SynthesisSummary {
  name: string;
  dir: string;
  counts: Record<string, number>;
  sha256: Record<string, string>;
  chunks: number;
  synthesis: SynthesisCounts;
}

/** What `meta.synth` holds for each task: recalls at synthesis, and the writer's answer if any. */
export interface SynthMeta {
  questionRecall: number;
  oracleRecall: number;
  writer?: string;
  answer?: string;
}

const TOP = 10;

/** The fewest tasks a set is written with (unless --count asks for fewer): a train, dev and test split of a few each. */
export const MIN_TASKS = 10;

/** The question words of each hop: the first hop's entity and keywords, the later hops' keywords. */
function hopWords(index: SearchIndex, chain: Chain): string[][] {
  // The bridges' words never describe a hop: a question built from them would name the bridge.
  const exclude = new Set(chain.nodes.slice(1).flatMap((n) => index.analyzer.terms(n.entity)));
  for (const t of index.analyzer.terms(chain.nodes[0]!.entity)) exclude.add(t);
  // Later hops are described by two common words, in 1% to 10% of chunks, as a relation is
  // ("founded", "population"): words rare enough to pick the chunk out alone would let one search
  // find it, and verification would drop the task (on MuSiQue's pool, 2 of 3 such tasks).
  const common = Math.max(3, Math.round(index.size * 0.01));
  return chain.nodes.map((n, i) => {
    const words = i === 0 ? keywords(index, n.doc, exclude, 2) : keywords(index, n.doc, exclude, 2, common, index.size * 0.1);
    // Each word once in the question: a later hop is not described by the first hop's words.
    for (const w of words) for (const t of index.analyzer.terms(w)) exclude.add(t);
    return words;
  });
}

/** The keyword question (no model): the first hop's subject and words, then each later hop's words. */
export function keywordQuestion(chain: Chain, words: string[][]): string {
  const [first, ...later] = words;
  const start = `${chain.nodes[0]!.entity} (${first!.join(', ')})`;
  return `From ${start}, through what it names: ${later.map((w) => w.join(', ')).join('; then what that names: ')}?`;
}

/** The task of a chain with its question: one fact per hop, and the hop queries the oracle searches. */
export function chainTask(chain: Chain, question: string, words: string[][], extra: Partial<SynthMeta> = {}): Task {
  const n = chain.nodes;
  const decomposition = n.map((node, i) => ({
    // Hop i's query: the entity it is about (the previous hop's answer) and its words.
    question: `${node.entity} ${words[i]!.join(' ')}`.trim(),
    answer: i + 1 < n.length ? n[i + 1]!.entity : node.title,
  }));
  const id = `synth-${createHash('sha256').update(n.map((x) => x.id).join('\u0000')).digest('hex').slice(0, 12)}`;
  return {
    id,
    query: question,
    facts: n.map((node, i) => ({ text: i + 1 < n.length ? `${node.title} names ${n[i + 1]!.entity}` : `${node.title}: ${words[i]!.join(', ')}`, chunkIds: [node.id], isFinalAnswer: i === n.length - 1 })),
    meta: { source: 'synth', hops: n.length, bridges: n.slice(1).map((x) => x.entity), decomposition, synth: extra },
  };
}

/** The recalls recorded at synthesis (meta.synth) of the tasks that have them: the room a search policy has. */
export function recordedRecalls(tasks: readonly Task[]): { question: number[]; oracle: number[] } {
  const out = { question: [] as number[], oracle: [] as number[] };
  for (const t of tasks) {
    const s = t.meta?.['synth'] as Partial<SynthMeta> | undefined;
    if (typeof s?.questionRecall !== 'number' || typeof s.oracleRecall !== 'number') continue;
    out.question.push(s.questionRecall);
    out.oracle.push(s.oracleRecall);
  }
  return out;
}

/** The task's bridge entities (meta.bridges). */
export function taskBridges(task: Task): string[] {
  const b = task.meta?.['bridges'];
  return Array.isArray(b) ? b.filter((x): x is string => typeof x === 'string') : [];
}

/** Share of a task's facts with a gold chunk among `ids`. */
function recall(task: Task, ids: ReadonlySet<string>): number {
  return task.facts.filter((f) => f.chunkIds.some((id) => ids.has(id))).length / task.facts.length;
}

function topIds(index: SearchIndex, query: string, k: number): Set<string> {
  // A query of stopwords only finds nothing (searchDocs would call it an error).
  if (index.analyzer.terms(query).length === 0) return new Set();
  return new Set(index.searchDocs(query, k).map((d) => index.store.id(d.doc)));
}

/**
 * Verify a task against the index: the question's own top 10 recall (must be below 1) and the hop
 * oracle's (each hop's gold in the top floor(10 / hops) of its query: must be 1).
 */
export function verifyTask(index: SearchIndex, task: Task): { questionRecall: number; oracleRecall: number } {
  const questionRecall = recall(task, topIds(index, task.query, TOP));
  const hops = (task.meta?.['decomposition'] ?? []) as { question: string }[];
  const per = Math.max(1, Math.floor(TOP / Math.max(1, hops.length)));
  const found = task.facts.filter((f, i) => hops[i] !== undefined && f.chunkIds.some((id) => topIds(index, hops[i]!.question, per).has(id))).length;
  return { questionRecall, oracleRecall: found / task.facts.length };
}

/** Make, check and keep tasks from chains until `count` are kept or the chains run out. */
export async function synthesizeTasks(index: SearchIndex, options: SynthesisOptions): Promise<{ tasks: Task[]; counts: SynthesisCounts }> {
  const hops = options.hops ?? [2];
  const seed = options.seed ?? 'sleuth-synth-v1';
  // A name in more than 0.2% of chunks (at least 5) is too common to be a bridge.
  const maxDf = Math.max(5, Math.round(index.size * 0.002));
  const counts: SynthesisCounts = { chains: 0, kept: 0, namesBridge: 0, oneSearch: 0, oracleMisses: 0, ...(options.writer ? { writer: emptyWriterCounts() } : {}) };
  const tasks: Task[] = [];
  const chains = findChains(index, { hops, seed, maxDf, ...(options.exclude ? { exclude: options.exclude } : {}) });
  const text = (doc: number) => index.store.text(doc);
  // Chains in batches: a writer's calls run concurrently within one, and the loop stops once enough are kept.
  const batchSize = options.writer ? Math.max(16, options.writer.concurrency * 2) : 64;
  let written = 0;
  for (;;) {
    const batch: Chain[] = [];
    while (batch.length < batchSize) {
      const next = chains.next();
      if (next.done) break;
      batch.push(next.value);
    }
    if (batch.length === 0) break;
    counts.chains += batch.length;
    const made: (Task | undefined)[] = new Array(batch.length);
    await forEachConcurrently(batch.map((chain, i) => ({ chain, i })), options.writer?.concurrency ?? 1, async ({ chain, i }) => {
      const words = hopWords(index, chain);
      if (!options.writer) {
        const question = keywordQuestion(chain, words);
        if (namesABridge(question, chain)) counts.namesBridge += 1;
        else made[i] = chainTask(chain, question, words);
        return;
      }
      const written = await writeQuestion(chain, text, options.writer, counts.writer!);
      if (written) made[i] = chainTask(chain, written.question, words, { writer: options.writer.spec, ...(written.answer ? { answer: written.answer } : {}) });
    });
    for (const task of made) {
      if (!task || tasks.length >= options.count) continue;
      const verified = verifyTask(index, task);
      if (verified.questionRecall >= 1) counts.oneSearch += 1;
      else if (verified.oracleRecall < 1) counts.oracleMisses += 1;
      else tasks.push({ ...task, meta: { ...task.meta, synth: { ...verified, ...(task.meta!['synth'] as object) } } });
    }
    options.onProgress?.(tasks.length, counts.chains);
    // A writer that has not written one usable question in its first 16 chains is misconfigured
    // (a wrong model or URL, a model that cannot follow the format): stop before spending more.
    written += made.filter(Boolean).length + (counts.writer?.namesBridge ?? 0) + (counts.writer?.unanswerable ?? 0);
    if (options.writer && written === 0 && counts.chains >= 16) {
      throw new InputError(`--writer ${options.writer.spec}: no usable question in its first ${counts.chains} replies (${describeDrops(counts)}); check the model and URL (nothing was written)`);
    }
    if (tasks.length >= options.count) break;
  }
  if (options.knownItems) addKnownItems(index, tasks, counts, options.knownItems, seed, options.exclude);
  counts.kept = tasks.length;
  return { tasks, counts };
}

/**
 * Words of a known-item question: the chunk's most distinctive (tf x idf), in at most 2% of chunks
 * (at least 5), none of its title's; up to 4, and a chunk with fewer than 2 such words is passed over.
 */
const KNOWN_ITEM_WORDS = 4;
const KNOWN_ITEM_MIN_WORDS = 2;

/**
 * Add up to `wanted` known-item tasks over chunks no task uses yet (nor `exclude`), in a seeded
 * order: the question is the chunk's most distinctive words, kept when its top 10 holds the chunk.
 */
function addKnownItems(index: SearchIndex, tasks: Task[], counts: SynthesisCounts, wanted: number, seed: string, exclude?: ReadonlySet<string>): void {
  const used = new Set([...tasks.flatMap(goldChunkIds), ...(exclude ?? [])]);
  const order = Array.from({ length: index.size }, (_, doc) => doc)
    .filter((doc) => !used.has(index.store.id(doc)))
    .map((doc) => ({ doc, key: seededKey(`${seed}:known-item`, index.store.id(doc)) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const known = { kept: 0, missed: 0 };
  const rare = Math.max(5, Math.round(index.size * 0.02));
  for (const { doc } of order) {
    if (known.kept >= wanted) break;
    const title = index.store.title(doc);
    const words = keywords(index, doc, new Set(index.analyzer.terms(title)), KNOWN_ITEM_WORDS, 1, rare);
    if (words.length < KNOWN_ITEM_MIN_WORDS) continue;
    const id = index.store.id(doc);
    const query = `Which passage mentions ${words.join(', ')}?`;
    if (!topIds(index, query, TOP).has(id)) {
      known.missed += 1;
      continue;
    }
    known.kept += 1;
    tasks.push({
      id: `synth-ki-${createHash('sha256').update(id).digest('hex').slice(0, 12)}`,
      query,
      facts: [{ text: `${title}: ${words.join(', ')}`, chunkIds: [id], isFinalAnswer: true }],
      meta: { source: 'synth', kind: 'known-item', hops: 1, bridges: [], decomposition: [{ question: words.join(' '), answer: title }], synth: { questionRecall: 1, oracleRecall: 1 } },
    });
  }
  counts.knownItems = known;
}

/** Splits that cannot leak: tasks sharing a gold chunk or a bridge entity fall in one split; stratified by hop count. */
export function synthSplits(tasks: Task[], options: { seed: string; testFraction: number; devFraction: number }): SplitTask[] {
  return splitByComponents(tasks, { ...options, keys: (t) => [...goldChunkIds(t), ...taskBridges(t).map((b) => `bridge:${b}`)] });
}

/**
 * Synthesize a task set named `name` into `dir` over the index in `indexDir` (copied into the
 * set): nothing is written when the index has fewer chains than asked for, or no task survives.
 */
export async function synthesizeTaskSet(index: SearchIndex, indexDir: string, name: string, dir: string, options: SynthesisOptions): Promise<SynthesisSummary> {
  checkReplaceable(dir, TASKSET_DIR, options.force);
  if (existsSync(dir) && !options.force) throw new InputError(`task set '${name}' already exists at ${dir} (pass --force to replace it)`);
  const hops = options.hops ?? [2];
  const seed = options.seed ?? 'sleuth-synth-v1';
  const { tasks, counts } = await synthesizeTasks(index, options);
  // Fewer tasks than asked are written (the CLI says so); fewer than a set needs, never.
  const enough = Math.min(options.count, MIN_TASKS);
  if (tasks.length < enough) {
    throw new InputError(
      `index ${indexDir}: found ${counts.chains} chains of ${hops.join(' or ')} chunks and ${tasks.length} passed verification (${describeDrops(counts)}), fewer than the ${enough} a task set needs; ` +
        `a chain is a chunk whose text names another chunk's title (a Wikipedia title, a man page's name(section)), ` +
        `and each chunk and bridge is used once, so a corpus of ${index.size} chunks whose titles its texts rarely name has few. ` +
        `Index a larger corpus, or one with titles its texts name (nothing was written)`,
    );
  }
  const split = synthSplits(tasks, { seed, testFraction: options.testFraction ?? 0.2, devFraction: options.devFraction ?? 0.2 });
  const manifest = await writeTaskSetDir(
    dir,
    {
      name,
      origin: `synthesized from index ${indexDir} (${options.writer ? `writer ${options.writer.spec}` : 'keyword questions, no model'})`,
      options: { index: indexDir, hops, count: options.count, seed, writer: options.writer?.spec ?? null, excludedChunks: options.exclude?.size ?? 0, synthesis: counts },
      tasks: split,
    },
    async (target) => {
      cpSync(indexDir, target, { recursive: true });
      return index.size;
    },
  );
  return { name, dir, counts: manifest.counts, sha256: manifest.sha256, chunks: manifest.chunks, synthesis: counts };
}

/** One line of what verification and the writer dropped: "one search 12, oracle misses 3, ...". */
export function describeDrops(c: SynthesisCounts): string {
  const parts = [`one search finds all ${c.oneSearch}`, `hop oracle misses ${c.oracleMisses}`, `names a bridge ${c.namesBridge + (c.writer?.namesBridge ?? 0)}`];
  if (c.knownItems) parts.push(`known-item questions that missed their chunk ${c.knownItems.missed}`);
  if (c.writer) parts.push(`junk replies ${c.writer.junk}`, `answer not in the passages ${c.writer.unanswerable}`, `writer gave up ${c.writer.failed} (timeouts ${c.writer.timeouts}, errors ${c.writer.errors}, retries ${c.writer.retries})`);
  return parts.join(', ');
}
