/**
 * npm run bench:search — speed and memory of sleuth's index against other engines, on four corpora
 * (bench/corpora/kinds.ts): 'fitted' (generated text fitted to real text's statistics), 'manpages'
 * (real text: the installed man pages, at the size they reach), and the earlier synthetic 'topical'
 * and 'iid' (bench/synth.ts), each with its queries: JS search libraries and SQLite FTS5 in this process's children, and
 * Lucene (Debian's liblucene8-java, bench/peers/LuceneBench.java), Xapian (python3-xapian) and
 * bm25s (pip) through bench/peers/py_bench.py, on exactly the same JSONL and queries. A peer that is
 * not installed is skipped with a line saying how to install it.
 *
 *   node dist/bench/search.js [--sizes 100000,1000000] [--corpora fitted,manpages,topical,iid] [--peers lucene,...]
 *                             [--peers-at N] [--libs-at 100000] [--libs minisearch,...] [--man-root DIR]
 *                             [--work .sleuth/bench] [--out bench/results/search.json] [--fresh]
 *
 * Every engine builds and queries in its own child process, so peak RSS is that engine's alone.
 * Build time is from the corpus file to a saved index, reading and parsing the JSONL included.
 * Queries are single-threaded, top-10, one after another; latency is per query.
 * Writes {"runs": [{engine, corpus, chunks, build_s, peak_rss_mb, index_mb, load_s, qps, p50_ms, p99_ms,
 * grep_literal_p50_ms, grep_scan_p50_ms, grep_alt10k_ms, ...}]} (null where a field does not apply)
 * and prints a table. A peer's row also has its analysis settings, version, and overlap_top10: the
 * mean over queries of |peer's top 10 ∩ sleuth's| / the larger of the two lists, on the same corpus.
 * grep_alt10k_ms is the slowest of three calls of one grep of 10,000 alternatives `(w0|w1|...)` under
 * the default 1 s time cap: the whole call, parsing and planning included (it must stay under 2 s).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { badFlag, benchArgs } from './args.js';
import { guardLoad, LOAD_FLAG } from './load.js';
import { readChunks, readSourceBatches } from '../src/corpus/read.js';
import type { Chunk } from '../src/corpus/chunk.js';
import { Analyzer, buildIndex, openIndex } from '../src/search/index.js';
import { ENGLISH_STOPWORDS } from '../src/search/stopwords.js';
import { dirBytes, GREP_LITERAL, loadNow, machineOf, mb, now, peakRssMb, percentile, round, settleDisk, timeQueries } from './measure.js';
import { CORPUS_KINDS, corpusMissing, corpusVersion, isCorpusKind, writeCorpus, writeCorpusQueries, type CorpusKind } from './corpora/kinds.js';
import { DEFAULT_MAN_ROOT } from './corpora/manpages.js';

export interface Run {
  engine: string;
  corpus: CorpusKind;
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
  /** sleuth only: queries/s of top-10 document numbers and scores, without ids, titles or snippets. */
  qps_docs?: number | null;
  /** Peers: how text becomes terms and how it is scored, the engine's version, and top-10 overlap with sleuth. */
  analysis?: string;
  version?: string;
  overlap_top10?: number | null;
}

const LIBRARIES = ['minisearch', 'wink-bm25-text-search', '@orama/orama', 'sqlite-fts5'] as const;
/** Patterns without a literal of 3+ characters (GREP_LITERAL has them: the prefilter narrows the scan). */
/** An alternation-heavy pattern: analysis must stay linear in it, and the time cap must cover the whole call. */
const GREP_ALTERNATIVES = `(${Array.from({ length: 10_000 }, (_, i) => `w${i}x`).join('|')})`;
const GREP_SCAN = ['\\d{3}\\s+[A-Z]\\w+\\s+\\d{3}\\b', '[A-Z][a-z]+\\s\\d{4}\\s[a-z]+\\s\\d{2}\\b', '\\(\\d\\d\\)'];

function readQueries(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => (JSON.parse(l) as { query: string }).query);
}

async function collect(corpus: string): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for await (const c of readChunks(corpus, 'jsonl')) out.push(c);
  return out;
}

// ---- child processes: one engine each ----

async function childSleuthBuild(corpus: string, index: string) {
  const t = now();
  await buildIndex(readSourceBatches([{ path: corpus, format: 'jsonl' }]), index);
  return { build_s: (now() - t) / 1000, peak_rss_mb: peakRssMb(), index_mb: mb(dirBytes(index)) };
}

async function childSleuthQuery(index: string, queries: string[], topOut?: string) {
  const t = now();
  const ix = await openIndex(index);
  const load_s = (now() - t) / 1000;
  const tops: string[][] = [];
  const q = await timeQueries(queries, (query) => ix.search(query, 10), (hits) => tops.push((hits as { id: string }[]).map((h) => h.id)));
  if (topOut) writeFileSync(topOut, tops.map((ids) => JSON.stringify(ids)).join('\n') + '\n');
  const qps_docs = (await timeQueries(queries, (query) => ix.searchDocs(query, 10))).qps;
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
  return { load_s, ...q, qps_docs, grep_literal_p50_ms: grepP50(GREP_LITERAL), grep_scan_p50_ms: grepP50(GREP_SCAN), grep_alt10k_ms: grepAltMs };
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

// ---- peers: other engines, as programs of their own ----

const PEERS = ['lucene', 'lucene-english', 'xapian', 'bm25s'] as const;
type Peer = (typeof PEERS)[number];
const PEER_DIR = fileURLToPath(new URL('../../bench/peers/', import.meta.url));
const MATCHED = "sleuth's stopwords, Snowball English (Porter2), title and text one field";

interface PeerSpec {
  analysis: string;
  /** What to run to install it, when it is missing. */
  install: string;
  /** The command to build from a corpus, and to query a built index; undefined when the peer is not installed. */
  command(python: string, work: string): ((mode: 'build' | 'query', input: string, index: string, topOut: string) => string[]) | undefined;
}

/** Lucene's jars in Debian's liblucene8-java (/usr/share/java), and a java to run the harness's source. */
function luceneClasspath(): string | undefined {
  const dir = '/usr/share/java';
  if (!existsSync(dir) || spawnSync('java', ['-version']).status !== 0) return undefined;
  const names = readdirSync(dir);
  const jar = (stem: string) => names.find((n) => n === `${stem}.jar`) ?? names.find((n) => n.startsWith(`${stem}-`) && n.endsWith('.jar'));
  const jars = ['lucene-core', 'lucene-analyzers-common'].map(jar);
  return jars.every(Boolean) ? jars.map((j) => join(dir, j!)).join(':') : undefined;
}

function lucene(analysis: 'matched' | 'english'): PeerSpec {
  return {
    analysis: analysis === 'matched'
      ? `StandardTokenizer, lower case, ${MATCHED}; BM25 k1=1.5 b=0.75; 2 indexing threads, merged to one segment`
      : 'EnglishAnalyzer as it comes (its stopwords, possessives, Porter); BM25 k1=1.2 b=0.75; 2 indexing threads, merged to one segment',
    install: 'apt-get install liblucene8-java default-jdk-headless',
    command: (_python, work) => {
      const cp = luceneClasspath();
      if (!cp) return undefined;
      return (mode, input, index, topOut) => ['java', '-Xmx6g', '-cp', cp, join(PEER_DIR, 'LuceneBench.java'), mode, input, index, analysis, join(work, 'stopwords.txt'), '2', topOut];
    },
  };
}

function python(engine: 'xapian' | 'bm25s', module: string, analysis: string, install: string): PeerSpec {
  return {
    analysis,
    install,
    command: (py, work) => {
      if (spawnSync(py, ['-c', `import ${module}`]).status !== 0) return undefined;
      return (mode, input, index, topOut) => [py, join(PEER_DIR, 'py_bench.py'), engine, mode, input, index, join(work, 'stopwords.txt'), topOut];
    },
  };
}

const PEER_SPECS: Record<Peer, PeerSpec> = {
  lucene: lucene('matched'),
  'lucene-english': lucene('english'),
  xapian: python('xapian', 'xapian', `TermGenerator, ${MATCHED}, stemmed terms only; BM25Weight k1=1.5 b=0.75 (k2=0, k3=1, min_normlen 0.5; Xapian's idf has no +1)`, 'apt-get install python3-xapian (for the python given by --python, default /usr/bin/python3)'),
  bm25s: python('bm25s', 'bm25s, Stemmer', `bm25s's tokenizer with sleuth's word pattern (letters and digits, 1+ characters, joined by apostrophes; curly ones folded), ${MATCHED} (PyStemmer); method lucene, k1=1.5 b=0.75`, 'pip install bm25s==0.3.11 PyStemmer==3.1.0 (into the python given by --python)'),
};

function runProgram(argv: string[], timeoutS: number): Record<string, number | string> | { error: string } {
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: timeoutS * 1000, maxBuffer: 1 << 26 });
  const line = r.stdout?.trim().split('\n').pop() ?? '';
  if (r.status === 0 && line.startsWith('{')) return JSON.parse(line) as Record<string, number | string>;
  return { error: r.error ? String(r.error.message) : `exit ${r.status}: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}` };
}

function readTops(path: string): string[][] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as string[]);
}

/** Mean over the queries both measured (and either answered) of |a ∩ b| / max(|a|, |b|). */
function overlap(a: string[][], b: string[][]): number | null {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = new Set(b[i]!);
    const size = Math.max(x.length, y.size);
    if (size === 0) continue;
    sum += x.filter((id) => y.has(id)).length / size;
    n++;
  }
  return n === 0 ? null : sum / n;
}

// ---- parent ----

const self = fileURLToPath(import.meta.url);

function child(args: string[], timeoutS: number): Record<string, number> | { error: string } {
  const r = spawnSync(process.execPath, ['--max-old-space-size=12000', self, '--child', ...args], { encoding: 'utf8', timeout: timeoutS * 1000, maxBuffer: 1 << 26 });
  const line = r.stdout?.trim().split('\n').pop() ?? '';
  if (r.status === 0 && line.startsWith('{')) return JSON.parse(line) as Record<string, number>;
  return { error: r.error ? String(r.error.message) : `exit ${r.status}: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}` };
}

function emptyRun(engine: string, corpus: CorpusKind, chunks: number): Run {
  return { engine, corpus, chunks, build_s: null, peak_rss_mb: null, index_mb: null, load_s: null, qps: null, p50_ms: null, p99_ms: null, grep_literal_p50_ms: null, grep_scan_p50_ms: null, grep_alt10k_ms: null };
}

function fill(run: Run, values: Record<string, number>): void {
  for (const key of ['build_s', 'peak_rss_mb', 'index_mb', 'load_s', 'qps', 'qps_docs', 'p50_ms', 'p99_ms', 'grep_literal_p50_ms', 'grep_scan_p50_ms', 'grep_alt10k_ms'] as const) {
    const v = values[key];
    if (typeof v === 'number') (run[key] as number | null) = round(v, key.endsWith('_ms') ? 3 : 3);
  }
}

function table(runs: Run[]): string {
  const cols: (keyof Run)[] = ['engine', 'corpus', 'chunks', 'build_s', 'peak_rss_mb', 'index_mb', 'load_s', 'qps', 'p50_ms', 'p99_ms', 'overlap_top10', 'grep_literal_p50_ms', 'grep_scan_p50_ms'];
  const cell = (v: unknown) => (v === null ? '-' : typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 3)) : String(v));
  const rows = [cols.map(String), ...runs.map((r) => cols.map((c) => cell(r[c] ?? null)))];
  const widths = cols.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r, j) => r.map((c, i) => (i < 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ') + (j === 0 ? '\n' + widths.map((w) => '-'.repeat(w)).join('  ') : '')).join('\n');
}

async function main(): Promise<void> {
  const { values } = benchArgs(
    {
      child: { type: 'boolean' }, mode: { type: 'string' }, engine: { type: 'string' }, corpus: { type: 'string' }, index: { type: 'string' }, queries: { type: 'string' },
      sizes: { type: 'string' }, 'libs-at': { type: 'string' }, libs: { type: 'string' }, work: { type: 'string' }, out: { type: 'string' }, timeout: { type: 'string' }, 'build-runs': { type: 'string' },
      corpora: { type: 'string' }, peers: { type: 'string' }, merge: { type: 'boolean' }, fresh: { type: 'boolean' }, 'man-root': { type: 'string' }, 'peers-at': { type: 'string' }, 'peers-on': { type: 'string' }, python: { type: 'string' }, 'top-out': { type: 'string' },
      ...LOAD_FLAG,
    },
    `usage: npm run bench:search -- [--sizes N,N] [--corpora fitted,manpages,topical,iid] [--man-root DIR] [--peers NAME,...] [--peers-at N] [--peers-on CORPORA]
                                [--python PATH] [--fresh] [--libs NAME,...] [--libs-at N] [--build-runs N] [--work DIR] [--out FILE] [--timeout S]

Builds and queries sleuth's index on the corpora (--corpora, default all: fitted, manpages (the man
pages under --man-root, default ${DEFAULT_MAN_ROOT}, at most the size they reach), topical, iid) of each size
(default 100000,1000000); the peers (lucene, lucene-english, xapian, bm25s; --peers '' for none) at
--peers-at chunks (default the largest size) on the --peers-on corpora (default all), each skipped with how to install it when missing
(Xapian and bm25s run in --python, default /usr/bin/python3); and the libraries (minisearch,
wink-bm25-text-search, @orama/orama, sqlite-fts5; --libs '' for none) at --libs-at chunks (default
100000). sleuth's build runs --build-runs times (default 3) and the median is reported; writes
bench/results/search.json and prints a table. The runs already in --out that this run does not
measure again (same engine, corpus and size) stay, each with the date it was measured (--merge, the
default), unless --fresh.`,
  );
  if (values.child) {
    const queries = values.queries ? readQueries(values.queries) : [];
    let result: object;
    if (values.mode === 'build') result = await childSleuthBuild(values.corpus!, values.index!);
    else if (values.mode === 'query') result = await childSleuthQuery(values.index!, queries, values['top-out']);
    else result = await childLibrary(values.engine!, values.corpus!, values.work!, queries);
    console.log(JSON.stringify(result));
    return;
  }

  const guard = guardLoad('bench:search', values['allow-loaded']);
  const sizes = (values.sizes ?? '100000,1000000').split(',').map(Number).filter((n) => n > 0);
  const corpusNames = (values.corpora ?? CORPUS_KINDS.join(',')).split(',').filter(Boolean);
  for (const c of corpusNames) if (!isCorpusKind(c)) badFlag(`--corpora: unknown corpus '${c}' (known: ${CORPUS_KINDS.join(', ')})`);
  if (values.merge && values.fresh) badFlag('--merge and --fresh: give one (--merge is the default)');
  const manRoot = values['man-root'] ?? DEFAULT_MAN_ROOT;
  if (values['man-root'] !== undefined && !existsSync(manRoot)) badFlag(`--man-root: ${manRoot} does not exist`);
  const corpora = (corpusNames as CorpusKind[]).filter((kind) => {
    const missing = corpusMissing(kind, manRoot);
    if (missing) process.stderr.write(`${kind}: skipped, ${missing}\n`);
    return !missing;
  });
  const libsAt = Number(values['libs-at'] ?? 100000);
  const libs = values.libs !== undefined ? values.libs.split(',').filter(Boolean) : [...LIBRARIES];
  const peers = (values.peers !== undefined ? values.peers.split(',').filter(Boolean) : [...PEERS]) as Peer[];
  for (const p of peers) if (!PEERS.includes(p)) badFlag(`--peers: unknown peer '${p}' (known: ${PEERS.join(', ')})`);
  const peersAt = Number(values['peers-at'] ?? Math.max(...sizes));
  const peersOn = (values['peers-on'] ?? corpora.join(',')).split(',').filter(Boolean);
  const py = values.python ?? '/usr/bin/python3';
  const work = values.work ?? join('.sleuth', 'bench');
  const out = values.out ?? join('bench', 'results', 'search.json');
  const timeoutS = Number(values.timeout ?? 1800);
  const buildRuns = Number(values['build-runs'] ?? 3);
  if (!Number.isInteger(buildRuns) || buildRuns < 1) badFlag(`--build-runs must be a whole number >= 1, got '${values['build-runs']}'`);
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'stopwords.txt'), ENGLISH_STOPWORDS.join('\n') + '\n');

  // Each run is dated; what --out holds already stays unless measured again (or --fresh).
  const existing = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as { runs: Run[]; date?: string; machine?: unknown } & Record<string, unknown>) : undefined;
  const previous = !values.fresh && existing ? existing : { runs: [] };
  // A kept run keeps the machine (and its load average) it was measured with: the file's, when it had none of its own.
  const kept: (Run & { date?: string; machine?: unknown })[] = previous.runs.map((r) => ({ date: previous.date, machine: 'machine' in previous ? previous.machine : undefined, ...r }));
  // Sections other benchmarks merged into the file (the pruning runs of the raw-postings engine, notes) stay as they are.
  const { machine: _machine, runs: _runs, skipped: _skipped, date: _date, ...others }: Record<string, unknown> = existing ?? {};
  const started = new Date().toISOString();
  const loadAtStart = loadNow();
  const runs: (Run & { date?: string })[] = [];
  const skipped: { engine: string; install: string }[] = [];
  // Results are written after every run, so an interrupted benchmark keeps what it measured.
  const save = () => {
    mkdirSync(dirname(out), { recursive: true });
    const machine = { ...machineOf(loadAtStart), ...guard.fields() };
    const same = (a: Run, b: Run) => a.engine === b.engine && a.corpus === b.corpus && a.chunks === b.chunks;
    const all = [...kept.filter((k) => !runs.some((r) => same(r, k))), ...runs.map((r) => ({ ...r, date: started, machine }))];
    writeFileSync(`${out}.tmp`, JSON.stringify({ machine, runs: all, skipped, ...others }, null, 2) + '\n');
    renameSync(`${out}.tmp`, out);
  };
  // A corpus file is written once and reused (the fitted one's name has its profile's digest: a
  // refit writes it again); the man pages' is written whole first, to learn the size they reach (a
  // larger size asked for is that size).
  const corpusFile = (kind: CorpusKind, n: number) => join(work, kind === 'iid' ? `synth-${n}.jsonl` : kind === 'manpages' ? `manpages-${n}.jsonl` : kind === 'fitted' ? `synth-fitted-${corpusVersion(kind)}-${n}.jsonl` : `synth-${kind}-${n}.jsonl`);
  const corpusOf = async (kind: CorpusKind, n: number) => {
    const corpus = corpusFile(kind, n);
    if (!existsSync(corpus)) {
      process.stderr.write(`generating ${n.toLocaleString('en-US')} ${kind} chunks -> ${corpus}\n`);
      await writeCorpus(corpus, kind, n, 1, manRoot);
    }
    return corpus;
  };
  let manChunks: number | undefined;
  const sizeOn = async (kind: CorpusKind, n: number) => {
    if (kind !== 'manpages') return n;
    if (manChunks === undefined) {
      const all = join(work, 'manpages-all.jsonl');
      process.stderr.write(`reading the man pages under ${manRoot} -> ${all}\n`);
      manChunks = await writeCorpus(all, 'manpages', Number.MAX_SAFE_INTEGER, 1, manRoot);
      renameSync(all, corpusFile('manpages', manChunks));
      process.stderr.write(`  ${manChunks.toLocaleString('en-US')} chunks\n`);
    }
    return Math.min(n, manChunks);
  };
  const sleuthTops = (kind: CorpusKind, n: number) => join(work, `top-sleuth-${kind}-${n}.jsonl`);
  for (const kind of corpora) {
    // The fitted corpus's queries are written from its first passages (fitted.ts's QUERY_POOL of
    // them): written once, for the largest size, they are the same at every size from QUERY_POOL up.
    const queries = join(work, `queries-${kind}.jsonl`);
    const kindSizes: number[] = [];
    // One at a time: the first reads the man pages, the others reuse what it learned.
    for (const n of sizes) if (!kindSizes.includes(await sizeOn(kind, n))) kindSizes.push(await sizeOn(kind, n));
    const kindPeersAt = await sizeOn(kind, peersAt);
    const kindLibsAt = await sizeOn(kind, libsAt);
    await writeCorpusQueries(queries, kind, Math.max(...kindSizes, kindPeersAt, kindLibsAt), 1, manRoot);
    // sleuth at every size first, then the peers and the libraries at one size each.
    for (const n of kindSizes) {
      const corpus = await corpusOf(kind, n);
      const index = join(work, `sleuth-${kind}-${n}`);
      process.stderr.write(`sleuth: building ${n.toLocaleString('en-US')} ${kind} chunks\n`);
      const run = emptyRun('sleuth', kind, n);
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
        const queried = child(['--mode', 'query', '--index', index, '--queries', queries, '--top-out', sleuthTops(kind, n)], timeoutS);
        if ('error' in queried) process.stderr.write(`  failed: ${queried.error}\n`);
        else fill(run, queried);
      }
      runs.push(run);
      save();
    }
    for (const peer of peersOn.includes(kind) ? peers : []) {
      const spec = PEER_SPECS[peer];
      const command = spec.command(py, work);
      if (!command) {
        process.stderr.write(`${peer}: not installed, skipped (install: ${spec.install})\n`);
        if (!skipped.some((s) => s.engine === peer)) skipped.push({ engine: peer, install: spec.install });
        continue;
      }
      const corpus = await corpusOf(kind, kindPeersAt);
      const index = join(work, `${peer}-${kind}-${kindPeersAt}`);
      const tops = join(work, `top-${peer}-${kind}-${kindPeersAt}.jsonl`);
      const run: Run = { ...emptyRun(peer, kind, kindPeersAt), analysis: spec.analysis };
      process.stderr.write(`${peer}: building ${kindPeersAt.toLocaleString('en-US')} ${kind} chunks\n`);
      rmSync(index, { recursive: true, force: true });
      settleDisk();
      const built = runProgram(command('build', corpus, index, tops), timeoutS);
      if ('error' in built) process.stderr.write(`  failed: ${built.error}\n`);
      else {
        fill(run, built as Record<string, number>);
        process.stderr.write(`  built in ${Number(built.build_s).toFixed(1)} s; querying\n`);
        const queried = runProgram(command('query', queries, index, tops), timeoutS);
        if ('error' in queried) process.stderr.write(`  failed: ${queried.error}\n`);
        else {
          const { peak_rss_mb: _queryRss, ...rest } = queried;
          fill(run, rest as Record<string, number>);
          run.version = String(queried.version);
          if (existsSync(sleuthTops(kind, kindPeersAt))) run.overlap_top10 = round(overlap(readTops(sleuthTops(kind, kindPeersAt)), readTops(tops)));
        }
      }
      // A peer's index is large and read by nothing else: removed once measured.
      rmSync(index, { recursive: true, force: true });
      runs.push(run);
      save();
    }
    if (libs.length > 0) {
      const corpus = await corpusOf(kind, kindLibsAt);
      for (const engine of libs) {
        process.stderr.write(`${engine}: building and querying ${kindLibsAt.toLocaleString('en-US')} ${kind} chunks\n`);
        const lib = emptyRun(engine, kind, kindLibsAt);
        settleDisk();
        const r = child(['--mode', 'library', '--engine', engine, '--corpus', corpus, '--work', work, '--queries', queries], timeoutS);
        if ('error' in r) process.stderr.write(`  failed: ${r.error}\n`);
        else fill(lib, r);
        runs.push(lib);
        save();
      }
    }
  }

  console.log(table(runs));
  for (const kind of corpora) for (const at of new Set([await sizeOn(kind, libsAt), await sizeOn(kind, peersAt)])) {
    const base = runs.find((r) => r.engine === 'sleuth' && r.corpus === kind && r.chunks === at);
    const others = runs.filter((x) => x.engine !== 'sleuth' && x.corpus === kind && x.chunks === at);
    if (!base || others.length === 0) continue;
    console.log(`\n${kind}, ${at.toLocaleString('en-US')} chunks, sleuth vs each engine (x = times better):`);
    for (const r of others) {
      const ratio = (a: number | null, b: number | null) => (a && b ? `${(a / b).toFixed(1)}x` : '-');
      console.log(`  ${r.engine.padEnd(22)} build ${ratio(r.build_s, base.build_s)}  qps ${ratio(base.qps, r.qps)}  p50 ${ratio(r.p50_ms, base.p50_ms)}  memory ${ratio(r.peak_rss_mb, base.peak_rss_mb)}`);
    }
  }
  console.log(`\nwrote ${out}`);
}

await main();
