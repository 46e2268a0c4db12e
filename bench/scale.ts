/**
 * npm run bench:scale — sleuth at the sizes RL trainers retrieve from: a corpus of
 * bench/corpora/kinds.ts (default the fitted one, text fitted to real text's statistics; topical and
 * iid are the earlier synthetic ones, manpages real text at the size it reaches) generated in a
 * stream (never written out), indexed in segments with compressed texts, then loaded and queried
 * with the corpus's queries.
 *
 *   node dist/bench/scale.js [--chunks 2100000] [--corpus fitted] [--work .sleuth/bench] [--out bench/results/scale.json] [--keep]
 *
 * The build and the queries run in child processes of their own, so each peak RSS is its own.
 * build_s is the whole stream: generating the chunks (generate_s of it, timed inside the generator)
 * and indexing them; index_s is build_s less generate_s. Queries: one warm-up pass (at most 30 s), then up to 60 s of top-10 searches
 * one after another on one thread, with ids, titles and snippets; grep: the literal patterns of
 * bench:search, three times each after a warm-up. Disk use and free space are recorded before and
 * after, and the index's bytes by part (postings, vocabulary, texts, grep, ...). postings_per_query:
 * the postings of the queries' terms, what the exhaustive loop scores (its mean, and p99);
 * postings_scored_per_query: those the engine scored, pruning or not (its mean). verify_s and
 * verify_mb_s: `sleuth index verify`'s full pass over the index (every block's checksum and every
 * cross-reference) on one thread. With --unchecked-too the queries run a second time over the same
 * files opened as an index without checksums (hard links and a manifest without them: the read path
 * before checksums), in the same run: `unchecked` holds its load_s, first_pass_qps and qps. The index
 * is removed afterwards unless --keep. Results are merged into --out by corpus and
 * size (runs from before the corpus was recorded were on the topical corpus).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Chunk } from '../src/corpus/chunk.js';
import { buildIndex, openSearcher } from '../src/search/index.js';
import { verifyIndex } from '../src/search/verify.js';
import { SUMS_FILE } from '../src/search/checksums.js';
import { queryTerms, type SearchIndex } from '../src/search/open.js';
import { SegmentedIndex } from '../src/search/segments.js';
import { badFlag, benchArgs, wholeFlag } from './args.js';
import { guardLoad, LOAD_FLAG } from './load.js';
import { dirBytes, GREP_LITERAL, loadNow, machineOf, now, peakRssMb, percentile, round, settleDisk, timeQueries } from './measure.js';
import { CORPUS_KINDS, corpusMissing, corpusQueries, corpusSource, isCorpusKind, type CorpusKind } from './corpora/kinds.js';
import { DEFAULT_MAN_ROOT } from './corpora/manpages.js';

/** Chunks handed to the builder at once (it takes batches: one asynchronous step per batch). */
const BATCH = 512;

async function childBuild(kind: CorpusKind, chunks: number, index: string, manRoot: string) {
  let generating = 0;
  const source = await corpusSource(kind, chunks, 1, manRoot);
  const batches = async function* (): AsyncGenerator<Chunk[]> {
    const it = source[Symbol.iterator]();
    for (;;) {
      const t = now();
      const batch: Chunk[] = [];
      for (let r = it.next(); ; r = it.next()) {
        if (r.done) break;
        batch.push(r.value);
        if (batch.length === BATCH) break;
      }
      generating += now() - t;
      if (batch.length === 0) return;
      yield batch;
    }
  };
  const t = now();
  let reported = 0;
  const stats = await buildIndex(batches(), index, {
    compressTexts: true,
    onProgress: (docs) => {
      if (docs - reported >= 1_000_000) {
        reported = docs;
        process.stderr.write(`  ${docs.toLocaleString('en-US')} chunks, ${((now() - t) / 1000).toFixed(0)} s\n`);
      }
    },
  });
  const manifest = JSON.parse(readFileSync(join(index, 'manifest.json'), 'utf8')) as { segments?: unknown[] };
  const build_s = (now() - t) / 1000;
  // index_s: the build's own time, the generator's (which a user's corpus reader replaces) taken out.
  return { chunks: stats.docs, build_s, generate_s: generating / 1000, index_s: build_s - generating / 1000, build_peak_rss_mb: peakRssMb(), index_gb: stats.bytes / 1e9, segments: manifest.segments?.length ?? 1, postings: stats.postings, tokens: stats.tokens };
}

async function childQuery(kind: CorpusKind, chunks: number, index: string, manRoot: string) {
  const queries = await corpusQueries(kind, chunks, 1, manRoot);
  const t = now();
  const ix = await openSearcher(index);
  const load_s = (now() - t) / 1000;
  const q = await timeQueries(queries, (query) => ix.search(query, 10));
  const grepLat: number[] = [];
  // Per pattern, of its last call: hits (of the 10 asked) and whether it stopped at the 1 s time cap.
  const grepCalls: { pattern: string; hits: number; timed_out: boolean; ms: number }[] = [];
  for (const p of GREP_LITERAL) ix.grep(p, { k: 10 });
  for (let rep = 0; rep < 3; rep++) for (const p of GREP_LITERAL) {
    const s = now();
    const r = ix.grep(p, { k: 10 });
    grepLat.push(now() - s);
    if (rep === 2) grepCalls.push({ pattern: p, hits: r.hits.length, timed_out: r.timedOut, ms: round(now() - s)! });
  }
  // Reads by id, as an agent's `read` tool does: of chunks its searches found (any corpus's ids),
  // picked spread over them.
  const found = [...new Set(queries.flatMap((query) => ix.search(query, 10).map((h) => h.id)))];
  if (found.length === 0) throw new Error('no query found anything: nothing to read');
  const readLat: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const id = found[Math.floor((((i * 2654435761) >>> 0) / 2 ** 32) * found.length)]!;
    const s = now();
    if (!ix.read(id)) throw new Error(`read ${id}: missing`);
    readLat.push(now() - s);
  }
  const postings = queries.map((query) => queryPostings(ix, query));
  // Postings the WebAssembly loops scored (weights computed) per query, pruning included: one more
  // pass over the queries, counted by assembly/bm25.ts.
  const memories = (ix instanceof SegmentedIndex ? ix.segments : [ix]).map((s) => s.scorer.p.memory);
  for (const m of memories) m?.postingsScored(true);
  for (const query of queries) ix.searchDocs(query, 10);
  const scored = memories.reduce((n, m) => n + (m?.postingsScored(true) ?? 0), 0);
  const postings_scored_per_query = memories.every((m) => m !== undefined) ? scored / queries.length : null;
  const postings_per_query = postings.reduce((a, b) => a + b, 0) / postings.length;
  return { load_s, qps: q.qps, p50_ms: q.p50_ms, p99_ms: q.p99_ms, first_pass_qps: q.first_pass_qps, postings_per_query, postings_scored_per_query, postings_per_query_p99: percentile(postings, 99), grep_literal_p50_ms: percentile(grepLat, 50), grep_calls: grepCalls, read_p50_ms: percentile(readLat, 50), query_peak_rss_mb: peakRssMb() };
}

/** `sleuth index verify` over the index, timed; it must find nothing. */
async function childVerify(index: string) {
  const report = await verifyIndex(index);
  if (report.problems.length > 0) throw new Error(`index verify found problems in a fresh index: ${JSON.stringify(report.problems.slice(0, 3))}`);
  return { verify_s: report.seconds, verify_mb_s: report.bytes / 1e6 / report.seconds, verify_peak_rss_mb: peakRssMb() };
}

/**
 * The same index as one built before checksums: every file hard-linked (no copy), sums.bin left
 * out, each manifest without its checksums. Opening it takes the read path without checks.
 */
function uncheckedCopy(index: string, to: string): void {
  mkdirSync(to);
  for (const f of readdirSync(index)) {
    const from = join(index, f);
    if (statSync(from).isDirectory()) uncheckedCopy(from, join(to, f));
    else if (f === 'manifest.json') {
      const m = JSON.parse(readFileSync(from, 'utf8')) as { checksums?: unknown; checksum?: unknown; files?: Record<string, number> };
      delete m.checksums;
      delete m.checksum;
      if (m.files) delete m.files[SUMS_FILE];
      writeFileSync(join(to, f), JSON.stringify(m, null, 2) + '\n');
    } else if (f !== SUMS_FILE) linkSync(from, join(to, f));
  }
}

/**
 * Postings the exhaustive loop scores for a query: the document frequencies of its distinct terms,
 * summed over the segments. What pruning may skip, and the work a query costs without it.
 */
function queryPostings(ix: SearchIndex | SegmentedIndex, query: string): number {
  const terms = [...new Set(queryTerms(ix.analyzer, query))];
  const segments = ix instanceof SegmentedIndex ? ix.segments : [ix];
  let postings = 0;
  for (const s of segments) {
    for (const t of terms) {
      const id = s.scorer.termId(t);
      if (id >= 0) postings += s.scorer.df(id);
    }
  }
  return postings;
}

/** The part of an index a file belongs to, by its name (src/search/format.ts lists the files). */
function partOf(file: string): string {
  const name = basename(file);
  if (name.startsWith('post.')) return 'postings';
  if (name.startsWith('block.')) return 'block_metadata';
  if (name.startsWith('term')) return 'vocabulary';
  if (name.startsWith('text.')) return 'texts';
  if (name.startsWith('grep.')) return 'grep';
  if (/^(ids|titles|meta)\./.test(name)) return 'ids_titles_meta';
  if (name === 'doclen') return 'doc_lengths';
  return 'other';
}

/** Bytes of the index's files by part, over all its segments. */
function bytesByPart(dir: string, into: Record<string, number> = {}): Record<string, number> {
  for (const f of readdirSync(dir)) {
    const path = join(dir, f);
    const st = statSync(path);
    if (st.isDirectory()) bytesByPart(path, into);
    else into[partOf(f)] = (into[partOf(f)] ?? 0) + st.size;
  }
  return into;
}

const self = fileURLToPath(import.meta.url);

function child(args: string[], timeoutS: number): Record<string, number | unknown[]> {
  const r = spawnSync(process.execPath, ['--max-old-space-size=12000', '--expose-gc', self, '--child', ...args], { encoding: 'utf8', timeout: timeoutS * 1000, maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = r.stdout?.trim().split('\n').pop() ?? '';
  if (r.status === 0 && line.startsWith('{')) return JSON.parse(line) as Record<string, number | unknown[]>;
  throw new Error(r.error ? String(r.error.message) : `child exited ${r.status}`);
}

const gb = (bytes: number) => Number((bytes / 1e9).toFixed(2));
function freeGb(path: string): number {
  const s = statfsSync(path);
  return gb(s.bavail * s.bsize);
}

async function main(): Promise<void> {
  const { values } = benchArgs(
    {
      child: { type: 'boolean' }, mode: { type: 'string' }, index: { type: 'string' },
      chunks: { type: 'string' }, corpus: { type: 'string' }, 'man-root': { type: 'string' }, work: { type: 'string' }, out: { type: 'string' }, keep: { type: 'boolean' }, timeout: { type: 'string' },
      'unchecked-too': { type: 'boolean' },
      ...LOAD_FLAG,
    },
    `usage: npm run bench:scale -- [--chunks N] [--corpus KIND] [--man-root DIR] [--work DIR] [--out FILE] [--keep] [--timeout S] [--unchecked-too]

Generates N chunks (default 2100000, the corpus size of Training Search Agents with GRPO; 21000000 is wiki-18's) of the corpus
--corpus (${CORPUS_KINDS.join(', ')}; default fitted; manpages, the man pages under --man-root
(default ${DEFAULT_MAN_ROOT}), stops at the size the pages reach)
in a stream, indexes them in segments with compressed texts into DIR (default .sleuth/bench), loads
and queries the index, and merges the result for the corpus and N into FILE (default bench/results/scale.json).
The index is removed afterwards unless --keep. --timeout: seconds each of build and query may take
(default 7200). --unchecked-too: query the same files again as an index without checksums (the
read path before them), in the same run, recorded as "unchecked".`,
  );
  if (values.child) {
    const kind = values.corpus as CorpusKind;
    const manRoot = values['man-root']!;
    const result = values.mode === 'build' ? await childBuild(kind, Number(values.chunks), values.index!, manRoot) : values.mode === 'verify' ? await childVerify(values.index!) : await childQuery(kind, Number(values.chunks), values.index!, manRoot);
    console.log(JSON.stringify(result));
    return;
  }
  const guard = guardLoad('bench:scale', values['allow-loaded']);
  const asked = values.chunks === undefined ? 2_100_000 : wholeFlag(values, 'chunks', 1);
  const kind = values.corpus ?? 'fitted';
  if (!isCorpusKind(kind)) badFlag(`--corpus: unknown corpus '${kind}' (known: ${CORPUS_KINDS.join(', ')})`);
  const manRoot = values['man-root'] ?? DEFAULT_MAN_ROOT;
  const missing = corpusMissing(kind, manRoot);
  if (missing) badFlag(`--corpus ${kind}: ${missing}`);
  const timeoutS = values.timeout === undefined ? 7200 : wholeFlag(values, 'timeout', 1);
  const work = values.work ?? join('.sleuth', 'bench');
  const out = values.out ?? join('bench', 'results', 'scale.json');
  mkdirSync(work, { recursive: true });
  const index = join(work, `scale-${kind}-${asked}`);
  if (existsSync(index) && !existsSync(join(index, 'manifest.json'))) badFlag(`${index} exists and is not an index: remove it or pass another --work`);
  rmSync(index, { recursive: true, force: true });
  settleDisk();
  const before = freeGb(work);
  const loadAtStart = loadNow();
  process.stderr.write(`building ${asked.toLocaleString('en-US')} ${kind} chunks into ${index} (${before} GB free)\n`);
  const built = child(['--mode', 'build', '--corpus', kind, '--man-root', manRoot, '--chunks', String(asked), '--index', index], timeoutS);
  // The man pages may make fewer chunks than asked: the run is for the chunks built.
  const chunks = built.chunks as number;
  settleDisk();
  const after = freeGb(work);
  process.stderr.write(`built in ${(built.build_s as number).toFixed(1)} s (${(built.generate_s as number).toFixed(1)} s generating), ${(built.index_gb as number).toFixed(2)} GB in ${built.segments} segments; querying\n`);
  const queried = child(['--mode', 'query', '--corpus', kind, '--man-root', manRoot, '--chunks', String(chunks), '--index', index], timeoutS);
  settleDisk();
  process.stderr.write(`queried at ${(queried.qps as number).toFixed(0)} q/s; verifying\n`);
  const verified = child(['--mode', 'verify', '--index', index], timeoutS);
  let unchecked: Record<string, number> | undefined;
  if (values['unchecked-too']) {
    const plain = `${index}-unchecked`;
    if (existsSync(plain) && !existsSync(join(plain, 'manifest.json'))) badFlag(`${plain} exists and is not an index: remove it or pass another --work`);
    rmSync(plain, { recursive: true, force: true });
    uncheckedCopy(index, plain);
    settleDisk();
    const q = child(['--mode', 'query', '--corpus', kind, '--man-root', manRoot, '--chunks', String(chunks), '--index', plain], timeoutS);
    rmSync(plain, { recursive: true, force: true });
    unchecked = { load_s: round(q.load_s as number)!, first_pass_qps: round(q.first_pass_qps as number)!, qps: round(q.qps as number)!, p50_ms: round(q.p50_ms as number)! };
  }
  const run = {
    corpus: kind,
    chunks,
    date: new Date().toISOString(),
    ...Object.fromEntries(Object.entries({ ...built, ...queried, ...verified }).map(([k, v]) => [k, typeof v === 'number' ? round(v) : v])),
    ...(unchecked ? { unchecked } : {}),
    index_bytes: dirBytes(index),
    index_bytes_by_part: bytesByPart(index),
    disk_free_gb_before: before,
    disk_free_gb_with_index: after,
    machine: machineOf(loadAtStart),
    ...guard.fields(),
  };
  if (!values.keep) rmSync(index, { recursive: true, force: true });
  // Other sizes' runs, and sections written by hand (earlier_runs, notes), stay as they are.
  const { runs: previous = [], ...others } = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as { runs?: { corpus?: string; chunks: number }[] } & Record<string, unknown>) : {};
  const corpusOf = (r: { corpus?: string }) => r.corpus ?? 'topical';
  const runs = [...previous.filter((r) => corpusOf(r) !== kind || r.chunks !== chunks), run].sort((a, b) => corpusOf(a).localeCompare(corpusOf(b)) || a.chunks - b.chunks);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.tmp`, JSON.stringify({ runs, ...others }, null, 2) + '\n');
  renameSync(`${out}.tmp`, out);
  console.log(JSON.stringify(run, null, 2));
  console.log(`wrote ${out}`);
}

await main();
