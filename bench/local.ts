/**
 * npm run bench:local — speed of the local backend at the default model size:
 *  - matmul GFLOP/s, WebAssembly SIMD vs plain TypeScript loops (the kernel choice);
 *  - forward+backward tokens/s, sampling tokens/s (KV cache);
 *  - one GRPO-sized batch: 64 rollouts of a demo-sized episode (sample every turn, then one
 *    importance-sampling forward/backward over all 64 sequences and an optimiser step).
 * Writes bench/results/local.json.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLocalBackend, DEFAULT_MODEL } from '../src/backend/local/backend.js';
import { createKernels, type Kernels } from '../src/backend/local/kernels.js';
import { paramCount, seededRandom } from '../src/backend/local/model.js';
import { DEFAULT_VOCAB } from '../src/backend/local/tokenizer.js';
import type { Datum } from '../src/backend/types.js';
import { BpeTokenizer } from '../src/protocol/compact/bpe.js';
import { SPECIALS } from '../src/protocol/compact/renderer.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Demo-sized episode: a system prompt with tools, then turns of a short call and a compact result. */
const EPISODE = { prompt: 380, turns: 4, sampledPerTurn: 40, insertedPerTurn: 110 };
const ROLLOUTS = 64;

/** Wall-clock seconds; CPU seconds of this process are kept in `cpuOf` (the machine may be shared). */
const cpuOf = new WeakMap<object, number>();
let lastCpu = 0;
function time<T>(f: () => T): [T, number] {
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const r = f();
  const c = process.cpuUsage(c0);
  lastCpu = (c.user + c.system) / 1e6;
  return [r, Number(process.hrtime.bigint() - t0) / 1e9];
}
void cpuOf;

function matmulGflops(k: Kernels, T: number, C: number, OC: number, pass: 'forward' | 'backward'): number {
  const rng = seededRandom(1);
  const fill = (n: number) => {
    const t = k.heap.f32(n);
    for (let i = 0; i < n; i++) t.a[i] = rng() - 0.5;
    return t;
  };
  const inp = fill(T * C), w = fill(OC * C), b = fill(OC), out = fill(T * OC), dinp = fill(T * C), dw = fill(OC * C), db = fill(OC);
  const run = () => (pass === 'forward' ? k.matmulForward(out, inp, w, b, T, C, OC) : k.matmulBackward(dinp, dw, db, out, inp, w, T, C, OC));
  run();
  let reps = 0, secs = 0;
  while (secs < 0.5) {
    secs += time(run)[1];
    reps += 1;
  }
  const flops = (pass === 'forward' ? 2 : 4) * T * C * OC * reps;
  return flops / secs / 1e9;
}

// A tokenizer of the default vocabulary size with synthetic merges: speed depends only on the size.
function benchTokenizer(vocab: number): BpeTokenizer {
  const merges: [number, number][] = [];
  const base = 256 + SPECIALS.length;
  for (let i = 0; merges.length < vocab - base; i++) merges.push([97 + (i % 26), 97 + (Math.floor(i / 26) % 26)].map((x, j) => (j === 0 && i >= 676 ? base + (i % 600) : x)) as [number, number]);
  return new BpeTokenizer({ version: 1, specials: [...SPECIALS], merges });
}

const shapes: [number, number, number][] = [
  [256, 128, 512],
  [256, 512, 128],
  [256, 128, 4096],
];
const kernelsOut: Record<string, Record<string, number>> = {};
for (const kind of ['wasm-simd', 'js'] as const) {
  const k = createKernels(64 << 20, kind);
  for (const [T, C, OC] of shapes) {
    const key = `${T}x${C}x${OC}`;
    kernelsOut[key] ??= {};
    kernelsOut[key]![`${kind}_forward`] = matmulGflops(k, T, C, OC, 'forward');
    kernelsOut[key]![`${kind}_backward`] = matmulGflops(k, T, C, OC, 'backward');
  }
}
console.log('matmul GFLOP/s (rows x inner x outputs):');
console.table(Object.fromEntries(Object.entries(kernelsOut).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([a, b]) => [a, +b.toFixed(2)]))])));

const tok = benchTokenizer(DEFAULT_VOCAB);
const backend = createLocalBackend({ tokenizer: tok, seed: 1, dir: join(root, '.sleuth', 'bench') });
const cfg = backend.config;
const params = paramCount(cfg);
const rng = seededRandom(2);
const randomTokens = (n: number) => Array.from({ length: n }, () => 256 + SPECIALS.length + Math.floor(rng() * (cfg.vocabSize - 300)));

// Forward+backward: 8 sequences of 512 tokens, cross-entropy on all.
const seqs: Datum[] = Array.from({ length: 8 }, () => {
  const t = randomTokens(513);
  return { inputTokens: t.slice(0, -1), targetTokens: t.slice(1), weights: new Array<number>(512).fill(1) };
});
backend.forwardBackwardSync(seqs.slice(0, 1), 'cross_entropy');
const [, fbSecs] = time(() => backend.forwardBackwardSync(seqs, 'cross_entropy'));
const fbCpu = lastCpu;
backend.model.zeroGrads();
const trainTokensPerS = (8 * 512) / fbSecs;

// Sampling: 256 new tokens after a 384-token prompt (prefill counted separately).
const sampler = backend.samplerInMemory('bench');
const prompt = randomTokens(384);
const [, prefillSecs] = time(() => sampler.sampleSync(prompt, { maxTokens: 1, temperature: 1, seed: 1 }));
const prefillCpu = lastCpu;
// A different prompt of the same length, so that the prefix cache does not skip the prefill.
const prompt2 = randomTokens(384);
const [, sampleSecs] = time(() => sampler.sampleSync(prompt2, { maxTokens: 257, temperature: 1, seed: 1 }));
const sampleCpu = lastCpu;
const sampleTokensPerS = 256 / (sampleSecs - prefillSecs);

// One GRPO batch: 64 rollouts advanced turn by turn in round-robin (as concurrent episodes are);
// each turn re-sends the whole episode as the prompt, and the sampler's prefix cache resumes it.
const [, grpoSecs] = time(() => {
  const state = Array.from({ length: ROLLOUTS }, () => {
    const ctx = randomTokens(EPISODE.prompt);
    return { ctx, mask: ctx.map(() => 0), lps: ctx.map(() => 0) };
  });
  for (let turn = 0; turn < EPISODE.turns; turn++) {
    state.forEach((e, r) => {
      const [s] = sampler.sampleSync(e.ctx, { maxTokens: EPISODE.sampledPerTurn, temperature: 1, seed: r * 100 + turn });
      e.ctx.push(...s!.tokens);
      e.mask.push(...s!.tokens.map(() => 1));
      e.lps.push(...s!.logprobs);
      if (turn < EPISODE.turns - 1) {
        const inserted = randomTokens(EPISODE.insertedPerTurn);
        e.ctx.push(...inserted);
        e.mask.push(...inserted.map(() => 0));
        e.lps.push(...inserted.map(() => 0));
      }
    });
  }
  const datums: Datum[] = state.map(({ ctx, mask, lps }) => {
    const adv = rng() - 0.5;
    return { inputTokens: ctx.slice(0, -1), targetTokens: ctx.slice(1), weights: mask.slice(1), logprobs: lps.slice(1), advantages: mask.slice(1).map((m) => m * adv) };
  });
  backend.forwardBackwardSync(datums, 'importance_sampling');
  backend.optimStepSync({ learningRate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 });
});
const grpoCpu = lastCpu;
const episodeTokens = EPISODE.prompt + EPISODE.turns * EPISODE.sampledPerTurn + (EPISODE.turns - 1) * EPISODE.insertedPerTurn;

const best = (kind: string) => Math.max(...Object.values(kernelsOut).map((v) => v[`${kind}_forward`]!));
const result = {
  params,
  config: cfg,
  kernels: backend.model.k.name,
  train_tokens_per_s: Math.round(trainTokensPerS),
  sample_tokens_per_s: Math.round(sampleTokensPerS),
  prefill_tokens_per_s: Math.round(384 / prefillSecs),
  grpo_batch_s: +grpoSecs.toFixed(2),
  // The same measures by this process's CPU time: what an unshared machine gives (one thread).
  cpu_time_based: {
    train_tokens_per_s: Math.round((8 * 512) / fbCpu),
    sample_tokens_per_s: Math.round(256 / Math.max(sampleCpu - prefillCpu, 1e-9)),
    prefill_tokens_per_s: Math.round(384 / prefillCpu),
    grpo_batch_s: +grpoCpu.toFixed(2),
  },
  load_average: loadavg().map((x) => +x.toFixed(2)),
  grpo_batch: { rollouts: ROLLOUTS, episode: EPISODE, episode_tokens: episodeTokens },
  matmul_gflops_wasm_simd: +best('wasm-simd').toFixed(2),
  matmul_gflops_js: +best('js').toFixed(2),
  matmul_gflops: kernelsOut,
  machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? '', node: process.version },
  date: new Date().toISOString(),
};
console.log(`\nlocal model at the default size (${JSON.stringify(DEFAULT_MODEL)}, vocab ${cfg.vocabSize}): ${(params / 1e6).toFixed(2)}M parameters, kernels ${result.kernels}`);
console.table({
  'forward+backward tokens/s': result.train_tokens_per_s,
  'sampling tokens/s (KV cache)': result.sample_tokens_per_s,
  'prefill tokens/s': result.prefill_tokens_per_s,
  [`GRPO batch s (${ROLLOUTS} rollouts x ${episodeTokens} tokens)`]: result.grpo_batch_s,
  'GRPO batch s, by CPU time': result.cpu_time_based.grpo_batch_s,
  'forward+backward tokens/s, by CPU time': result.cpu_time_based.train_tokens_per_s,
  'sampling tokens/s, by CPU time': result.cpu_time_based.sample_tokens_per_s,
  'matmul GFLOP/s wasm-simd (best)': result.matmul_gflops_wasm_simd,
  'matmul GFLOP/s js (best)': result.matmul_gflops_js,
});
const out = join(root, 'bench', 'results', 'local.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(`${out}.tmp`, JSON.stringify(result, null, 2) + '\n');
renameSync(`${out}.tmp`, out);
console.log(`wrote ${out} (load average ${result.load_average.join(' ')} on ${cpus().length} CPUs: wall-clock rates suffer when it is above the CPU count)`);
