/**
 * npm run bench:serve-search — how fast `sleuth serve-search` answers an RL trainer's retrieval calls.
 *
 * Starts the real command (`sleuth serve-search`, its search worker pool over the index) in a child
 * process on 127.0.0.1, and drives it from this process with Search-R1's request, POST /retrieve
 * {"queries": [64 questions], "topk": 3, "return_scores": true}, `--clients` requests in flight at
 * once (a trainer's rollout workers). Queries are the embedded task set's questions, in batches
 * drawn in order. Reports requests/s (and queries/s) of the median round and the latency of a
 * request (p50, p99 over every round), as the client sees it.
 *
 *   node dist/bench/serve-search.js [--index DIR | --chunks N] [--batch 64] [--topk 3] [--clients 4]
 *                                   [--workers N] [--rounds 3] [--seconds 10] [--warmup-seconds 5]
 *                                   [--out bench/results/serve-search.json]
 *
 * Without --index it uses the synthetic corpus of bench/synth.ts (--chunks N, default 1,000,000),
 * the same index bench:env measures, built once into .sleuth/bench/.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchArgs, wholeFlag } from './args.js';
import { guardLoad, LOAD_FLAG } from './load.js';
import { embeddedQuestions, synthIndex } from './synth.js';

const USAGE = `usage: npm run bench:serve-search -- [--index DIR | --chunks N] [--batch N] [--topk N] [--clients N]
                                [--workers N] [--rounds N] [--seconds S] [--warmup-seconds S] [--out FILE]

Drives \`sleuth serve-search\` on 127.0.0.1 with Search-R1 /retrieve batches (default 64 queries,
topk 3) over the synthetic 1,000,000-chunk index and reports requests/s and p99 latency.`;

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]) => percentile(xs, 50);

/** Start `sleuth serve-search` and resolve with its base URL once it prints that it listens. */
function startServer(indexDir: string, workers: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'sleuth.js');
  const child = spawn(process.execPath, [bin, 'serve-search', '--index', indexDir, '--port', '0', '--workers', String(workers)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      out += text;
      const m = /listening on (http:\/\/\S+)/u.exec(out);
      if (m) resolve({ url: m[1]!, stop: async () => void (child.kill('SIGTERM'), await exited) });
    });
    child.once('exit', (code) => reject(new Error(`sleuth serve-search exited (${code}) before listening: ${out}`)));
  });
}

async function main() {
  const { values } = benchArgs(
    {
      index: { type: 'string' },
      chunks: { type: 'string', default: '1000000' },
      batch: { type: 'string', default: '64' },
      topk: { type: 'string', default: '3' },
      clients: { type: 'string', default: '4' },
      workers: { type: 'string', default: String(availableParallelism()) },
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '10' },
      'warmup-seconds': { type: 'string', default: '5' },
      out: { type: 'string', default: 'bench/results/serve-search.json' },
      ...LOAD_FLAG,
    },
    USAGE,
  );
  const guard = guardLoad('bench:serve-search', values['allow-loaded']);
  const count = (flag: string, min: number) => wholeFlag(values, flag, min);
  const [batch, topk, clients, workers, rounds, seconds, warmup] = [count('batch', 1), count('topk', 1), count('clients', 1), count('workers', 1), count('rounds', 1), count('seconds', 1), count('warmup-seconds', 0)];
  const indexDir = values.index ?? (await synthIndex(count('chunks', 1)));
  const questions = embeddedQuestions();
  const started = performance.now();
  const server = await startServer(indexDir, workers);
  const readyS = (performance.now() - started) / 1000;
  console.error(`serve-search bench: ${indexDir}, ${workers} search workers (ready in ${readyS.toFixed(1)} s); ${clients} clients posting /retrieve batches of ${batch}, topk ${topk}`);

  let next = 0;
  const body = () => {
    const queries = Array.from({ length: batch }, () => questions[next++ % questions.length]!);
    return JSON.stringify({ queries, topk, return_scores: true });
  };
  /** Requests for `ms` milliseconds, `clients` at a time: each one's latency in ms. */
  const drive = async (ms: number) => {
    const latencies: number[] = [];
    const until = performance.now() + ms;
    let emptyLists = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < until) {
          const t = performance.now();
          const res = await fetch(`${server.url}/retrieve`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: body() });
          const answer = (await res.json()) as { result?: unknown[][] };
          if (res.status !== 200 || answer.result?.length !== batch) throw new Error(`/retrieve answered ${res.status}: ${JSON.stringify(answer).slice(0, 200)}`);
          emptyLists += answer.result.filter((l) => l.length === 0).length;
          latencies.push(performance.now() - t);
        }
      }),
    );
    return { latencies, emptyLists, wallS: ms / 1000 };
  };

  const loadStart = loadavg()[0]!;
  try {
    if (warmup > 0) await drive(warmup * 1000);
    const measured = [];
    for (let r = 0; r < rounds; r++) measured.push(await drive(seconds * 1000));
    const perRound = measured.map((m) => m.latencies.length / m.wallS);
    const all = measured.flatMap((m) => m.latencies);
    const rate = median(perRound);
    const result = {
      bench: 'serve-search',
      date: new Date().toISOString(),
      cpus: availableParallelism(),
      load_avg: [round(loadStart, 2), round(loadavg()[0]!, 2)],
      node: process.version,
      index: indexDir,
      endpoint: 'POST /retrieve',
      batch,
      topk,
      clients,
      search_workers: workers,
      rounds: perRound.map((x) => round(x, 1)),
      seconds_per_round: seconds,
      requests: all.length,
      requests_per_s: round(rate, 1),
      queries_per_s: round(rate * batch, 0),
      p50_ms: round(percentile(all, 50)),
      p99_ms: round(percentile(all, 99)),
      // Queries whose words are all stopwords or unknown to the index answer an empty list.
      empty_lists: measured.reduce((n, m) => n + m.emptyLists, 0),
      ...guard.fields(),
    };
    mkdirSync(dirname(values.out!), { recursive: true });
    writeFileSync(values.out + '.tmp', JSON.stringify(result, null, 2) + '\n');
    renameSync(values.out + '.tmp', values.out!);
    console.log(`${result.requests_per_s} requests/s (${result.queries_per_s} queries/s) at batch ${batch}, topk ${topk}; p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms; rounds ${result.rounds.join(', ')}; wrote ${values.out}`);
  } finally {
    await server.stop();
  }
}

await main();
