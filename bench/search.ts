/**
 * npm run bench:search — speed and memory of sleuth's index against JS search libraries and
 * SQLite FTS5, on deterministic synthetic corpora (bench/synth.ts) and the embedded questions.
 *
 *   node dist/bench/search.js [--sizes 100000,1000000] [--libs-at 100000] [--libs minisearch,...]
 *                             [--work .sleuth/bench] [--out bench/results/search.json]
 *
 * Every engine builds and queries in its own child process, so peak RSS is that engine's alone.
 * Build time is from the corpus file to a saved index, reading and parsing the JSONL included.
 * Queries are single-threaded, top-10, one after another; latency is per query.
 * Writes {"runs": [{engine, chunks, build_s, peak_rss_mb, index_mb, load_s, qps, p50_ms, p99_ms,
 * grep_literal_p50_ms, grep_scan_p50_ms, grep_alt10k_ms}]} (null where a field does not apply) and prints a table.
 * grep_alt10k_ms is the slowest of three calls of one grep of 10,000 alternatives `(w0|w1|...)` under
 * the default 1 s time cap: the whole call, parsing and planning included (it must stay under 2 s).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { badFlag, benchArgs } from './args.js';
import { readChunks, readSourceBatches } from '../src/corpus/read.js';
import type { Chunk } from '../src/corpus/chunk.js';
import { Analyzer, buildIndex, openIndex } from '../src/search/index.js';
import { writeQueries, writeSynthCorpus } from './synth.js';

export interface Run {
  engine: string;
  chunks: number;
  build_s: number | null;
  peak_rss_mb: number | null;
  index_mb: number | null;
  load_s: number | null;
  qps: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  grep_literal_p50_ms: number | null;
  grep_scan_p50_ms: number | null;
  grep_alt10k_ms: number | null;
  /** sleuth only: every build's time, of which build_s is the median. */
  build_runs_s?: number[];
}

const LIBRARIES = ['minisearch', 'wink-bm25-text-search', '@orama/orama', 'sqlite-fts5'] as const;
/** Patterns with a literal of 3+ characters (the prefilter narrows the scan) and without one. */
const GREP_LITERAL = ['Shirley Temple', '(?i)corliss', 'American (comedy|drama) film', '(?i)kiss\\s+and\\s+tell', 'Protocol of the United'];
/** An alternation-heavy pattern: analysis must stay linear in it, and the time cap must cover the whole call. */
const GREP_ALTERNATIVES = `(${Array.from({ length: 10_000 }, (_, i) => `w${i}x`).join('|')})`;
const GREP_SCAN = ['\\d{3}\\s+[A-Z]\\w+\\s+\\d{3}\\b', '[A-Z][a-z]+\\s\\d{4}\\s[a-z]+\\s\\d{2}\\b', '\\(\\d\\d\\)'];

const now = () => performance.now();
const mb = (bytes: number) => bytes / 1e6;
const round = (x: number | null, digits = 3) => (x === null ? null : Number(x.toFixed(digits)));
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

function dirBytes(path: string): number {
  if (!statSync(path).isDirectory()) return statSync(path).size;
  return readdirSync(path).reduce((s, f) => s + dirBytes(join(path, f)), 0);
}

function readQueries(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => (JSON.parse(l) as { query: string }).query);
}

async function collect(corpus: string): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for await (const c of readChunks(corpus, 'jsonl')) out.push(c);
  return out;
}

/** Wall-clock budget for one engine's queries: a slow engine is measured on the queries it finished. */
const QUERY_BUDGET_MS = 60_000;

/**
 * Run queries one after another, after one warm-up pass over them (at most WARM_MS), the same for
 * every engine; latency stats in ms. The measure is steady-state throughput, what an RL run that
 * queries an index hundreds of thousands of times sees: a just-opened sleuth index reads each
 * term's postings from disk on first use, SQLite fills its page cache, JIT compilers warm up.
 */
const WARM_MS = 30_000;
async function timeQueries(queries: string[], run: (q: string) => unknown): Promise<{ qps: number; p50_ms: number; p99_ms: number }> {
  const warm = now();
  for (const q of queries) {
    await run(q);
    if (now() - warm > WARM_MS) break;
  }
  const lat: number[] = [];
  const start = now();
  for (const q of queries) {
    const t = now();
    await run(q);
    lat.push(now() - t);
    if (now() - start > QUERY_BUDGET_MS) break;
  }
  const total = (now() - start) / 1000;
  return { qps: lat.length / total, p50_ms: percentile(lat, 50), p99_ms: percentile(lat, 99) };
}

/**
 * Write back what earlier runs left dirty in the page cache (`sync`), so that one run's files are
 * not flushed to disk during the next run's timing (seen before this: three back-to-back 1M
 * builds, each writing 1.75 GB, took 24.1, 27.3 and 27.4 s).
 */
function settleDisk(): void {
  spawnSync('sync', { stdio: 'ignore' });
}

// ---- child processes: one engine each ----

async function childSleuthBuild(corpus: string, index: string) {
  const t = now();
  await buildIndex(readSourceBatches([{ path: corpus, format: 'jsonl' }]), index);
  return { build_s: (now() - t) / 1000, peak_rss_mb: peakRssMb(), index_mb: mb(dirBytes(index)) };
}

async function childSleuthQuery(index: string, queries: string[]) {
  const t = now();
  const ix = await openIndex(index);
  const load_s = (now() - t) / 1000;
  const q = await timeQueries(queries, (query) => ix.search(query, 10));
  const grepP50 = (patterns: string[]) => {
    // One warm-up pass, as for the queries (the first grep reads the prefilter and text pages).
    for (const p of patterns) ix.grep(p, { k: 10 });
    const lat: number[] = [];
    for (let rep = 0; rep < 3; rep++) for (const p of patterns) {
      const s = now();
      ix.grep(p, { k: 10 });
      lat.push(now() - s);
    }
    return percentile(lat, 50);
  };
  // Not warmed up: the first call is the one that parses, plans and compiles the pattern.
  let grepAltMs = 0;
  for (let rep = 0; rep < 3; rep++) {
    const s = now();
    ix.grep(GREP_ALTERNATIVES, { k: 10 });
    grepAltMs = Math.max(grepAltMs, now() - s);
  }
  return { load_s, ...q, grep_literal_p50_ms: grepP50(GREP_LITERAL), grep_scan_p50_ms: grepP50(GREP_SCAN), grep_alt10k_ms: grepAltMs };
}

/** A library: build from the chunks, serialise to disk, load it back, query the loaded copy. */
async function childLibrary(engine: string, corpus: string, work: string, queries: string[]) {
  const analyzer = new Analyzer();
  const require = createRequire(import.meta.url);
  const file = join(work, `${engine.replace(/\W/g, '_')}.index`);
  rmSync(file, { force: true });
  let build_s: number;
  let load_s: number;
  let search: (q: string) => unknown;
  // Build time counts reading the corpus file, as sleuth's does (it streams from the file).
  let t = now();
  const chunks = await collect(corpus);
  if (engine === 'minisearch') {
    const { default: MiniSearch } = await import('minisearch');
    // The same analysis as sleuth (Porter2, stopwords), so the comparison is of engines, not analyzers.
    const options = { fields: ['title', 'text'], tokenize: (s: string) => analyzer.terms(s), processTerm: (s: string) => s };
    const ms = new MiniSearch<Chunk>(options);
    ms.addAll(chunks);
    build_s = (now() - t) / 1000;
    writeFileSync(file, JSON.stringify(ms));
    t = now();
    const loaded = MiniSearch.loadJSON<Chunk>(readFileSync(file, 'utf8'), options);
    load_s = (now() - t) / 1000;
    search = (q) => loaded.search(q).slice(0, 10);
  } else if (engine === 'wink-bm25-text-search') {
    type Wink = { defineConfig(c: object): void; definePrepTasks(t: ((s: string) => string[])[]): void; addDoc(d: object, id: string): void; consolidate(): void; search(q: string, k: number): unknown; exportJSON(): string; importJSON(j: string): void };
    const make = require('wink-bm25-text-search') as () => Wink;
    const setup = (e: Wink) => {
      e.defineConfig({ fldWeights: { title: 1, text: 1 }, bm25Params: { k1: 1.5, b: 0.75 } });
      e.definePrepTasks([(s) => analyzer.terms(s)]);
    };
    const e = make();
    setup(e);
    for (const c of chunks) e.addDoc({ title: c.title, text: c.text }, c.id);
    e.consolidate();
    build_s = (now() - t) / 1000;
    writeFileSync(file, e.exportJSON());
    t = now();
    const loaded = make();
    setup(loaded);
    loaded.importJSON(readFileSync(file, 'utf8'));
    load_s = (now() - t) / 1000;
    search = (q) => loaded.search(q, 10);
  } else if (engine === '@orama/orama') {
    const orama = await import('@orama/orama');
    const schema = { id: 'string', title: 'string', text: 'string' } as const;
    const db = orama.create({ schema });
    await orama.insertMultiple(db, chunks as never, 1000);
    build_s = (now() - t) / 1000;
    let loaded = db;
    try {
      writeFileSync(file, JSON.stringify(orama.save(db)));
      t = now();
      loaded = orama.create({ schema });
      orama.load(loaded, JSON.parse(readFileSync(file, 'utf8')));
      load_s = (now() - t) / 1000;
    } catch (err) {
      // Orama's saved form can exceed what one JSON string may hold: then no size or load time.
      process.stderr.write(`orama: cannot save/load (${(err as Error).message}); querying the built index\n`);
      rmSync(file, { force: true });
      load_s = Number.NaN;
    }
    search = (q) => orama.search(loaded, { term: q, limit: 10, properties: ['title', 'text'] });
  } else if (engine === 'sqlite-fts5') {
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const db = new Database(file);
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec("CREATE VIRTUAL TABLE c USING fts5(id UNINDEXED, title, text, tokenize = 'porter unicode61')");
    const insert = db.prepare('INSERT INTO c (id, title, text) VALUES (?, ?, ?)');
    db.transaction(() => {
      for (const c of chunks) insert.run(c.id, c.title, c.text);
    })();
    db.exec("INSERT INTO c(c) VALUES('optimize')");
    db.close();
    build_s = (now() - t) / 1000;
    t = now();
    const ro = new Database(file, { readonly: true });
    const stmt = ro.prepare('SELECT id, bm25(c) AS score FROM c WHERE c MATCH ? ORDER BY bm25(c) LIMIT 10');
    load_s = (now() - t) / 1000;
    // FTS5 has no stopword list: query the question's non-stopword words (it stems them itself).
    const plain = new Analyzer({ stemmer: 'none' });
    search = (q) => {
      const words = [...new Set(plain.terms(q))].map((w) => `"${w.replace(/"/g, '""')}"`);
      return words.length ? stmt.all(words.join(' OR ')) : [];
    };
  } else {
    throw new Error(`unknown engine ${engine}`);
  }
  const q = await timeQueries(queries, search);
  const saved = existsSync(file);
  return { build_s, peak_rss_mb: peakRssMb(), ...(saved ? { index_mb: mb(dirBytes(file)) } : {}), ...(Number.isNaN(load_s) ? {} : { load_s }), ...q };
}

// ---- parent ----

const self = fileURLToPath(import.meta.url);

function child(args: string[], timeoutS: number): Record<string, number> | { error: string } {
  const r = spawnSync(process.execPath, ['--max-old-space-size=12000', self, '--child', ...args], { encoding: 'utf8', timeout: timeoutS * 1000, maxBuffer: 1 << 26 });
  const line = r.stdout?.trim().split('\n').pop() ?? '';
  if (r.status === 0 && line.startsWith('{')) return JSON.parse(line) as Record<string, number>;
  return { error: r.error ? String(r.error.message) : `exit ${r.status}: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}` };
}

function emptyRun(engine: string, chunks: number): Run {
  return { engine, chunks, build_s: null, peak_rss_mb: null, index_mb: null, load_s: null, qps: null, p50_ms: null, p99_ms: null, grep_literal_p50_ms: null, grep_scan_p50_ms: null, grep_alt10k_ms: null };
}

function fill(run: Run, values: Record<string, number>): void {
  for (const key of Object.keys(run) as (keyof Run)[]) {
    if (key === 'engine' || key === 'chunks') continue;
    const v = values[key];
    if (typeof v === 'number') (run[key] as number | null) = round(v, key.endsWith('_ms') ? 3 : 3);
  }
}

function table(runs: Run[]): string {
  const cols: (keyof Run)[] = ['engine', 'chunks', 'build_s', 'peak_rss_mb', 'index_mb', 'load_s', 'qps', 'p50_ms', 'p99_ms', 'grep_literal_p50_ms', 'grep_scan_p50_ms', 'grep_alt10k_ms'];
  const cell = (v: unknown) => (v === null ? '-' : typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 3)) : String(v));
  const rows = [cols.map(String), ...runs.map((r) => cols.map((c) => cell(r[c])))];
  const widths = cols.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r, j) => r.map((c, i) => (i < 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ') + (j === 0 ? '\n' + widths.map((w) => '-'.repeat(w)).join('  ') : '')).join('\n');
}

async function main(): Promise<void> {
  const { values } = benchArgs(
    {
      child: { type: 'boolean' }, mode: { type: 'string' }, engine: { type: 'string' }, corpus: { type: 'string' }, index: { type: 'string' }, queries: { type: 'string' },
      sizes: { type: 'string' }, 'libs-at': { type: 'string' }, libs: { type: 'string' }, work: { type: 'string' }, out: { type: 'string' }, timeout: { type: 'string' }, 'build-runs': { type: 'string' },
    },
    `usage: npm run bench:search -- [--sizes N,N] [--libs NAME,...] [--libs-at N] [--build-runs N] [--work DIR] [--out FILE] [--timeout S]

Builds and queries sleuth's index on synthetic corpora of each size (default 100000,1000000) and the
libraries (minisearch, wink-bm25-text-search, @orama/orama, sqlite-fts5; --libs '' for none) at
--libs-at chunks (default 100000); sleuth's build runs --build-runs times (default 3) and the median
is reported; writes bench/results/search.json and prints a table.`,
  );
  if (values.child) {
    const queries = values.queries ? readQueries(values.queries) : [];
    let result: object;
    if (values.mode === 'build') result = await childSleuthBuild(values.corpus!, values.index!);
    else if (values.mode === 'query') result = await childSleuthQuery(values.index!, queries);
    else result = await childLibrary(values.engine!, values.corpus!, values.work!, queries);
    console.log(JSON.stringify(result));
    return;
  }

  const sizes = (values.sizes ?? '100000,1000000').split(',').map(Number).filter((n) => n > 0);
  const libsAt = Number(values['libs-at'] ?? 100000);
  const libs = values.libs !== undefined ? values.libs.split(',').filter(Boolean) : [...LIBRARIES];
  const work = values.work ?? join('.sleuth', 'bench');
  const out = values.out ?? join('bench', 'results', 'search.json');
  const timeoutS = Number(values.timeout ?? 1800);
  const buildRuns = Number(values['build-runs'] ?? 3);
  if (!Number.isInteger(buildRuns) || buildRuns < 1) badFlag(`--build-runs must be a whole number >= 1, got '${values['build-runs']}'`);
  mkdirSync(work, { recursive: true });
  const queries = join(work, 'queries.jsonl');
  await writeQueries(queries);

  const runs: Run[] = [];
  // Results are written after every run, so an interrupted benchmark keeps what it measured.
  const save = () => {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(`${out}.tmp`, JSON.stringify({ runs }, null, 2) + '\n');
    renameSync(`${out}.tmp`, out);
  };
  const corpusOf = async (n: number) => {
    const corpus = join(work, `synth-${n}.jsonl`);
    if (!existsSync(corpus)) {
      process.stderr.write(`generating ${n.toLocaleString('en-US')} synthetic chunks -> ${corpus}\n`);
      await writeSynthCorpus(corpus, n);
    }
    return corpus;
  };
  // sleuth at every size first, then the libraries at one size.
  for (const n of sizes) {
    const corpus = await corpusOf(n);
    const index = join(work, `sleuth-${n}`);
    process.stderr.write(`sleuth: building ${n.toLocaleString('en-US')} chunks\n`);
    const run = emptyRun('sleuth', n);
    // This shared VM's speed drifts by a third from minute to minute: sleuth's build is measured
    // `--build-runs` times (default 3), and the run of median build time is reported, with every
    // time in build_runs_s.
    const builds: Record<string, number>[] = [];
    let built: Record<string, number> | { error: string } = { error: 'no build run' };
    for (let i = 0; i < buildRuns; i++) {
      // Every run starts from the same state: no index at the path (replacing one would put its
      // removal in the timed build) and nothing left to write back from the run before.
      rmSync(index, { recursive: true, force: true });
      settleDisk();
      built = child(['--mode', 'build', '--corpus', corpus, '--index', index], timeoutS);
      if ('error' in built) break;
      builds.push(built);
      process.stderr.write(`  build ${i + 1}: ${built.build_s!.toFixed(1)} s\n`);
    }
    if ('error' in built) process.stderr.write(`  failed: ${built.error}\n`);
    else {
      const sorted = [...builds].sort((x, y) => x.build_s! - y.build_s!);
      fill(run, sorted[(sorted.length - 1) >> 1]!);
      run.build_runs_s = builds.map((b) => round(b.build_s!)!);
      process.stderr.write(`sleuth: querying\n`);
      const queried = child(['--mode', 'query', '--index', index, '--queries', queries], timeoutS);
      if ('error' in queried) process.stderr.write(`  failed: ${queried.error}\n`);
      else fill(run, queried);
    }
    runs.push(run);
    save();
  }
  if (libs.length > 0) {
    const corpus = await corpusOf(libsAt);
    for (const engine of libs) {
      process.stderr.write(`${engine}: building and querying ${libsAt.toLocaleString('en-US')} chunks\n`);
      const lib = emptyRun(engine, libsAt);
      settleDisk();
      const r = child(['--mode', 'library', '--engine', engine, '--corpus', corpus, '--work', work, '--queries', queries], timeoutS);
      if ('error' in r) process.stderr.write(`  failed: ${r.error}\n`);
      else fill(lib, r);
      runs.push(lib);
      save();
    }
  }

  console.log(table(runs));
  const base = runs.find((r) => r.engine === 'sleuth' && r.chunks === libsAt);
  if (base) {
    console.log(`\nat ${libsAt.toLocaleString('en-US')} chunks, sleuth vs each library (x = times better):`);
    for (const r of runs.filter((x) => x.engine !== 'sleuth' && x.chunks === libsAt)) {
      const ratio = (a: number | null, b: number | null) => (a && b ? `${(a / b).toFixed(1)}x` : '-');
      console.log(`  ${r.engine.padEnd(22)} build ${ratio(r.build_s, base.build_s)}  qps ${ratio(base.qps, r.qps)}  p50 ${ratio(r.p50_ms, base.p50_ms)}  memory ${ratio(r.peak_rss_mb, base.peak_rss_mb)}`);
    }
  }
  console.log(`\nwrote ${out}`);
}

await main();
