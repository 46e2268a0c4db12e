/**
 * npm run bench:local — speed of the local backend, the old path (every row through the output
 * layer, every rollout's prompt run again, one sequence decoded at a time on the main thread, two
 * gradient threads) beside the new one (loss-bearing rows only, shared prompt prefixes, batched
 * decoding in worker threads, threads by model size). Old and new alternate, round after round, in
 * this one process, so that load from other work on a shared machine hits both alike.
 *  - matmul GFLOP/s, WebAssembly SIMD vs plain TypeScript loops (the kernel choice);
 *  - per model size (the default and the long-episode one), on a GRPO batch of 48 rollouts (6 groups
 *    of 8 sharing a prompt) of that size's episode shape: forward+backward tokens/s (sequence rows)
 *    and loss tokens/s (rows with weight != 0), batched sampling tokens/s, and one synthetic GRPO
 *    step (sample every turn of every rollout, one importance-sampling forwardBackward, optimStep);
 *  - grpo_step_s of real GRPO steps at the demo's configuration (configs/local-demo.json: the shipped
 *    model, the search environment, 48 rollouts), old path against new, from metrics.jsonl.
 * Rates are by wall clock. Writes bench/results/local.json.
 */
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadNow } from './measure.js';
import { fileURLToPath } from 'node:url';
import { createLocalBackend, DEFAULT_MODEL, LONG_MODEL, type LocalBackend } from '../src/backend/local/backend.js';
import type { Sampler } from '../src/backend/types.js';
import { createBackend } from '../src/train/backend-factory.js';
import { parseTrainConfig, readConfigFile, rubricOf } from '../src/train/config.js';
import { trainGrpo } from '../src/train/grpo.js';
import { loadTrainInputs } from '../src/train/run.js';
import { createKernels, type Kernels } from '../src/backend/local/tensor-math.js';
import { paramCount, type ModelConfig } from '../src/backend/local/model.js';
import { seededRandom } from '../src/random.js';
import { DEFAULT_VOCAB } from '../src/backend/local/tokenizer.js';
import type { Datum } from '../src/backend/types.js';
import { BpeTokenizer } from '../src/protocol/compact/bpe.js';
import { SPECIALS } from '../src/protocol/compact/renderer.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Episode shapes: the prompt, then turns of a written call and an inserted tool result. */
interface Episode {
  prompt: number;
  turns: number;
  sampledPerTurn: number;
  insertedPerTurn: number;
}
/** The demo's (about 664 tokens, 36 of them written: issue 19's count). */
const DEMO_EPISODE: Episode = { prompt: 300, turns: 3, sampledPerTurn: 12, insertedPerTurn: 164 };
/** An invoice-length episode for the long-episode model: about 2,000 tokens. */
const LONG_EPISODE: Episode = { prompt: 600, turns: 4, sampledPerTurn: 40, insertedPerTurn: 400 };
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

/** The backend settings of each path. */
function setPath(b: LocalBackend, path: Path): void {
  b.trainRows = path === 'old' ? 'all-rows' : 'loss-rows';
  b.sampling = path === 'old' ? 'single' : 'batched';
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** 48 rollouts (groups of 8 sharing a prompt) of `ep`'s shape, sampled by `sampler`: the old path one sequence after another, the new all at once. */
async function sampleRollouts(sampler: Sampler, ep: Episode, concurrent: boolean, randomTokens: (n: number) => number[]): Promise<{ datums: Datum[]; sampled: number }> {
  const prompts = Array.from({ length: ROLLOUTS / GROUP }, () => randomTokens(ep.prompt));
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

async function measureSize(label: string, vocab: number, config: Omit<ModelConfig, 'vocabSize'>, ep: Episode, paths: Path[]) {
  const tok = benchTokenizer(vocab);
  const dir = mkdtempSync(join(tmpdir(), 'sleuth-bench-'));
  // Old: the old default of two gradient threads; new: threads by model size.
  const backends = { old: createLocalBackend({ tokenizer: tok, config, seed: 1, threads: 2, dir }), new: createLocalBackend({ tokenizer: tok, config, seed: 1, dir }) };
  setPath(backends.old, 'old');
  setPath(backends.new, 'new');
  const cfg = backends.new.config;
  const randomTokens = (n: number) => Array.from({ length: n }, () => 256 + SPECIALS.length + Math.floor(rng() * (cfg.vocabSize - 300)));
  const adam = { learningRate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 };
  type Part = { wall: number; cpu: number };
  const runs: Record<Path, { sample: Part[]; train: Part[]; step: Part[]; sampled: number; batchTokens: number; lossTokens: number }> = {
    old: { sample: [], train: [], step: [], sampled: 0, batchTokens: 0, lossTokens: 0 },
    new: { sample: [], train: [], step: [], sampled: 0, batchTokens: 0, lossTokens: 0 },
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const p of paths) {
      // One synthetic GRPO step: sample every turn of 48 rollouts, then forwardBackward over them and optimStep.
      const b = backends[p], r = runs[p];
      let rollouts: Awaited<ReturnType<typeof sampleRollouts>> | undefined;
      const s = await b.saveWeightsForSampler(`step-${p}-${round}`);
      const sampling = await time(async () => (rollouts = await sampleRollouts(s, ep, p === 'new', randomTokens)));
      const training = await time(async () => {
        await b.forwardBackward(rollouts!.datums, 'importance_sampling');
        await b.optimStep(adam);
      });
      r.sample.push(sampling);
      r.train.push(training);
      r.step.push({ wall: sampling.wall + training.wall, cpu: sampling.cpu + training.cpu });
      r.sampled = rollouts!.sampled;
      r.batchTokens = rollouts!.datums.reduce((n, d) => n + d.inputTokens.length, 0);
      r.lossTokens = rollouts!.datums.reduce((n, d) => n + d.weights.filter((w) => w !== 0).length, 0);
    }
  }
  await Promise.all(PATHS.map((p) => backends[p].close()));
  rmSync(dir, { recursive: true, force: true });
  const med = (xs: Part[], k: 'wall' | 'cpu') => median(xs.map((x) => x[k]));
  const per = (p: Path) => {
    const r = runs[p];
    if (r.step.length === 0) return null;
    const rates = (k: 'wall' | 'cpu') => ({
      fwd_bwd_tokens_per_s: Math.round(r.batchTokens / med(r.train, k)),
      loss_tokens_per_s: Math.round(r.lossTokens / med(r.train, k)),
      sample_tokens_per_s: Math.round(r.sampled / med(r.sample, k)),
      grpo_step_s: +med(r.step, k).toFixed(2),
    });
    return { ...rates('wall'), by_cpu_time: rates('cpu'), threads: backends[p].threads };
  };
  return {
    label,
    config: cfg,
    params: paramCount(cfg),
    episode: ep,
    rollouts: ROLLOUTS,
    group_size: GROUP,
    batch_tokens: runs.new.batchTokens,
    loss_tokens: runs.new.lossTokens,
    sampled_tokens: runs.new.sampled,
    old: per('old'),
    new: per('new')!,
    seconds: runs,
  };
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
        if (p === 'old') b.threads = 2;
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
};
/** Written after every section, so that a run cut short keeps what it measured. */
function save(): void {
  result['machine'] = { cpus: cpus().length, cpu: cpus()[0]?.model ?? '', node: process.version, load_average_at_start: loadAtStart, load_average_at_end: loadNow() };
  result['date'] = new Date().toISOString();
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.tmp`, JSON.stringify(result, null, 2) + '\n');
  renameSync(`${out}.tmp`, out);
}
const sizes: Awaited<ReturnType<typeof measureSize>>[] = [];
sizes.push(await measureSize('default', DEFAULT_VOCAB, { ...DEFAULT_MODEL, context: 1024 }, DEMO_EPISODE, PATHS));
result['sizes'] = sizes;
save();
const demo = await demoSteps(Number(process.env['BENCH_DEMO_STEPS'] ?? 4));
result['grpo_step_s'] = { old: demo.old.grpo_step_s, new: demo.new.grpo_step_s, ratio: +(demo.new.grpo_step_s / demo.old.grpo_step_s).toFixed(3) };
result['demo_grpo'] = demo;
save();
console.log(`\nreal GRPO steps, ${demo.config} (${demo.rollouts} rollouts), median over ${demo.old.steps} and ${demo.new.steps} steps:`);
console.table({ old: demo.old, new: demo.new });
// The long-episode model is new: only the new path runs it (the old one would take most of an hour here).
sizes.push(await measureSize('long-episode', DEFAULT_VOCAB, LONG_MODEL, LONG_EPISODE, ['new']));
result['long_episode_steps_per_hour'] = Math.round(3600 / sizes[1]!.new.grpo_step_s);
save();
console.log(`\nGRPO batch of ${ROLLOUTS} rollouts (groups of ${GROUP}), median of ${ROUNDS} alternating rounds, wall clock (CPU time):`);
console.table(
  Object.fromEntries(
    sizes.flatMap((s) =>
      PATHS.flatMap((p) => {
        const r = s[p];
        if (!r) return [];
        return [[`${s.label} d${s.config.dModel} L${s.config.nLayers} ctx${s.config.context} (${(s.params / 1e6).toFixed(2)}M), ${p}`, { 'fwd+bwd tok/s': `${r.fwd_bwd_tokens_per_s} (${r.by_cpu_time.fwd_bwd_tokens_per_s})`, 'loss tok/s': `${r.loss_tokens_per_s} (${r.by_cpu_time.loss_tokens_per_s})`, 'sampling tok/s': `${r.sample_tokens_per_s} (${r.by_cpu_time.sample_tokens_per_s})`, 'GRPO step s': `${r.grpo_step_s} (${r.by_cpu_time.grpo_step_s})`, threads: r.threads }]];
      }),
    ),
  ),
);
console.log(`wrote ${out}`);
