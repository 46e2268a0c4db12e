/**
 * npm run bench:local — speed of the local backend, the old path (issue 32's starting point: one
 * gradient thread, because a GRPO batch chained by its shared system prompt came back as one shard,
 * and one decoding worker, where the old routing sent every request) beside the new one (two
 * gradient threads, two decoding workers), alternating round after round in this one process, so
 * that load from other work on a shared machine hits both alike. Both paths run this build's
 * kernels (the SIMD GELU and exp are measured old against new in their commits).
 *  - matmul GFLOP/s, WebAssembly SIMD vs plain TypeScript loops (the kernel choice), and a peak on
 *    this machine: numpy (OpenBLAS, one thread) on the shapes a training step multiplies;
 *  - per model size (the demo's 0.30M and the long-episode 1.32M at context 2,048), on the same
 *    GRPO batch of 48 demo-shaped rollouts (6 groups of 8; every prompt begins with one system
 *    prompt): one synthetic GRPO step (sample every turn of every rollout, one importance-sampling
 *    forwardBackward, optimStep) broken down into sampling, training and the update, wall clock and
 *    CPU time of all threads, and the share of the cores left idle;
 *  - where one training pass's time goes by kernel (matmul, attention, GELU, layer norm, softmax,
 *    the rest), with the GFLOP/s of matmul and attention;
 *  - the kernels before issue 47 (commit KERNELS_BEFORE, compiled from git history) against this
 *    build's, alternating, GFLOP/s per kernel on the long model's shapes, and whether every output
 *    is the same bit for bit (bench/kernels-then.ts);
 *  - a C reference (bench/peers/ref_decoder.c, built with the system C compiler when there is one):
 *    whole-sequence forward and decode tokens/s against sleuth's single-sequence sampler;
 *  - grpo_step_s of real GRPO steps at the demo's configuration (configs/local-demo.json), old path
 *    against new, from metrics.jsonl.
 * Writes bench/results/local.json.
 */
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { loadNow } from './measure.js';
import { benchArgs } from './args.js';
import { guardLoad, LOAD_FLAG } from './load.js';
import { compareKernels, longModelShapes } from './kernels-then.js';
import { fileURLToPath } from 'node:url';
import { createLocalBackend, DEFAULT_MODEL, LONG_MODEL, type LocalBackend } from '../src/backend/local/backend.js';
import type { Sampler } from '../src/backend/types.js';
import { createBackend } from '../src/train/backend-factory.js';
import { parseTrainConfig, readConfigFile, rubricOf } from '../src/train/config.js';
import { trainGrpo } from '../src/train/grpo.js';
import { loadTrainInputs } from '../src/train/start.js';
import { createKernels, type Kernels } from '../src/backend/local/tensor-math.js';
import { paramCount, type ModelConfig } from '../src/backend/local/model.js';
import { seededRandom } from '../src/random.js';
import { DEFAULT_VOCAB } from '../src/backend/local/tokenizer.js';
import type { Datum } from '../src/backend/types.js';
import { BpeTokenizer } from '../src/protocol/compact/bpe.js';
import { SPECIALS } from '../src/protocol/compact/renderer.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The last commit before issue 47's kernel work: the kernels this build's are measured against. */
const KERNELS_BEFORE = '250aff1';

/** Episode shapes: the prompt, then turns of a written call and an inserted tool result. */
interface Episode {
  prompt: number;
  turns: number;
  sampledPerTurn: number;
  insertedPerTurn: number;
}
/** The demo's (about 664 tokens, 36 of them written: issue 19's count). */
const DEMO_EPISODE: Episode = { prompt: 300, turns: 3, sampledPerTurn: 12, insertedPerTurn: 164 };
/** Tokens of the system prompt every rollout's prompt begins with (the rest is its group's question). */
const SYSTEM_PROMPT = 200;
const ROLLOUTS = 48;
const GROUP = 8;
/** Rounds of old/new alternation. */
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 2);

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
  while (cpu < 0.1) {
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

const { values: flags } = benchArgs({ ...LOAD_FLAG }, 'usage: npm run bench:local [-- --allow-loaded]   (BENCH_ROUNDS, BENCH_DEMO_STEPS: rounds and demo steps, default 2 and 3)');
const guard = guardLoad('bench:local', flags['allow-loaded']);
const loadAtStart = loadNow();
console.log(`load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} CPUs`);
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

type Path = 'old' | 'new';
const PATHS: Path[] = ['old', 'new'];

/** The backend settings of each path: the old one used one core for training and one for decoding. */
function setPath(b: LocalBackend, path: Path): void {
  b.trainRows = 'loss-rows';
  b.sampling = 'batched';
  if (path === 'old') (b.threads = 1), (b.decodeThreads = Math.min(1, b.decodeThreads));
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** 48 rollouts (groups of 8 sharing a prompt) of `ep`'s shape, sampled by `sampler`: the old path one sequence after another, the new all at once. */
async function sampleRollouts(sampler: Sampler, ep: Episode, concurrent: boolean, randomTokens: (n: number) => number[]): Promise<{ datums: Datum[]; sampled: number }> {
  const system = randomTokens(SYSTEM_PROMPT);
  const prompts = Array.from({ length: ROLLOUTS / GROUP }, () => [...system, ...randomTokens(ep.prompt - SYSTEM_PROMPT)]);
  const state = Array.from({ length: ROLLOUTS }, (_, r) => {
    const ctx = prompts[Math.floor(r / GROUP)]!.slice();
    return { ctx, mask: ctx.map(() => 0), lps: ctx.map(() => 0) };
  });
  const inserted = state.map(() => Array.from({ length: ep.turns }, () => randomTokens(ep.insertedPerTurn)));
  let sampled = 0;
  for (let turn = 0; turn < ep.turns; turn++) {
    const one = async (r: number) => {
      const e = state[r]!;
      // A budget in tokens, never a stop: every path samples the same number of rows.
      const [out] = await sampler.sample(e.ctx, { maxTokens: ep.sampledPerTurn, temperature: 1, seed: r * 100 + turn });
      sampled += out!.tokens.length;
      e.ctx.push(...out!.tokens);
      e.mask.push(...out!.tokens.map(() => 1));
      e.lps.push(...out!.logprobs);
      if (turn < ep.turns - 1) {
        e.ctx.push(...inserted[r]![turn]!);
        e.mask.push(...inserted[r]![turn]!.map(() => 0));
        e.lps.push(...inserted[r]![turn]!.map(() => 0));
      }
    };
    if (concurrent) await Promise.all(state.map((_, r) => one(r)));
    else for (let r = 0; r < ROLLOUTS; r++) await one(r);
  }
  const datums: Datum[] = state.map(({ ctx, mask, lps }, r) => {
    const adv = (r % GROUP) / GROUP - 0.45;
    return { inputTokens: ctx.slice(0, -1), targetTokens: ctx.slice(1), weights: mask.slice(1), logprobs: lps.slice(1), advantages: mask.slice(1).map((m) => m * adv) };
  });
  return { datums, sampled };
}

type Part = { wall: number; cpu: number };
const CORES = cpus().length;

/** Seconds of wall clock and CPU (all threads) of one synthetic GRPO step, by category, and the cores' idle share. */
function breakdown(parts: Record<string, Part>) {
  const wall = Object.values(parts).reduce((s, p) => s + p.wall, 0), cpu = Object.values(parts).reduce((s, p) => s + p.cpu, 0);
  const r = (x: number) => +x.toFixed(3);
  return {
    ...Object.fromEntries(Object.entries(parts).map(([k, p]) => [k, { wall_s: r(p.wall), cpu_s: r(p.cpu), busy_share: r(p.cpu / (p.wall * CORES)) }])),
    step: { wall_s: r(wall), cpu_s: r(cpu), busy_share: r(cpu / (wall * CORES)), idle_share: r(1 - cpu / (wall * CORES)) },
  };
}

/** One forward+backward of `datums` on this thread, timed by kernel (wrapping the model's kernels), with FLOPs of matmul and attention. */
function kernelProfile(b: LocalBackend, datums: Datum[]) {
  const k = b.model.k as unknown as Record<string, (...a: unknown[]) => void>;
  const seconds: Record<string, number> = {}, flops: Record<string, number> = {};
  const shapes = new Map<string, number>();
  const category = (name: string) => (name.startsWith('matmul') ? 'matmul' : name.startsWith('attention') ? 'attention' : name.startsWith('gelu') ? 'gelu' : name.startsWith('layernorm') ? 'layernorm' : 'softmax');
  const count = (name: string, a: unknown[]): number => {
    if (name === 'matmulForward' || name === 'matmulBackward') {
      const [T, C, OC] = a.slice(-3) as number[];
      const f = (name === 'matmulForward' ? 2 : 4) * T! * C! * OC!;
      shapes.set(`${T}x${C}x${OC}`, (shapes.get(`${T}x${C}x${OC}`) ?? 0) + f);
      return f;
    }
    if (name === 'attentionForward' || name === 'attentionBackward') {
      const off = name === 'attentionForward' ? 3 : 5;
      const [t0, T, C] = a.slice(off, off + 3) as number[];
      const keys = ((T! * (T! + 1)) / 2 - (t0! * (t0! + 1)) / 2);
      return (name === 'attentionForward' ? 4 : 8) * C! * keys;
    }
    return 0;
  };
  const originals: Record<string, (...a: unknown[]) => void> = {};
  for (const name of ['matmulForward', 'matmulBackward', 'attentionForward', 'attentionBackward', 'geluForward', 'geluBackward', 'layernormForward', 'layernormBackward', 'softmaxRows', 'softmaxBackward']) {
    const f = (originals[name] = k[name]!);
    k[name] = (...a: unknown[]) => {
      const t0 = process.hrtime.bigint();
      f(...a);
      const c = category(name);
      seconds[c] = (seconds[c] ?? 0) + Number(process.hrtime.bigint() - t0) / 1e9;
      flops[c] = (flops[c] ?? 0) + count(name, a);
    };
  }
  const threads = b.threads;
  b.threads = 1;
  const t0 = process.hrtime.bigint();
  b.forwardBackwardSync(datums, 'importance_sampling');
  const total = Number(process.hrtime.bigint() - t0) / 1e9;
  b.threads = threads;
  Object.assign(k, originals);
  b.model.zeroGrads();
  const inKernels = Object.values(seconds).reduce((a, x) => a + x, 0);
  const r = (x: number) => +x.toFixed(3);
  return {
    total_s: r(total),
    seconds: { ...Object.fromEntries(Object.entries(seconds).map(([c, x]) => [c, r(x)])), other: r(total - inKernels) },
    gflops: { matmul: r((flops['matmul'] ?? 0) / seconds['matmul']! / 1e9), attention: r((flops['attention'] ?? 0) / seconds['attention']! / 1e9) },
    // The matmul shapes that carry most of the FLOPs (rows x inner x outputs), for the BLAS peak.
    top_shapes: [...shapes.entries()].sort((x, y) => y[1] - x[1]).slice(0, 4).map(([shape]) => shape),
  };
}

async function measureSize(label: string, vocab: number, config: Omit<ModelConfig, 'vocabSize'>, ep: Episode) {
  const tok = benchTokenizer(vocab);
  const dir = mkdtempSync(join(tmpdir(), 'sleuth-bench-'));
  const backends = { old: createLocalBackend({ tokenizer: tok, config, seed: 1, dir }), new: createLocalBackend({ tokenizer: tok, config, seed: 1, dir }) };
  setPath(backends.old, 'old');
  setPath(backends.new, 'new');
  const cfg = backends.new.config;
  const randomTokens = (n: number) => Array.from({ length: n }, () => 256 + SPECIALS.length + Math.floor(rng() * (cfg.vocabSize - 300)));
  const adam = { learningRate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 };
  const runs: Record<Path, { steps: Record<string, Part>[]; sampled: number; batchTokens: number; lossTokens: number; datums: Datum[] }> = {
    old: { steps: [], sampled: 0, batchTokens: 0, lossTokens: 0, datums: [] },
    new: { steps: [], sampled: 0, batchTokens: 0, lossTokens: 0, datums: [] },
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const p of PATHS) {
      const b = backends[p], r = runs[p];
      let rollouts: Awaited<ReturnType<typeof sampleRollouts>> | undefined;
      const s = await b.saveWeightsForSampler(`step-${p}-${round}`);
      const sampling = await time(async () => (rollouts = await sampleRollouts(s, ep, true, randomTokens)));
      const training = await time(() => b.forwardBackward(rollouts!.datums, 'importance_sampling'));
      const update = await time(async () => {
        await b.optimStep(adam);
        await b.saveWeightsForSampler(`next-${p}-${round}`);
      });
      r.steps.push({ sampling, training, update });
      r.sampled = rollouts!.sampled;
      r.datums = rollouts!.datums;
      r.batchTokens = rollouts!.datums.reduce((n, d) => n + d.inputTokens.length, 0);
      r.lossTokens = rollouts!.datums.reduce((n, d) => n + d.weights.filter((w) => w !== 0).length, 0);
    }
  }
  const kernels = kernelProfile(backends.new, runs.new.datums);
  await Promise.all(PATHS.map((p) => backends[p].close()));
  rmSync(dir, { recursive: true, force: true });
  // The round with the median step wall time.
  const per = (p: Path) => {
    const r = runs[p];
    const wall = (x: Record<string, Part>) => Object.values(x).reduce((a, y) => a + y.wall, 0);
    const sorted = [...r.steps].sort((x, y) => wall(x) - wall(y));
    const mid = sorted[Math.floor((sorted.length - 1) / 2)]!;
    return {
      threads: p === 'old' ? 1 : backends[p].threads,
      decode_workers: backends[p].decodeThreads,
      breakdown: breakdown(mid),
      fwd_bwd_tokens_per_s: Math.round(r.batchTokens / mid['training']!.wall),
      sample_tokens_per_s: Math.round(r.sampled / mid['sampling']!.wall),
      grpo_step_s: +wall(mid).toFixed(2),
      rounds_step_s: r.steps.map((x) => +wall(x).toFixed(2)),
    };
  };
  return { label, config: cfg, params: paramCount(cfg), episode: ep, rollouts: ROLLOUTS, group_size: GROUP, batch_tokens: runs.new.batchTokens, loss_tokens: runs.new.lossTokens, sampled_tokens: runs.new.sampled, old: per('old'), new: per('new'), kernels };
}

/** numpy's matmul (OpenBLAS, one thread) on the given shapes, GFLOP/s: this machine's peak for them. Null, with a reason, without python3 and numpy. */
function blasPeak(shapes: string[]): { gflops: Record<string, number> } | { skipped: string } {
  const script = `
import json, sys, time
import numpy as np
out = {}
for shape in sys.argv[1:]:
    T, C, OC = map(int, shape.split('x'))
    a = np.random.rand(T, C).astype(np.float32); w = np.random.rand(OC, C).astype(np.float32)
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter(); n = 0
        while time.perf_counter() - t0 < 0.05:
            a @ w.T; n += 1
        best = min(best, (time.perf_counter() - t0) / n)
    out[shape] = round(2 * T * C * OC / best / 1e9, 2)
print(json.dumps(out))`;
  const r = spawnSync('python3', ['-c', script, ...shapes], { encoding: 'utf8', env: { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' } });
  if (r.error) return { skipped: `python3 not found (${r.error.message})` };
  if (r.status !== 0) return { skipped: `python3 with numpy failed: ${r.stderr.trim().split('\n').at(-1)}` };
  return { gflops: JSON.parse(r.stdout) as Record<string, number> };
}

/** bench/peers/ref_decoder.c built with the system C compiler and run on a size's shapes; skipped with a reason where no compiler is found. */
function cReference(config: ModelConfig, T: number, prompt: number, decoded: number): Record<string, unknown> {
  const src = join(root, 'bench', 'peers', 'ref_decoder.c');
  const exe = join(tmpdir(), `sleuth-ref-decoder-${process.pid}`);
  const cc = process.env['CC'] ?? 'cc';
  const flags = ['-O3', '-march=native', '-ffast-math'];
  const built = spawnSync(cc, [...flags, '-o', exe, src, '-lm'], { encoding: 'utf8' });
  if (built.error) return { skipped: `no C compiler (${cc}: ${built.error.message})` };
  if (built.status !== 0) return { skipped: `${cc} failed: ${built.stderr.trim().split('\n')[0]}` };
  const run = spawnSync(exe, [config.dModel, config.nLayers, config.nHeads, config.vocabSize, T, prompt, decoded].map(String), { encoding: 'utf8' });
  rmSync(exe, { force: true });
  if (run.status !== 0) return { skipped: `ref_decoder failed: ${run.stderr.trim()}` };
  return { compiler: `${cc} ${flags.join(' ')}`, ...(JSON.parse(run.stdout) as Record<string, unknown>) };
}

/** sleuth's single-sequence path on the same shapes as the C reference: computeLogprobs over T tokens, and greedy decoding after a prompt. */
async function sleuthReference(config: Omit<ModelConfig, 'vocabSize'>, T: number, prompt: number, decoded: number) {
  const tok = benchTokenizer(DEFAULT_VOCAB);
  const dir = mkdtempSync(join(tmpdir(), 'sleuth-bench-ref-'));
  const b = createLocalBackend({ tokenizer: tok, config, seed: 1, dir });
  const s = b.saveWeightsForLocalSampler('ref');
  const tokens = Array.from({ length: T }, (_, i) => 300 + ((i * 7919) % 1700));
  let fwd = Infinity, dec = Infinity, n = 0;
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    await s.computeLogprobs(tokens);
    fwd = Math.min(fwd, (performance.now() - t0) / 1000);
    // The prompt alone first, so that the timed call decodes only (the prompt's rows are cached).
    const t1 = performance.now();
    const [out] = await s.sample(tokens.slice(0, prompt), { maxTokens: decoded, temperature: 0 });
    const t2 = performance.now();
    const [pre] = await s.sample(tokens.slice(0, prompt), { maxTokens: 1, temperature: 0 });
    const t3 = performance.now();
    n = out!.tokens.length;
    dec = Math.min(dec, (t2 - t1 - (t3 - t2)) / 1000);
    void pre;
  }
  await b.close();
  rmSync(dir, { recursive: true, force: true });
  return { config: b.config, forward_tokens_per_s: Math.round(T / fwd), decode_tokens_per_s: Math.round((n - 1) / dec), decoded: n };
}

/** Real GRPO steps at the demo's configuration (search environment, shipped model), old path against new, alternating runs. */
async function demoSteps(stepsPerRun: number) {
  const file = join(root, 'configs', 'local-demo.json');
  const c = parseTrainConfig({ ...readConfigFile(file), steps: stepsPerRun, evalAtStart: false, evalEvery: 0 }, file);
  const inputs = await loadTrainInputs(c);
  const out: Record<Path, { step_s: number[]; training_s: number[]; sampling_s: number[]; trained_tokens: number[]; sequence_tokens: number[] }> = {
    old: { step_s: [], training_s: [], sampling_s: [], trained_tokens: [], sequence_tokens: [] },
    new: { step_s: [], training_s: [], sampling_s: [], trained_tokens: [], sequence_tokens: [] },
  };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const p of PATHS) {
        const dir = mkdtempSync(join(tmpdir(), `sleuth-bench-grpo-${p}-`));
        const setup = await createBackend(c, { checkpointDir: join(dir, 'checkpoints') });
        const b = setup.backend as LocalBackend;
        setPath(b, p);
        try {
          await trainGrpo({ dir, config: c, record: { ...c }, setup, env: inputs.env, trainTasks: inputs.trainTasks, evalTasks: [], rubric: rubricOf(c), price: undefined, steps: stepsPerRun });
        } finally {
          await b.close();
        }
        const lines = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
        // The first step of a run also starts its threads: the steps after it are the steady state.
        for (const m of lines.filter((x) => x['step']! > 1)) {
          out[p].step_s.push(m['time_step_s']!);
          out[p].training_s.push(m['time_training_s']!);
          out[p].sampling_s.push(m['time_sampling_s']! + m['time_env_s']!);
          out[p].trained_tokens.push(m['trained_tokens']!);
          out[p].sequence_tokens.push(m['prompt_tokens']! + m['completion_tokens']!);
        }
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await inputs.close();
  }
  const per = (p: Path) => ({
    grpo_step_s: +median(out[p].step_s).toFixed(2),
    training_s: +median(out[p].training_s).toFixed(2),
    sampling_and_env_s: +median(out[p].sampling_s).toFixed(2),
    loss_tokens_per_s: Math.round(out[p].trained_tokens.reduce((a, b) => a + b, 0) / out[p].training_s.reduce((a, b) => a + b, 0)),
    steps: out[p].step_s.length,
  });
  return { config: 'configs/local-demo.json', rollouts: c.groupsPerStep * c.groupSize, steps_per_run: stepsPerRun, old: per('old'), new: per('new'), seconds: out };
}

const out = join(root, 'bench', 'results', 'local.json');
const best = (kind: string, by: 'cpu' | 'wall') => Math.max(...Object.values(matmul).map((v) => v[`${kind} forward`]![by]));
const result: Record<string, unknown> = {
  matmul_gflops_wasm_simd: best('wasm-simd', 'wall'),
  matmul_gflops_js: best('js', 'wall'),
  matmul_gflops: matmul,
  rounds: ROUNDS,
  note: 'old: one gradient thread and one decoding worker (issue 32\'s starting point); new: two of each. Both run this build\'s kernels. Wall clock on a shared machine: see the load averages.',
};
/** Written after every section, so that a run cut short keeps what it measured. */
function save(): void {
  Object.assign(result, guard.fields());
  result['machine'] = { cpus: cpus().length, cpu: cpus()[0]?.model ?? '', node: process.version, load_average_at_start: loadAtStart, load_average_at_end: loadNow() };
  result['date'] = new Date().toISOString();
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.tmp`, JSON.stringify(result, null, 2) + '\n');
  renameSync(`${out}.tmp`, out);
}
const sizes: Awaited<ReturnType<typeof measureSize>>[] = [];
for (const [label, config] of [['demo', { ...DEFAULT_MODEL, context: 1024 }], ['long', LONG_MODEL]] as const) {
  const loadBefore = loadNow();
  const size = await measureSize(label, DEFAULT_VOCAB, config, DEMO_EPISODE);
  // The reference's sequence: the prompt and every turn's written and inserted tokens (828 at the demo's shape).
  const T = DEMO_EPISODE.prompt + DEMO_EPISODE.turns * (DEMO_EPISODE.sampledPerTurn + DEMO_EPISODE.insertedPerTurn);
  const peak = blasPeak(size.kernels.top_shapes);
  const c = cReference(size.config, T, DEMO_EPISODE.prompt, 64);
  const own = await sleuthReference(config, T, DEMO_EPISODE.prompt, 64);
  const ratio = (k: 'forward_tokens_per_s' | 'decode_tokens_per_s') => (typeof c[k] === 'number' ? +(own[k] / (c[k] as number)).toFixed(3) : null);
  sizes.push(size);
  (result['sizes'] ??= []) as unknown[];
  (result['sizes'] as unknown[]).push({
    ...size,
    load_average: { before: loadBefore, after: loadNow() },
    blas_peak: peak,
    matmul_share_of_blas_peak: 'gflops' in peak ? +(size.kernels.gflops.matmul / Math.max(...Object.values(peak.gflops))).toFixed(3) : null,
    c_reference: c,
    sleuth_single_sequence: own,
    of_c_reference: { forward: ratio('forward_tokens_per_s'), decode: ratio('decode_tokens_per_s') },
  });
  save();
  console.log(`\n${label} (${(size.params / 1e6).toFixed(2)}M, context ${size.config.context}), synthetic GRPO step of ${ROLLOUTS} rollouts, load ${loadBefore.join(' ')}:`);
  console.table(Object.fromEntries(PATHS.flatMap((p) => Object.entries(size[p].breakdown).map(([k, v]) => [`${p} ${k}`, v]))));
  console.log('kernels (one training pass, one thread):', JSON.stringify(size.kernels), '\nBLAS peak:', JSON.stringify(peak), '\nC reference:', JSON.stringify(c), '\nsleuth:', JSON.stringify(own));
}
// The kernels before issue 47's work (commit 250aff1) against this build's, alternating, on the
// long model's shapes at the reference sequence's length.
{
  const T = DEMO_EPISODE.prompt + DEMO_EPISODE.turns * (DEMO_EPISODE.sampledPerTurn + DEMO_EPISODE.insertedPerTurn);
  const ab = await compareKernels(root, KERNELS_BEFORE, longModelShapes(T), 10);
  result['kernels_then_and_now'] = ab;
  save();
  if ('gflops_now' in ab) {
    const then = ab['gflops_then'] as Record<string, number>, now = ab['gflops_now'] as Record<string, number>;
    console.log(`\nkernels GFLOP/s, ${KERNELS_BEFORE} against this build, alternating (bit-identical: ${ab['bit_identical']}):`);
    console.table(Object.fromEntries(Object.keys(now).map((k) => [k, { then: then[k], now: now[k], ratio: +(now[k]! / then[k]!).toFixed(2) }])));
  } else console.log(`\nkernels then and now: skipped (${ab['skipped']})`);
}
const demoSteps_ = Number(process.env['BENCH_DEMO_STEPS'] ?? 3);
if (demoSteps_ > 1) {
  const demo = await demoSteps(demoSteps_);
  result['grpo_step_s'] = { old: demo.old.grpo_step_s, new: demo.new.grpo_step_s, ratio: +(demo.new.grpo_step_s / demo.old.grpo_step_s).toFixed(3) };
  result['demo_grpo'] = demo;
  save();
  console.log(`\nreal GRPO steps, ${demo.config} (${demo.rollouts} rollouts), median over ${demo.old.steps} and ${demo.new.steps} steps:`);
  console.table({ old: demo.old, new: demo.new });
}
console.log(`wrote ${out}`);
