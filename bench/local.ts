/**
 * npm run bench:local — speed of the local backend:
 *  - matmul GFLOP/s, WebAssembly SIMD vs plain TypeScript loops (the kernel choice);
 *  - at the default model size (and a larger one): forward+backward tokens/s on one and on two
 *    threads, sampling tokens/s (KV cache) and prefill tokens/s;
 *  - one GRPO-sized batch at the default size: 64 rollouts (8 groups of 8 sharing a prompt) of a
 *    demo-sized episode (sample every turn, round-robin across rollouts, then one
 *    importance-sampling forward/backward over all 64 sequences and an optimiser step).
 * Every rate is given by wall clock and by this process's CPU time: on a shared machine (load above
 * the core count) the wall-clock numbers drop, the CPU-time ones show what an idle machine gives.
 * Writes bench/results/local.json.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLocalBackend, DEFAULT_MODEL } from '../src/backend/local/backend.js';
import { createKernels, type Kernels } from '../src/backend/local/kernels.js';
import { paramCount, type ModelConfig } from '../src/backend/local/model.js';
import { seededRandom } from '../src/random.js';
import { DEFAULT_VOCAB } from '../src/backend/local/tokenizer.js';
import type { Datum } from '../src/backend/types.js';
import { BpeTokenizer } from '../src/protocol/compact/bpe.js';
import { SPECIALS } from '../src/protocol/compact/renderer.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Demo-sized episode: the prompt, then turns of a short call and a compact tool result. */
const EPISODE = { prompt: 300, turns: 3, sampledPerTurn: 40, insertedPerTurn: 110 };
const ROLLOUTS = 64;
const GROUP = 8;

interface Timing {
  wall: number;
  cpu: number;
}

async function time(f: () => unknown): Promise<Timing> {
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  await f();
  const c = process.cpuUsage(c0);
  return { wall: Number(process.hrtime.bigint() - t0) / 1e9, cpu: (c.user + c.system) / 1e6 };
}

const rate = (work: number, t: Timing) => ({ wall: Math.round(work / t.wall), cpu: Math.round(work / t.cpu) });

function matmulGflops(k: Kernels, T: number, C: number, OC: number, pass: 'forward' | 'backward'): { wall: number; cpu: number } {
  const rng = seededRandom(1);
  const fill = (n: number) => {
    const t = k.heap.f32(n);
    for (let i = 0; i < n; i++) t.a[i] = rng() - 0.5;
    return t;
  };
  const inp = fill(T * C), w = fill(OC * C), b = fill(OC), out = fill(T * OC), dinp = fill(T * C), dw = fill(OC * C), db = fill(OC);
  const run = () => (pass === 'forward' ? k.matmulForward(out, inp, w, b, T, C, OC) : k.matmulBackward(dinp, dw, db, out, inp, w, T, C, OC));
  run();
  let reps = 0;
  const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
  let cpu = 0;
  while (cpu < 0.4) {
    run();
    reps += 1;
    const c = process.cpuUsage(c0);
    cpu = (c.user + c.system) / 1e6;
  }
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const flops = (pass === 'forward' ? 2 : 4) * T * C * OC * reps;
  return { wall: +(flops / wall / 1e9).toFixed(2), cpu: +(flops / cpu / 1e9).toFixed(2) };
}

// A tokenizer of the wanted vocabulary size with made-up merges: speed depends only on the size.
function benchTokenizer(vocab: number): BpeTokenizer {
  const base = 256 + SPECIALS.length;
  const merges: [number, number][] = [];
  for (let i = 0; merges.length < vocab - base; i++) merges.push([i < 676 ? 97 + (i % 26) : base + (i % 600), 97 + (Math.floor(i / 26) % 26)]);
  return new BpeTokenizer({ version: 1, specials: [...SPECIALS], merges });
}

console.log(`load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} CPUs`);
const shapes: [number, number, number][] = [
  [256, 64, 256],
  [256, 128, 512],
  [256, 512, 128],
  [256, 64, 2048],
];
const matmul: Record<string, Record<string, { wall: number; cpu: number }>> = {};
for (const kind of ['wasm-simd', 'js'] as const) {
  const k = createKernels(64 << 20, kind);
  for (const [T, C, OC] of shapes) {
    const key = `${T}x${C}x${OC}`;
    matmul[key] ??= {};
    matmul[key]![`${kind} forward`] = matmulGflops(k, T, C, OC, 'forward');
    matmul[key]![`${kind} backward`] = matmulGflops(k, T, C, OC, 'backward');
  }
}
console.log('\nmatmul GFLOP/s by CPU time (wall clock), rows x inner x outputs:');
console.table(Object.fromEntries(Object.entries(matmul).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([a, b]) => [a, `${b.cpu} (${b.wall})`]))])));

const rng = seededRandom(2);

async function measureSize(label: string, vocab: number, config: Omit<ModelConfig, 'vocabSize'>, grpo: boolean) {
  const tok = benchTokenizer(vocab);
  const make = (threads: number) => createLocalBackend({ tokenizer: tok, config, seed: 1, threads, dir: join(root, '.sleuth', 'bench') });
  const one = make(1), two = make(2);
  const cfg = one.config;
  const randomTokens = (n: number) => Array.from({ length: n }, () => 256 + SPECIALS.length + Math.floor(rng() * (cfg.vocabSize - 300)));
  // Forward+backward: 8 sequences of 512 tokens, cross-entropy on all.
  const seqLen = Math.min(512, cfg.context - 1);
  const seqs: Datum[] = Array.from({ length: 8 }, () => {
    const t = randomTokens(seqLen + 1);
    return { inputTokens: t.slice(0, -1), targetTokens: t.slice(1), weights: new Array<number>(seqLen).fill(1) };
  });
  one.forwardBackwardSync(seqs.slice(0, 1), 'cross_entropy');
  await two.forwardBackward(seqs.slice(0, 2), 'cross_entropy');
  const fb1 = await time(() => one.forwardBackwardSync(seqs, 'cross_entropy'));
  const fb2 = await time(() => two.forwardBackward(seqs, 'cross_entropy'));
  one.model.zeroGrads();
  two.model.zeroGrads();
  // Sampling: 256 new tokens after a 256-token prompt (prefill measured on its own).
  const sampler = one.samplerInMemory('bench');
  const prefill = await time(() => sampler.sampleSync(randomTokens(256), { maxTokens: 1, temperature: 1, seed: 1 }));
  const full = await time(() => sampler.sampleSync(randomTokens(256), { maxTokens: 257, temperature: 1, seed: 1 }));
  const decode = { wall: full.wall - prefill.wall, cpu: full.cpu - prefill.cpu };
  const row = {
    label,
    config: cfg,
    params: paramCount(cfg),
    train_tokens_per_s: { one_thread: rate(8 * seqLen, fb1), two_threads: { wall: Math.round((8 * seqLen) / fb2.wall) } },
    sample_tokens_per_s: rate(256, decode),
    prefill_tokens_per_s: rate(256, prefill),
    grpo_batch_s: undefined as undefined | { wall: number; cpu_all_threads: number },
    /** Token positions the sampler ran in the GRPO batch, against the rollouts' total length. */
    grpo_sampler_rows: undefined as undefined | { run: number; total: number },
  };
  if (grpo) {
    // 64 rollouts advanced turn by turn in round-robin, as concurrent episodes are; each turn
    // re-sends the whole episode as the prompt and the sampler's prefix cache resumes it.
    const s = two.samplerInMemory('grpo');
    let total = 0;
    const t = await time(async () => {
      // GRPO groups: 8 tasks x 8 rollouts, each group sharing its prompt.
      const prompts = Array.from({ length: ROLLOUTS / GROUP }, () => randomTokens(EPISODE.prompt));
      const state = Array.from({ length: ROLLOUTS }, (_, r) => {
        const ctx = prompts[Math.floor(r / GROUP)]!.slice();
        return { ctx, mask: ctx.map(() => 0), lps: ctx.map(() => 0) };
      });
      for (let turn = 0; turn < EPISODE.turns; turn++) {
        state.forEach((e, r) => {
          const [out] = s.sampleSync(e.ctx, { maxTokens: EPISODE.sampledPerTurn, temperature: 1, seed: r * 100 + turn });
          e.ctx.push(...out!.tokens);
          e.mask.push(...out!.tokens.map(() => 1));
          e.lps.push(...out!.logprobs);
          if (turn < EPISODE.turns - 1) {
            const inserted = randomTokens(EPISODE.insertedPerTurn);
            e.ctx.push(...inserted);
            e.mask.push(...inserted.map(() => 0));
            e.lps.push(...inserted.map(() => 0));
          }
        });
      }
      total = state.reduce((n, e) => n + e.ctx.length, 0);
      const datums: Datum[] = state.map(({ ctx, mask, lps }) => {
        const adv = rng() - 0.5;
        return { inputTokens: ctx.slice(0, -1), targetTokens: ctx.slice(1), weights: mask.slice(1), logprobs: lps.slice(1), advantages: mask.slice(1).map((m) => m * adv) };
      });
      await two.forwardBackward(datums, 'importance_sampling');
      await two.optimStep({ learningRate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 });
    });
    row.grpo_batch_s = { wall: +t.wall.toFixed(2), cpu_all_threads: +t.cpu.toFixed(2) };
    row.grpo_sampler_rows = { run: s.rowsRun, total };
  }
  await two.close();
  return row;
}

const sizes = [
  await measureSize('default', DEFAULT_VOCAB, DEFAULT_MODEL, true),
  await measureSize('larger', 4096, { context: 1024, dModel: 128, nLayers: 3, nHeads: 4 }, false),
];
const episodeTokens = EPISODE.prompt + EPISODE.turns * EPISODE.sampledPerTurn + (EPISODE.turns - 1) * EPISODE.insertedPerTurn;
console.log(`\nmodel sizes (tokens/s by CPU time, wall clock in brackets); GRPO batch = ${ROLLOUTS} rollouts x ${episodeTokens} tokens`);
console.table(
  Object.fromEntries(
    sizes.map((s) => [
      `${s.label}: d${s.config.dModel} L${s.config.nLayers} V${s.config.vocabSize} ctx${s.config.context} (${(s.params / 1e6).toFixed(2)}M)`,
      {
        'fwd+bwd 1 thread': `${s.train_tokens_per_s.one_thread.cpu} (${s.train_tokens_per_s.one_thread.wall})`,
        'fwd+bwd 2 threads (wall)': s.train_tokens_per_s.two_threads.wall,
        sampling: `${s.sample_tokens_per_s.cpu} (${s.sample_tokens_per_s.wall})`,
        prefill: `${s.prefill_tokens_per_s.cpu} (${s.prefill_tokens_per_s.wall})`,
        'GRPO batch s (wall)': s.grpo_batch_s?.wall ?? '-',
      },
    ]),
  ),
);

const def = sizes[0]!;
const best = (kind: string, by: 'cpu' | 'wall') => Math.max(...Object.values(matmul).map((v) => v[`${kind} forward`]![by]));
const result = {
  params: def.params,
  config: def.config,
  kernels: 'wasm-simd',
  train_tokens_per_s: def.train_tokens_per_s.two_threads.wall,
  sample_tokens_per_s: def.sample_tokens_per_s.wall,
  grpo_batch_s: def.grpo_batch_s!.wall,
  matmul_gflops_wasm_simd: best('wasm-simd', 'wall'),
  matmul_gflops_js: best('js', 'wall'),
  by_cpu_time: {
    train_tokens_per_s_one_thread: def.train_tokens_per_s.one_thread.cpu,
    sample_tokens_per_s: def.sample_tokens_per_s.cpu,
    matmul_gflops_wasm_simd: best('wasm-simd', 'cpu'),
    matmul_gflops_js: best('js', 'cpu'),
  },
  grpo_batch: { rollouts: ROLLOUTS, group_size: GROUP, episode: EPISODE, episode_tokens: episodeTokens, threads: 2 },
  sizes,
  matmul_gflops: matmul,
  machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? '', node: process.version, load_average: loadavg().map((x) => +x.toFixed(2)) },
  date: new Date().toISOString(),
};
const out = join(root, 'bench', 'results', 'local.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(`${out}.tmp`, JSON.stringify(result, null, 2) + '\n');
renameSync(`${out}.tmp`, out);
console.log(`wrote ${out}`);
