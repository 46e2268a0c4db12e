/**
 * npm run bench:explorer — does the explorer stay fast on a run with 100,000 rollouts?
 *
 * Writes a run directory of N rollouts (default 100,000; Rollout shape with short token streams)
 * into a temporary directory, then measures: indexing rollouts.jsonl by byte offsets from cold,
 * an incremental refresh after 1,000 more lines, filtered and sorted pages, reading one rollout,
 * and the same page and rollout over HTTP through the explorer's server.
 *
 *   node dist/bench/explorer.js [--rollouts N] [--out FILE]
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { guardLoad, LOAD_FLAG } from './load.js';
import type { Rollout } from '../src/agent/rollout.js';
import { queryRollouts, RolloutIndex } from '../src/explorer/rollout-index.js';
import { startExplorer } from '../src/explorer/server.js';
import { appendRollouts, openRunDir } from '../src/runs/store.js';

const { values } = parseArgs({ options: { rollouts: { type: 'string', default: '100000' }, out: { type: 'string', default: 'bench/results/explorer.json' }, ...LOAD_FLAG } });
const guard = guardLoad('bench:explorer', values['allow-loaded']);
const total = Number(values.rollouts);

function rollout(i: number, rand: () => number): Rollout {
  const step = Math.floor(i / 512) + 1;
  const turns = Array.from({ length: 2 + (i % 3) }, (_, t) => {
    const sampled = Array.from({ length: 40 }, () => Math.floor(rand() * 150_000));
    return {
      index: t,
      insertedTokens: Array.from({ length: t === 0 ? 60 : 30 }, () => Math.floor(rand() * 150_000)),
      sampledTokens: sampled,
      sampledLogprobs: sampled.map(() => -rand() * 3),
      text: `turn ${t} of rollout ${i}`,
      calls: [{ name: 'bm25_search', arguments: { query: `q${i}` }, status: rand() < 0.05 ? 'off_form' : 'ok', result: { outcome: 'ok', content: '{"hits":[]}', chunkIds: [`c${i % 997}`] } }],
      curated: [`c${i % 997}`],
      sampleMs: 10,
      envMs: 1,
      promptTokens: 60,
      completionTokens: 40,
    } as Rollout['turns'][number];
  });
  return {
    version: 1, id: `step${step}/g${Math.floor(i / 8)}/t${i % 300}#${i % 8}`, taskId: `t${i % 300}`, agent: 'bench', env: 'search', sample: i % 8, query: `query ${i % 300}`,
    turns, curated: [`c${i % 997}`].slice(0, i % 4 === 0 ? 0 : 1), trajectory: [`c${i % 997}`], read: [], endReason: 'finish', promptTokens: 200, completionTokens: 120, wallMs: 30,
    startedAt: new Date(0).toISOString(), reward: { total: rand(), parts: { fbeta: rand() }, weights: { fbeta: 1 } }, step, group: Math.floor(i / 8), advantage: rand() - 0.5,
  };
}

function time<T>(f: () => T): { ms: number; value: T } {
  const t0 = performance.now();
  const value = f();
  return { ms: performance.now() - t0, value };
}

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'sleuth-bench-explorer-'));
  try {
    const runs = join(tmp, 'runs');
    const dir = join(runs, 'big');
    openRunDir(dir, { kind: 'train' }, []);
    let a = 7;
    const rand = () => ((a = (a * 1103515245 + 12345) >>> 0) / 4294967296);
    for (let i = 0; i < total; i += 5000) appendRollouts(dir, Array.from({ length: Math.min(5000, total - i) }, (_, k) => rollout(i + k, rand)));
    const bytes = statSync(join(dir, 'rollouts.jsonl')).size;

    const index = new RolloutIndex(join(dir, 'rollouts.jsonl'));
    const heap0 = process.memoryUsage().heapUsed;
    const cold = time(() => index.refresh());
    const heap = process.memoryUsage().heapUsed - heap0;
    appendRollouts(dir, Array.from({ length: 1000 }, (_, k) => rollout(total + k, rand)));
    const incremental = time(() => index.refresh());
    const noop = time(() => index.refresh());
    const page = time(() => queryRollouts(index.rollouts, { page: 100, pageSize: 50 }));
    const filtered = time(() => queryRollouts(index.rollouts, { minReward: 0.5, offform: false, sort: 'reward', desc: true, pageSize: 50 }));
    const one = time(() => index.read(Math.floor(index.rollouts.length / 2)));

    const ex = await startExplorer({ runsDir: runs, port: 0 });
    const http = async (path: string) => {
      const t0 = performance.now();
      const res = await fetch(new URL(path, ex.url));
      await res.arrayBuffer();
      return performance.now() - t0;
    };
    // A fresh server indexes in time-boxed slices: the first page answers before indexing ends.
    const firstHttp = await http('/api/rollouts?run=big&pageSize=50');
    const t0 = performance.now();
    for (;;) {
      const res = (await (await fetch(new URL('/api/runs', ex.url))).json()) as { runs: { indexingBytes: number }[] };
      if (res.runs[0]!.indexingBytes === 0) break;
    }
    const caughtUp = performance.now() - t0 + firstHttp;
    const httpPage = await http('/api/rollouts?run=big&minReward=0.5&sort=reward&desc=1&page=20&pageSize=50');
    const httpRollout = await http(`/api/rollout?run=big&n=${total - 1}`);
    await ex.close();

    const result = {
      rollouts: index.rollouts.length,
      file_mb: +(bytes / 1e6).toFixed(1),
      index_cold_ms: +cold.ms.toFixed(0),
      index_cold_mb_per_s: +(bytes / 1e6 / (cold.ms / 1000)).toFixed(0),
      index_heap_mb: +(heap / 1e6).toFixed(0),
      refresh_after_1000_more_ms: +incremental.ms.toFixed(1),
      refresh_unchanged_ms: +noop.ms.toFixed(2),
      page_unfiltered_ms: +page.ms.toFixed(2),
      page_filtered_sorted_ms: +filtered.ms.toFixed(1),
      read_one_ms: +one.ms.toFixed(2),
      http_first_page_cold_ms: +firstHttp.toFixed(0),
      http_index_caught_up_ms: +caughtUp.toFixed(0),
      http_filtered_sorted_page_ms: +httpPage.toFixed(1),
      http_one_rollout_ms: +httpRollout.toFixed(1),
      node: process.version,
      cpus: availableParallelism(),
      load_average_1m: +loadavg()[0]!.toFixed(1),
      time: new Date().toISOString(),
      ...guard.fields(),
    };
    console.log(JSON.stringify(result, null, 2));
    mkdirSync(dirname(values.out!), { recursive: true });
    const tmpOut = `${values.out}.tmp`;
    writeFileSync(tmpOut, JSON.stringify(result, null, 2) + '\n');
    renameSync(tmpOut, values.out!);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
