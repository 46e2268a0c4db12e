/**
 * npm run bench:env — is the environment ever the bottleneck of a run?
 *
 * Drives many concurrent episodes (default 256 in flight) of a scripted mix of tool calls
 * (bm25_search, grep_corpus, read_document, curate, drop_curated, finish) through runEpisode over
 * one index, and reports tool calls per second and tool latency (p50/p99, overall and per tool,
 * as the episode sees it, queueing included). Search and grep run in a worker pool; the time the
 * workers spent per request (queue wait excluded) is reported too, as that is where the time goes.
 *
 *   node dist/bench/env.js [--index DIR] [--episodes N] [--rounds N] [--warmup N] [--concurrency N]
 *                          [--workers N] [--group N] [--cache] [--lazy] [--mix default|no-grep] [--out FILE]
 *
 * --rounds N: the measured episodes run N times over (default 5), and the rate reported is the median
 * round's: on a shared VM the same code measures up to a third apart from one minute to the next, so
 * one round alone says little. Latencies and worker times are over all rounds.
 *
 * --group N: episodes come in groups of N that share a task, as a GRPO group of rollouts of one prompt
 * does: their first search is the same question (everything after it is drawn per episode). It changes
 * nothing without --cache, which then answers the repeated first searches from the cache.
 * --warmup N: episodes run first and reported apart (the index is read from disk as calls touch it,
 * so the first calls of a fresh process are slower than a long run's). The pool's workers read all
 * chunk texts and the grep prefilter before the clock starts (index ready in ...), unless --lazy.
 *
 * Without --index it uses the synthetic corpus of bench/synth.ts (--chunks N, default 1,000,000),
 * building its index once into .sleuth/bench/.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { seededRandom } from '../src/random.js';
import { availableParallelism, loadavg } from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { badFlag, benchArgs, wholeFlag } from './args.js';
import { guardLoad, LOAD_FLAG } from './load.js';
import { runEpisode } from '../src/agent/episode.js';
import type { Agent, AgentCall, AgentTurn, ToolExchange } from '../src/agent/types.js';
import { SearchEnvironment, type SearchBackend } from '../src/suites/search/env.js';
import { CachedBackend } from './search-cache.js';
import { SearchWorkers } from '../src/suites/search/search-workers.js';
import { openIndex, type SearchIndex } from '../src/search/index.js';
import { readSharedBytes } from '../src/search/open.js';
import type { Task } from '../src/tasks/task.js';
import { embeddedQuestions, synthIndex } from './synth.js';

/** The same seeded PRNG as the statistics (mulberry32): the same mix on every run. */
const rng = seededRandom;

/**
 * Words of a random chunk (letters only, at least minLength long): search queries built from
 * words that exist in the corpus, as an agent's would be.
 */
function wordsOf(index: SearchIndex, rand: () => number, n: number, minLength = 4): string[] {
  for (;;) {
    const words = index.store.text(Math.floor(rand() * index.size)).split(/[^\p{L}]+/u).filter((w) => w.length >= minLength);
    if (words.length < n) continue;
    const start = Math.floor(rand() * (words.length - n + 1));
    return words.slice(start, start + n);
  }
}

/**
 * A grep an agent would write: a case-insensitive phrase of two adjacent distinctive words (six
 * letters or more) of a random chunk, so it matches at least that chunk.
 */
function phraseOf(index: SearchIndex, rand: () => number): string {
  for (;;) {
    const tokens = index.store.text(Math.floor(rand() * index.size)).split(/\s+/u);
    const good = (w: string | undefined) => w !== undefined && w.length >= 6 && /^\p{L}+$/u.test(w);
    const starts = tokens.map((_, i) => i).filter((i) => good(tokens[i]) && good(tokens[i + 1]));
    if (starts.length === 0) continue;
    const i = starts[Math.floor(rand() * starts.length)]!;
    return `(?i)${tokens[i]}\\s+${tokens[i + 1]}`;
  }
}

const ok = (name: string, args: Record<string, unknown>): AgentCall => ({ name, arguments: args, status: 'ok' });
const turn = (...calls: AgentCall[]): AgentTurn => ({ text: '', calls });
const hits = (results: ToolExchange[]) => results.flatMap((r) => r.result.chunkIds);

/** The queries and pattern of one scripted episode, drawn from the corpus with the episode's seed. */
interface MixPlan {
  question: string;
  /** The grep pattern, or (--mix no-grep) the words of the search in its place. */
  second: { grep: string } | { search: string };
  words3: string;
  words5: string;
}

function mixPlan(index: SearchIndex, question: string, seed: number, grep = true): MixPlan {
  const rand = rng(seed);
  const second = grep ? { grep: phraseOf(index, rand) } : { search: wordsOf(index, rand, 2).join(' ') };
  return { question, second, words3: wordsOf(index, rand, 3).join(' '), words5: wordsOf(index, rand, 5).join(' ') };
}

/**
 * Eleven calls in ten turns: 3 searches (the first with a real question of the embedded task set,
 * the others with words of random chunks), 1 grep, 3 reads, 2 curates, 1 drop, finish — the shape of
 * the rollouts of Training Search Agents with GRPO (mostly searching and reading, some curating). The words are drawn before
 * the clock starts (mixPlan): in a real run the agent is a model elsewhere, and its time is not
 * the environment's.
 */
function mixAgent(plan: MixPlan): Agent {
  return {
    spec: 'bench-mix',
    start: () => {
      const turns = (function* (): Generator<AgentTurn, void, ToolExchange[]> {
        const a = hits(yield turn(ok('bm25_search', { query: plan.question })));
        const g = hits(yield turn('grep' in plan.second ? ok('grep_corpus', { pattern: plan.second.grep }) : ok('bm25_search', { query: plan.second.search })));
        yield turn(...[...a, ...g].slice(0, 2).map((id) => ok('read_document', { id })));
        const b = hits(yield turn(ok('bm25_search', { query: plan.words3 })));
        yield turn(ok('curate', { ids: [...a.slice(0, 2), ...b.slice(0, 1)].slice(0, 3) }));
        yield turn(ok('read_document', { id: b[1] ?? a[0] ?? 'none' }));
        const c = hits(yield turn(ok('bm25_search', { query: plan.words5 })));
        yield turn(ok('curate', { ids: c.slice(0, 3).length ? c.slice(0, 3) : ['none'] }));
        yield turn(ok('drop_curated', { ids: [a[1] ?? 'none'] }));
        yield turn(ok('finish', {}));
      })();
      let started = false;
      return {
        next: async (results: ToolExchange[]) => {
          const step = started ? turns.next(results) : turns.next(undefined as unknown as ToolExchange[]);
          started = true;
          return step.done ? { text: 'done', calls: [] } : step.value;
        },
      };
    },
  };
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

const USAGE = `usage: npm run bench:env -- [--index DIR | --chunks N] [--episodes N] [--rounds N] [--warmup N]
                       [--concurrency N] [--workers N] [--group N] [--cache] [--lazy] [--mix default|no-grep]
                       [--out FILE]

Drives concurrent scripted episodes through runEpisode over one index (default: the synthetic
1,000,000-chunk corpus) and reports tool calls per second and tool latency (see bench/env.ts).`;

async function main(): Promise<void> {
  const { values } = benchArgs(
    {
      index: { type: 'string' },
      chunks: { type: 'string', default: '1000000' },
      episodes: { type: 'string', default: '2048' },
      rounds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '256' },
      group: { type: 'string', default: '1' },
      concurrency: { type: 'string', default: '256' },
      workers: { type: 'string', default: String(availableParallelism()) },
      out: { type: 'string', default: 'bench/results/env.json' },
      // Off by default, so that the number is what every call costs (see --group).
      cache: { type: 'boolean', default: false },
      // Workers read the index page by page as calls need it, instead of reading texts up front.
      lazy: { type: 'boolean', default: false },
      // default: the mix above; no-grep: a search in place of the grep (to separate grep's cost).
      mix: { type: 'string', default: 'default' },
      ...LOAD_FLAG,
    },
    USAGE,
  );
  const guard = guardLoad('bench:env', values['allow-loaded']);
  const count = (flag: string, min: number) => wholeFlag(values, flag, min);
  const episodes = count('episodes', 1);
  const rounds = count('rounds', 1);
  const warmup = count('warmup', 0);
  const group = count('group', 1);
  const concurrency = count('concurrency', 1);
  const workers = count('workers', 0);
  if (values.mix !== 'default' && values.mix !== 'no-grep') badFlag(`--mix must be default or no-grep, got '${values.mix}'`);
  const withGrep = values.mix === 'default';
  const loadStartAvg = loadavg()[0]!;
  const loadStart = performance.now();
  const indexDir = values.index ?? (await synthIndex(Number(values.chunks)));
  // Preloading, the texts and grep prefilter are read once into shared memory, for this thread's
  // index (reads) and every worker's alike.
  const shared = values.lazy ? undefined : readSharedBytes(indexDir);
  const index = await openIndex(indexDir, shared ? { shared } : {});
  const pool = workers > 0 ? await SearchWorkers.open(indexDir, index, { workers, recordServiceTimes: true, preload: !values.lazy, ...(shared ? { shared } : {}) }) : undefined;
  if (!values.lazy) index.store.loadAll();
  const cache = values.cache ? new CachedBackend(pool ?? index) : undefined;
  const backend: SearchBackend = cache ?? pool ?? index;
  const loadS = (performance.now() - loadStart) / 1000;
  const env = new SearchEnvironment(backend);
  const questions = embeddedQuestions();
  const task: Task = { id: 'bench', query: 'bench', facts: [{ text: 'none', chunkIds: ['none'] }] };
  console.error(`env bench: ${index.size.toLocaleString()} chunks, ${warmup} + ${rounds} x ${episodes} episodes (groups of ${group}), ${concurrency} in flight, ${workers} search workers${cache ? ', cache' : ''} (index ready in ${loadS.toFixed(1)} s)`);

  /** Run episodes [first, first + n), `concurrency` at a time; the calls' latencies by tool. */
  const runEpisodes = async (first: number, n: number) => {
    const latencies = new Map<string, number[]>();
    let calls = 0;
    let errors = 0;
    let next = first;
    // Each episode's words, drawn before the clock. The group's task: its first search is one
    // question drawn by group number.
    const plans = Array.from({ length: n }, (_, j) => {
      const i = first + j;
      const question = questions[Math.floor(rng(1_000_003 + Math.floor(i / group))() * questions.length)]!;
      return mixPlan(index, question, i, withGrep);
    });
    const started = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(concurrency, n) }, async () => {
        while (next < first + n) {
          const i = next++;
          const r = await runEpisode(mixAgent(plans[i - first]!), env, task);
          if (r.endReason !== 'finish') throw new Error(`episode ${i} ended with ${r.endReason}: ${r.error ?? ''}`);
          for (const t of r.turns)
            for (const c of t.calls) {
              calls += 1;
              if (c.result.outcome === 'error') errors += 1;
              if (!latencies.has(c.name)) latencies.set(c.name, []);
              latencies.get(c.name)!.push(c.ms ?? 0);
            }
        }
      }),
    );
    return { latencies, calls, errors, wallS: (performance.now() - started) / 1000 };
  };

  // Warm-up (JIT, the index's pages, worker caches): reported apart, with episode numbers of its own.
  const warm = warmup > 0 ? await runEpisodes(1_000_000_000, warmup) : undefined;
  if (warm) console.error(`warm-up: ${warm.calls} tool calls in ${warm.wallS.toFixed(2)} s: ${(warm.calls / warm.wallS).toFixed(1)} calls/s`);
  if (pool?.serviceMs) for (const ms of Object.values(pool.serviceMs)) ms.length = 0;
  const cacheBefore = cache ? { hits: cache.hits, misses: cache.misses } : undefined;
  const eluBefore = performance.eventLoopUtilization();
  // Each round its own episodes (words drawn anew), as a long run would have: repeating the same
  // ones would find the pattern cache and the workers' word tables warm for them.
  const measured: Awaited<ReturnType<typeof runEpisodes>>[] = [];
  for (let r = 0; r < rounds; r++) {
    const eluRound = performance.eventLoopUtilization();
    const before = pool?.serviceMs ? Object.values(pool.serviceMs).map((ms) => ms.length) : [];
    measured.push(await runEpisodes(r * episodes, episodes));
    const m = measured[r]!;
    // The workers' time per episode in this round alone: shows when a run has settled.
    const workerMs = pool?.serviceMs ? Object.values(pool.serviceMs).reduce((sum, ms, i) => sum + ms.slice(before[i]).reduce((a, b) => a + b, 0), 0) / episodes : NaN;
    const busy = performance.eventLoopUtilization(eluRound).utilization;
    console.error(`round ${r + 1}/${rounds}: ${m.calls} tool calls in ${m.wallS.toFixed(2)} s: ${(m.calls / m.wallS).toFixed(1)} calls/s (worker ms per episode ${workerMs.toFixed(2)}, main thread busy ${(100 * busy).toFixed(0)}%)`);
  }
  const rates = measured.map((m) => m.calls / m.wallS);
  const median = [...measured].sort((a, b) => a.calls / a.wallS - b.calls / b.wallS)[Math.floor((rounds - 1) / 2)]!;
  const { calls, wallS } = median;
  const errors = measured.reduce((n, m) => n + m.errors, 0);
  const latencies = new Map<string, number[]>();
  for (const m of measured) for (const [name, ms] of m.latencies) latencies.set(name, [...(latencies.get(name) ?? []), ...ms]);
  // Share of the run the main thread was busy (the environment, the scripted agent, the pool's messages).
  const mainBusy = performance.eventLoopUtilization(eluBefore).utilization;
  // Time the search workers spent per request, without the wait in their queues (after warm-up).
  const service = pool?.serviceMs
    ? Object.fromEntries(
        Object.entries(pool.serviceMs).filter(([, ms]) => ms.length > 0).map(([op, ms]) => {
          ms.sort((a, b) => a - b);
          const mean = ms.reduce((sum, x) => sum + x, 0) / ms.length;
          return [op, { requests: ms.length, mean_ms: round(mean), p50_ms: round(quantile(ms, 0.5)), p99_ms: round(quantile(ms, 0.99)) }];
        }),
      )
    : null;
  await pool?.close();
  const workerMsPerEpisode = service ? Object.fromEntries(Object.entries(service).map(([op, s]) => [op, round((s.mean_ms * s.requests) / (episodes * rounds), 2)])) : null;
  const workerMsTotal = workerMsPerEpisode ? Object.values(workerMsPerEpisode).reduce((a, b) => a + b, 0) : 0;
  const workerBound = workerMsTotal > 0 ? round(((calls / episodes) * workers * 1000) / workerMsTotal, 1) : null;

  const all = [...latencies.values()].flat().sort((a, b) => a - b);
  const perTool = Object.fromEntries(
    [...latencies].map(([name, ms]) => {
      ms.sort((a, b) => a - b);
      return [name, { calls: ms.length, p50_ms: round(quantile(ms, 0.5)), p99_ms: round(quantile(ms, 0.99)) }];
    }),
  );
  const result = {
    bench: 'env',
    date: new Date().toISOString(),
    cpus: availableParallelism(),
    // Other processes on the machine while it ran (1-minute load average at the start and end).
    load_avg: [round(loadStartAvg, 2), round(loadavg()[0]!, 2)],
    node: process.version,
    index: indexDir,
    chunks: index.size,
    episodes,
    rounds: rates.map((x) => round(x, 1)),
    warmup: warm ? { episodes: warmup, tool_calls: warm.calls, wall_s: round(warm.wallS), tool_calls_per_s: round(warm.calls / warm.wallS, 1) } : null,
    concurrency,
    search_workers: workers,
    group,
    cache: values.cache,
    lazy: values.lazy,
    // Searches and greps answered from the cache (or joined to one in flight) while measuring.
    cache_hits: cache && cacheBefore ? { hits: cache.hits - cacheBefore.hits, misses: cache.misses - cacheBefore.misses } : null,
    mix: values.mix,
    tool_calls: calls,
    // Tool results that were errors, over every round (the scripted calls are all valid: 0).
    error_results: errors,
    wall_s: round(wallS),
    tool_calls_per_s: round(calls / wallS, 1),
    episodes_per_s: round(episodes / wallS, 1),
    p50_ms: round(quantile(all, 0.5)),
    p99_ms: round(quantile(all, 0.99)),
    per_tool: perTool,
    worker_service: service,
    // Where the time goes: worker ms per episode by operation (mean x requests per episode), and the
    // rate the workers could sustain at those times if they were never idle (the ceiling of this run).
    worker_ms_per_episode: workerMsPerEpisode,
    worker_bound_tool_calls_per_s: workerBound,
    main_thread_busy: round(mainBusy, 3),
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    target_tool_calls_per_s: 2000,
    ...guard.fields(),
  };
  console.log(`${calls} tool calls in ${wallS.toFixed(2)} s (the median of ${rounds} rounds: ${result.rounds.join(', ')} calls/s): ${result.tool_calls_per_s} calls/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms (target >= 2,000 calls/s)`);
  for (const [name, s] of Object.entries(perTool)) console.log(`  ${name.padEnd(14)} ${String(s.calls).padStart(7)} calls   p50 ${String(s.p50_ms).padStart(8)} ms   p99 ${String(s.p99_ms).padStart(8)} ms`);
  if (service) for (const [op, s] of Object.entries(service)) console.log(`  worker time ${op.padEnd(7)} mean ${s.mean_ms} ms   p50 ${s.p50_ms} ms   p99 ${s.p99_ms} ms (queue wait excluded)`);
  if (workerMsPerEpisode) console.log(`  worker ms per episode: ${Object.entries(workerMsPerEpisode).map(([op, ms]) => `${op} ${ms}`).join(', ')}; at these times ${workers} workers sustain at most ${workerBound} calls/s; main thread busy ${(100 * mainBusy).toFixed(0)}%`);
  if (result.cache_hits) console.log(`  cache: ${result.cache_hits.hits} hits, ${result.cache_hits.misses} misses`);
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out + '.tmp', JSON.stringify(result, null, 2) + '\n');
  renameSync(values.out + '.tmp', values.out);
  console.log(`wrote ${values.out}`);
}

await main();
