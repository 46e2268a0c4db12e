/**
 * bench:synth-tasks: are synthesized tasks like real ones, and cheap to make?
 *
 * 1. On the shipped MuSiQue pool (11,308 chunks; its questions unused), synthesize 2-hop tasks and
 *    compare their headroom with real MuSiQue dev's: the hop oracle's F4 minus the best fixed
 *    script's (the demo's 37 scripts, the best chosen on each set's dev split by mean F4), per task,
 *    with bootstrap 95% intervals, and the difference between the two sets (unpaired bootstrap).
 * 2. On the man pages of this machine (bench/corpora/manpages.ts), index them and synthesize
 *    --man-count tasks (default 600), timed; a sample of 20 with their chains is kept for the docs.
 *
 * 3. With --grpo STEPS: on 2-hop tasks synthesized over the MuSiQue pool with every real dev and
 *    test gold chunk left out (--exclude-gold), the shipped 0.3M model (configs/local-musique.json)
 *    trained by GRPO from the base model, and by SFT from the demo's span teacher then GRPO (one run
 *    per --seeds seed); the
 *    base model, SFT and both GRPO models on real MuSiQue test (4 samples each), paired bootstrap
 *    over tasks.
 *
 * Every timing has the 1-minute load average at its start and end beside it (2 shared cores).
 *
 *   npm run bench:synth-tasks [-- --count 300] [--man-count 600] [--man-root DIR] [--grpo STEPS [--seeds 0,1,2]] [--out FILE]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { prepareEval } from '../src/cli/commands/eval.js';
import { loadRunRows } from '../src/eval/compare.js';
import { bootstrapMean, pairedBootstrap, pairedBootstrapGrid, type Interval } from '../src/eval/stats.js';
import { MUSIQUE_PLAN } from '../src/demo/demo.js';
import { seededRandom } from '../src/random.js';
import { buildIndex, openIndex } from '../src/search/index.js';
import { ensureShippedIndex, readTaskSet, taskSetDir } from '../src/tasks/registry.js';
import { goldChunkIds, hopsOf } from '../src/tasks/split.js';
import { synthesizeTaskSet } from '../src/tasks/synthesize/synthesize.js';
import { badFlag, benchArgs, wholeFlag } from './args.js';
import { guardLoad, LOAD_FLAG } from './load.js';
import { DEFAULT_MAN_ROOT, manPassages } from './corpora/manpages.js';

const USAGE = `usage: node dist/bench/synth-tasks.js [--count N] [--man-count N] [--man-root DIR] [--grpo STEPS [--seeds 0,1,2]] [--out FILE]`;
const { values } = benchArgs(
  { count: { type: 'string', default: '300' }, 'man-count': { type: 'string', default: '600' }, 'man-root': { type: 'string', default: DEFAULT_MAN_ROOT }, grpo: { type: 'string', default: '0' }, seeds: { type: 'string', default: '0' }, out: { type: 'string', default: 'bench/results/synth-tasks.json' }, ...LOAD_FLAG },
  USAGE,
);
const count = wholeFlag(values, 'count', 1);
const manCount = wholeFlag(values, 'man-count', 1);
const grpoSteps = wholeFlag(values, 'grpo', 0);
const seeds = values.seeds!.split(',').map((x) => Number(x));
if (seeds.some((x) => !Number.isInteger(x) || x < 0)) badFlag(`--seeds must be whole numbers, comma-separated, got '${values.seeds}'`);
const guard = guardLoad('bench:synth-tasks', values['allow-loaded']);

const round = (x: number, d = 3) => Number(x.toFixed(d));
const load = () => round(loadavg()[0]!, 2);
const work = mkdtempSync(join(tmpdir(), 'sleuth-bench-synth-'));
process.env['SLEUTH_HOME'] = join(work, 'home');

/** A step's wall time with the load average at its start and end. */
async function timed<T>(what: string, fn: () => Promise<T>): Promise<{ value: T; timing: { seconds: number; load_start: number; load_end: number } }> {
  const loadStart = load();
  const t0 = performance.now();
  const value = await fn();
  const timing = { seconds: round((performance.now() - t0) / 1000, 2), load_start: loadStart, load_end: load() };
  process.stderr.write(`${what}: ${timing.seconds} s (load ${timing.load_start} -> ${timing.load_end})\n`);
  return { value, timing };
}

/** Mean F4 per task of an agent on a split (one sample: every agent here is deterministic). */
async function f4PerTask(tasks: string, split: string, agent: string): Promise<Map<string, number>> {
  const dir = join(work, 'runs', `${tasks}-${split}-${agent.replace(/[^A-Za-z0-9._-]/gu, '_')}`);
  const prepared = await prepareEval({ agent, tasks, split, rubric: 'f4', concurrency: '4' }, { samples: 1 });
  await prepared.run(dir, false);
  return new Map(loadRunRows(dir).rows.map((r) => [r.taskId, r.values['reward']!]));
}

const meanOf = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0) / m.size;

/**
 * Headroom on a split: the hop oracle minus the best fixed script (chosen on `split` by mean F4),
 * per task, with a bootstrap interval; `only` keeps some tasks (the 2-hop ones).
 */
async function headroom(tasks: string, split: string, only: (id: string) => boolean = () => true) {
  const scripts: { spec: string; f4: number; perTask: Map<string, number> }[] = [];
  for (const spec of MUSIQUE_PLAN.scripts!) {
    const perTask = new Map([...(await f4PerTask(tasks, split, spec))].filter(([id]) => only(id)));
    scripts.push({ spec, f4: meanOf(perTask), perTask });
  }
  const best = scripts.reduce((a, b) => (b.f4 > a.f4 ? b : a));
  const oracle = new Map([...(await f4PerTask(tasks, split, 'hop-oracle'))].filter(([id]) => only(id)));
  const diffs = [...oracle].map(([id, f4]) => f4 - best.perTask.get(id)!);
  return {
    tasks: diffs.length,
    best_script: best.spec,
    best_script_f4: round(best.f4),
    oracle_f4: round(meanOf(oracle)),
    headroom: interval(bootstrapMean(diffs, { seed: 0 })),
    scripts: Object.fromEntries(scripts.map((s) => [s.spec, round(s.f4)])),
    diffs,
  };
}

function interval(i: Interval) {
  return { mean: round(i.mean), lo: round(i.lo), hi: round(i.hi) };
}

/** Unpaired percentile bootstrap of mean(a) - mean(b): two sets of different tasks. */
function unpairedDifference(a: readonly number[], b: readonly number[], resamples = 2000) {
  const rand = seededRandom(1);
  const draw = (xs: readonly number[]) => {
    let s = 0;
    for (let i = 0; i < xs.length; i++) s += xs[Math.floor(rand() * xs.length)]!;
    return s / xs.length;
  };
  const d = Float64Array.from({ length: resamples }, () => draw(a) - draw(b)).sort();
  const m = (xs: readonly number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
  return { mean: round(m(a) - m(b)), lo: round(d[Math.floor(0.025 * resamples)]!), hi: round(d[Math.ceil(0.975 * resamples) - 1]!) };
}

const loadAtStart = load();
// 1. MuSiQue's pool: synthesized 2-hop tasks against real dev.
const musiqueIndex = await ensureShippedIndex('musique');
const synth = await timed(`synthesize ${count} tasks on the MuSiQue pool`, async () => synthesizeTaskSet(await openIndex(musiqueIndex), musiqueIndex, 'mq-synth', taskSetDir('mq-synth'), { count, hops: [2] }));
const realDev = readTaskSet('musique').tasks.filter((t) => t.split === 'dev');
const twoHop = new Set(realDev.filter((t) => hopsOf(t) === 2).map((t) => t.id));
const evals = await timed('eval 37 scripts and the hop oracle on both sets', async () => ({
  synth_dev: await headroom('mq-synth', 'dev'),
  synth_test: await headroom('mq-synth', 'test'),
  real_dev: await headroom('musique', 'dev'),
  real_dev_2hop: await headroom('musique', 'dev', (id) => twoHop.has(id)),
}));
const { synth_dev, synth_test, real_dev, real_dev_2hop } = evals.value;

// 2. Man pages: index, then synthesize at least 500 tasks.
const manIndexDir = join(work, 'man-index');
const manIndex = await timed('index the man pages', async () => buildIndex((async function* () {
  yield* manPassages(values['man-root']);
})(), manIndexDir));
const man = await timed(`synthesize ${manCount} tasks on the man pages`, async () => synthesizeTaskSet(await openIndex(manIndexDir), manIndexDir, 'man-synth', taskSetDir('man-synth'), { count: manCount, hops: [2] }));
const manTasks = readTaskSet('man-synth').tasks;
const sample = manTasks.filter((t) => t.split === 'test').slice(0, 20).map((t) => ({
  id: t.id,
  question: t.query,
  chain: t.facts.map((f) => f.chunkIds[0]),
  hops: (t.meta!['decomposition'] as { question: string; answer: string }[]).map((h) => h.question),
  bridges: t.meta!['bridges'],
}));

// 3. GRPO on synthesized tasks, scored on real MuSiQue test.
const TRAIN_CONFIG = 'configs/local-musique.json';
/** The budgets the preset trains in, so that both models are scored as GRPO saw episodes. */
const BUDGET_FLAGS = { 'max-turns': '6', 'max-tokens-per-turn': '128', 'context-tokens': '1024' };

async function testRewards(agent: string, name: string): Promise<Map<string, number>> {
  const dir = join(work, 'runs', name);
  const prepared = await prepareEval({ agent, tasks: 'musique', split: 'test', samples: '4', seed: '0', rubric: 'f4-traj-format', ...BUDGET_FLAGS }, { samples: 4 });
  await prepared.run(dir, false);
  const byTask = new Map<string, number[]>();
  for (const r of loadRunRows(dir).rows) byTask.set(r.taskId, [...(byTask.get(r.taskId) ?? []), r.values['reward']!]);
  return new Map([...byTask].map(([id, xs]) => [id, xs.reduce((a, b) => a + b, 0) / xs.length]));
}

/** The demo's multi-hop teacher, the best script on synthesized dev that fits the model's 1,024-token context. */
const TEACHER = 'span:10,1.1+1.2,5,5,3';

/** Run `sleuth ARGS...` here (SLEUTH_HOME is the bench's), or throw with the end of its stderr. */
function sleuth(args: string[]): string {
  const r = spawnSync(process.execPath, ['bin/sleuth.js', ...args], { encoding: 'utf8', env: process.env });
  if (r.status !== 0) throw new Error(`sleuth ${args[0]} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return r.stdout + r.stderr;
}

async function grpoOnSynthesized(steps: number) {
  const made = await timed('synthesize training tasks without real dev/test gold', async () => {
    const exclude = new Set(readTaskSet('musique').tasks.filter((t) => t.split !== 'train').flatMap(goldChunkIds));
    return synthesizeTaskSet(await openIndex(musiqueIndex), musiqueIndex, 'mq-train', taskSetDir('mq-train'), { count: 400, hops: [2], exclude });
  });
  const sftDir = join(work, 'sft');
  const sft = await timed(`SFT from ${TEACHER} on the synthesized train split`, async () => {
    sleuth(['sft', '--teacher', TEACHER, '--config', TRAIN_CONFIG, '--tasks', 'mq-train', '--eval-split', 'dev', '--attempts', '1', '--cap', '1', '--epochs', '3', '--threshold', '0.3', '--batch-size', '8', '--lr', '0.001', '--sft-keep', 'best', '--out', sftDir]);
    return (JSON.parse(readFileSync(join(sftDir, 'summary.json'), 'utf8')) as { best: { samplerPath: string } }).best.samplerPath;
  });
  /** GRPO from a model; the training evals on synthesized dev, as the run printed them. */
  const grpoFrom = (model: string, name: string, seed: number) =>
    timed(`GRPO ${name}, ${steps} steps`, async () => {
      const out = sleuth(['train', '--config', TRAIN_CONFIG, '--tasks', 'mq-train', '--eval-split', 'dev', '--model', model, '--steps', String(steps), '--seed', String(seed), '--out', join(work, name)]);
      return out.split('\n').filter((l) => l.startsWith('train: eval')).map((l) => l.replace(/\s+/g, ' ').trim());
    });
  const fromBase = await grpoFrom('shipped', 'grpo-base', seeds[0]!);
  const fromSft = [];
  for (const seed of seeds) fromSft.push(await grpoFrom(sft.value, `grpo-sft-${seed}`, seed));
  const last = (name: string) => `local:${join(work, name, 'checkpoints', `sampler-${steps}.sampler.ckpt`)}`;
  const evals = await timed('eval four models on real MuSiQue test', async () => ({
    base: await testRewards('local:shipped', 'base-test'),
    sft: await testRewards(`local:${sft.value}`, 'sft-test'),
    grpo_from_base: await testRewards(last('grpo-base'), 'grpo-base-test'),
    grpo_from_sft: await (async () => {
      const out: Map<string, number>[] = [];
      for (const seed of seeds) out.push(await testRewards(last(`grpo-sft-${seed}`), `grpo-sft-${seed}-test`));
      return out;
    })(),
  }));
  const ids = [...evals.value.base.keys()];
  const row = (m: Map<string, number>) => ids.map((id) => m.get(id)!);
  const base = row(evals.value.base), sftTest = row(evals.value.sft), grpoBase = row(evals.value.grpo_from_base);
  const grpoSft = evals.value.grpo_from_sft.map(row);
  const vs = (a: number[], b: number[]) => interval(pairedBootstrap(a, b, { seed: 0 }));
  // GRPO from SFT over seeds x tasks: the base model and SFT are one model each, the same on every row.
  const vsGrid = (a: number[]) => interval(pairedBootstrapGrid(grpoSft.map(() => a), grpoSft, { seed: 0 }));
  return {
    config: TRAIN_CONFIG,
    teacher: TEACHER,
    steps,
    train_tasks: made.value.counts,
    synthesis: { ...made.value.synthesis, ...made.timing },
    sft_timing: sft.timing,
    grpo_from_base: { timing: fromBase.timing, evals_on_synth_dev: fromBase.value },
    grpo_from_sft: fromSft.map((r, i) => ({ seed: seeds[i], timing: r.timing, evals_on_synth_dev: r.value })),
    eval_timing: evals.timing,
    test_tasks: ids.length,
    rubric: 'f4-traj-format',
    test: {
      base: interval(bootstrapMean(base, { seed: 0 })),
      sft: interval(bootstrapMean(sftTest, { seed: 0 })),
      grpo_from_base: interval(bootstrapMean(grpoBase, { seed: 0 })),
      grpo_from_sft_per_seed: grpoSft.map((r, i) => ({ seed: seeds[i], ...interval(bootstrapMean(r, { seed: 0 })) })),
      grpo_from_sft_mean_of_seeds: round(grpoSft.flat().reduce((a, b) => a + b, 0) / grpoSft.flat().length),
    },
    sft_minus_base: vs(base, sftTest),
    grpo_from_base_minus_base: vs(base, grpoBase),
    grpo_from_sft_minus_base: vsGrid(base),
    grpo_from_sft_minus_sft: vsGrid(sftTest),
  };
}
const grpo = grpoSteps > 0 ? await grpoOnSynthesized(grpoSteps) : undefined;

/** Without --grpo, the GRPO section of the file's earlier run stays, with the date it was measured. */
function previousGrpo(out: string): Record<string, unknown> {
  try {
    const before = JSON.parse(readFileSync(out, 'utf8')) as { date?: string; grpo_on_synthesized?: unknown; grpo_on_synthesized_date?: string };
    return before.grpo_on_synthesized ? { grpo_on_synthesized: before.grpo_on_synthesized, grpo_on_synthesized_date: before.grpo_on_synthesized_date ?? before.date } : {};
  } catch {
    return {};
  }
}

const strip = ({ diffs: _d, ...rest }: { diffs: number[] } & Record<string, unknown>) => rest;
const result = {
  bench: 'synth-tasks',
  date: new Date().toISOString(),
  load_avg: [loadAtStart, load()],
  musique_pool: {
    chunks: synth.value.chunks,
    synthesis: { ...synth.value.synthesis, counts: synth.value.counts, sha256: synth.value.sha256, ...synth.timing },
    eval_timing: evals.timing,
    synth_dev: strip(synth_dev),
    synth_test: strip(synth_test),
    real_dev: strip(real_dev),
    real_dev_2hop: strip(real_dev_2hop),
    // Synthesized minus real: the target is |difference| <= 0.05.
    synth_dev_minus_real_dev: unpairedDifference(synth_dev.diffs, real_dev.diffs),
    synth_dev_minus_real_dev_2hop: unpairedDifference(synth_dev.diffs, real_dev_2hop.diffs),
    synth_test_minus_real_dev: unpairedDifference(synth_test.diffs, real_dev.diffs),
  },
  manpages: {
    chunks: manIndex.value.docs,
    index_timing: manIndex.timing,
    synthesis: { ...man.value.synthesis, counts: man.value.counts, sha256: man.value.sha256, ...man.timing },
    sample,
  },
  ...(grpo ? { grpo_on_synthesized: grpo } : previousGrpo(values.out!)),
  ...guard.fields(),
};
writeFileSync(values.out!, JSON.stringify(result, null, 2) + '\n');
rmSync(work, { recursive: true, force: true });
process.stderr.write(`wrote ${values.out}\n`);
