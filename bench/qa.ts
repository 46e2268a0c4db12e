/**
 * npm run bench:qa — does the local agent learn to answer? The Wikipedia research-agent tutorial's
 * flow (closed book, base with search, SFT, GRPO, the two ablations) on the local model in the QA
 * environment, once per training seed, every number on the test split of the default task set,
 * HotpotQA and MuSiQue apart, with paired intervals over seeds x tasks. Writes bench/results/qa.json
 * and every test episode (bench/results/qa-episodes/seed-N.jsonl.gz).
 *
 * The test split's SHA-256 is printed and recorded; a result file that records another hash is
 * not overwritten (the test split changed under it: say so, and write elsewhere with --out).
 *
 *   node dist/bench/qa.js [--plan qa|qa-quick] [--seeds 0,1,2] [--out FILE] [--runs DIR]
 *   node dist/bench/qa.js --rubrics qa-em,qa-f1,qa-f1-format [--seeds 0] [--out FILE]
 *
 * With --rubrics, the paper's reward comparison: the same flow trained with each rubric (GRPO's
 * reward; SFT keeps what that rubric scores above the plan's threshold), every GRPO model on the
 * same test questions, exact match and F1 paired against the first rubric's
 * (bench/results/qa-rubrics.json).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { pairedDelta, QA_LONG_PLAN, QA_PLAN, QA_QUICK_PLAN, runDemo, type DemoPlan } from '../src/demo/demo.js';
import { loadRunRows } from '../src/eval/compare.js';
import { planConfig, QA_ROWS, qaComparisons, qaRowStats, reportTasks, runQaFlow, type QaRow, type QaSeedResult } from '../src/demo/qa.js';
import { latestRollouts, readRollouts } from '../src/runs/store.js';
import { splitSha256, taskSource } from '../src/tasks/split.js';
import { priceOf } from '../src/train/start.js';
import { badFlag, benchArgs } from './args.js';
import { guardLoad, LOAD_FLAG } from './load.js';

const USAGE = `
usage: node dist/bench/qa.js [--plan qa|qa-quick] [--seeds 0,1,2] [--out FILE] [--runs DIR]

The tutorial's flow on the local model, every seed reported on the test split.

  --plan    qa (default): configs/local-qa.json (QA_PLAN); qa-long: the same on the shipped 1.32M model
            in a 2,048-token context; qa-quick: a seconds-long run on a tiny model
  --seeds   training seeds, comma-separated (default 0,1,2)
  --out     the result file (default bench/results/qa.json)
  --runs    where the run directories go (default runs/bench-qa-TIMESTAMP)
  --rubric  train with this QA rubric instead of the preset's (qa-f1-format)
  --rubrics the reward comparison: train with each of these QA rubrics (comma-separated) and
            compare the GRPO models (default out: bench/results/qa-rubrics.json)
`;

const PLANS: Record<string, DemoPlan> = { qa: QA_PLAN, 'qa-long': QA_LONG_PLAN, 'qa-quick': QA_QUICK_PLAN };
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = benchArgs({ plan: { type: 'string' }, seeds: { type: 'string' }, out: { type: 'string' }, runs: { type: 'string' }, rubrics: { type: 'string' }, rubric: { type: 'string' }, ...LOAD_FLAG }, USAGE);
const planName = values.plan ?? 'qa';
const planned = PLANS[planName] ?? badFlag(`--plan ${planName}: expected one of ${Object.keys(PLANS).join(', ')}`);
if (values.rubric !== undefined && !/^qa-/u.test(values.rubric)) badFlag(`--rubric ${values.rubric}: expected a QA rubric (qa-em, qa-f1, qa-f1-format, qa-partial)`);
const plan: DemoPlan = values.rubric ? { ...planned, grpo: { ...planned.grpo, reward: { rubric: values.rubric } } } : planned;
const seeds = (values.seeds ?? '0,1,2').split(',').map((s) => (/^\d+$/u.test(s.trim()) ? Number(s) : badFlag(`--seeds ${values.seeds}: expected whole numbers separated by commas, e.g. 0,1,2`)));
if (new Set(seeds).size !== seeds.length) badFlag(`--seeds ${values.seeds}: a seed is repeated`);
const rubrics = values.rubrics === undefined ? undefined : values.rubrics.split(',').map((r) => r.trim());
if (rubrics && (rubrics.length < 2 || rubrics.some((r) => !/^qa-/u.test(r)) || new Set(rubrics).size !== rubrics.length)) badFlag(`--rubrics ${values.rubrics}: expected two or more distinct QA rubrics, e.g. qa-em,qa-f1,qa-f1-format`);
const out = resolve(values.out ?? join(root, 'bench', 'results', rubrics ? 'qa-rubrics.json' : 'qa.json'));
const runsDir = resolve(values.runs ?? join(root, 'runs', `bench-qa-${new Date().toISOString().replace(/[:.]/g, '-')}`));
// After the flags are checked: a bad flag is named first, whatever the load.
const guard = guardLoad('bench:qa', values['allow-loaded']);

const config = planConfig(plan, seeds[0]!);
const tasks = await reportTasks(config, plan);
const testSha256 = splitSha256(tasks);
process.stderr.write(`${config.tasks}/${plan.reportSplit}: ${tasks.length} tasks, sha256 ${testSha256}\n`);
if (existsSync(out)) {
  // Only a result this bench wrote is replaced, and only over the same test split.
  let recorded: unknown;
  try {
    recorded = (JSON.parse(readFileSync(out, 'utf8')) as { test_sha256?: unknown } | null)?.test_sha256;
  } catch (err) {
    badFlag(`--out ${out}: the file there is not JSON (${(err as Error).message}); bench:qa does not overwrite a file it did not write: choose another --out`);
  }
  if (typeof recorded !== 'string') badFlag(`--out ${out}: the file there records no test_sha256, so bench:qa did not write it and does not overwrite it: choose another --out`);
  if (recorded !== testSha256) badFlag(`${out} records test split sha256 ${recorded}, but the split now hashes to ${testSha256}: the test split changed under that result; write the new one elsewhere with --out`);
}
const load = loadavg();
if (rubrics) await compareRubrics(rubrics);

const results: QaSeedResult[] = [];
for (const seed of seeds) {
  process.stderr.write(`=== seed ${seed} (${planName})\n`);
  results.push(await runQaFlow({ dir: join(runsDir, `seed-${seed}`), plan, seed, log: (l) => process.stderr.write(`${l}\n`) }));
}

const byTask = new Map(tasks.map((t) => [t.id, t]));
const price = priceOf(config);
const dirsOf = (row: QaRow) => results.map((r) => r.dirs[row]);
const rows = Object.fromEntries(QA_ROWS.map((row) => [row, qaRowStats(row, dirsOf(row), byTask, price)]));
const comparisons = qaComparisons(Object.fromEntries(QA_ROWS.map((row) => [row, dirsOf(row)])) as Record<QaRow, string[]>, config.seed);

// Every test episode of every row, in a compact form.
const episodesDir = join(dirname(out), `${basename(out, '.json')}-episodes`);
mkdirSync(episodesDir, { recursive: true });
for (const r of results) {
  const lines: string[] = [];
  for (const row of QA_ROWS) {
    for (const x of latestRollouts(readRollouts(r.dirs[row]).rollouts)) {
      const task = byTask.get(x.taskId);
      lines.push(JSON.stringify({
        row,
        task: x.taskId,
        source: task ? taskSource(task) : null,
        sample: x.sample,
        question: x.query,
        gold: task?.answers ?? [],
        answer: x.answer ?? null,
        exact_match: x.reward?.parts['exact_match'] ?? 0,
        f1: x.reward?.parts['f1'] ?? 0,
        end: x.endReason,
        calls: x.turns.flatMap((t) => t.calls.map((c) => ({ name: c.name, arguments: c.arguments, outcome: c.result.outcome }))),
      }));
    }
  }
  const file = join(episodesDir, `seed-${r.demo.seed}.jsonl.gz`);
  writeFileSync(`${file}.tmp`, gzipSync(lines.join('\n') + '\n'));
  renameSync(`${file}.tmp`, file);
}

const summary = {
  plan: planName,
  preset: `configs/${plan.preset}.json`,
  tasks: config.tasks,
  split: plan.reportSplit,
  test_sha256: testSha256,
  test_tasks: tasks.length,
  samples_per_task: config.evalSamples,
  rubric: config.reward.rubric,
  best_script: results[0]!.demo.bestScript ?? null,
  sft: results.map((r) => ({ seed: r.demo.seed, solved: r.demo.sftRun.solved, kept_queries: r.demo.sftRun.keptQueries, demonstrations: r.demo.sftRun.kept, best_epoch: r.demo.sftRun.best.epoch, dev_reward_per_epoch: r.demo.sftRun.epochs.map((e) => e.eval) })),
  rows,
  comparisons,
  seeds: results.map((r) => ({ seed: r.demo.seed, wall_s: r.demo.wallSeconds, phases: r.demo.phases, dir: relative(root, r.demo.dir), episodes_file: relative(root, join(episodesDir, `seed-${r.demo.seed}.jsonl.gz`)) })),
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '', loadavg_at_start: load, loadavg_at_end: loadavg() },
  ...guard.fields(),
  date: new Date().toISOString(),
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(`${out}.tmp`, JSON.stringify(summary, null, 2) + '\n');
renameSync(`${out}.tmp`, out);

const pct = (x: number) => x.toFixed(3);
const delta = (x: { delta: number; ci_low: number; ci_high: number }) => `${x.delta >= 0 ? '+' : ''}${x.delta.toFixed(3)} [${x.ci_low.toFixed(3)}, ${x.ci_high.toFixed(3)}]`;
console.log(`${config.tasks}/${plan.reportSplit} (${tasks.length} questions x ${config.evalSamples} samples, sha256 ${testSha256.slice(0, 16)}), ${seeds.length} seed(s)`);
console.log(`${'row'.padEnd(40)} ${'EM'.padStart(6)} ${'F1'.padStart(6)}  ${'EM by source'.padEnd(28)} searches  abort  clip  tokens  $/q local  $/q at Qwen3.5-4B prices`);
for (const row of QA_ROWS) {
  const s = rows[row]!;
  const bySource = Object.entries(s.exact_match_by_source).map(([k, v]) => `${k} ${pct(v)}`).join(', ');
  console.log(`${s.label.padEnd(40)} ${pct(s.exact_match).padStart(6)} ${pct(s.f1).padStart(6)}  ${bySource.padEnd(28)} ${s.searches_per_question.toFixed(2).padStart(8)} ${s.process.abort_rate.toFixed(2).padStart(6)} ${s.process.length_clip_ratio.toFixed(2).padStart(5)} ${s.tokens_per_question.toFixed(0).padStart(7)}  ${s.usd_per_question.toFixed(4).padStart(9)}  ${s.usd_per_question_at_tutorial_prices === null ? '-' : s.usd_per_question_at_tutorial_prices.toFixed(5)}`);
}
for (const [name, c] of Object.entries(comparisons)) console.log(`${name}: EM ${delta(c.exact_match)}, F1 ${delta(c.f1)}`);
console.log(`wrote ${out}`);
process.exit(0);

/** The reward comparison: the flow once per rubric and seed, GRPO's test exact match and F1 paired against the first rubric's. */
async function compareRubrics(names: string[]): Promise<never> {
  const grpoDirs: Record<string, string[]> = {};
  const wall: Record<string, number[]> = {};
  for (const rubric of names) {
    const ruled: DemoPlan = { ...plan, grpo: { ...plan.grpo, reward: { rubric } } };
    for (const seed of seeds) {
      process.stderr.write(`=== ${rubric}, seed ${seed}\n`);
      const r = await runDemo({ dir: join(runsDir, rubric, `seed-${seed}`), plan: ruled, seed, log: (l) => process.stderr.write(`${l}\n`) });
      (grpoDirs[rubric] ??= []).push(r.evalDirs.grpo);
      (wall[rubric] ??= []).push(r.wallSeconds);
    }
  }
  const byTask = new Map(tasks.map((t) => [t.id, t]));
  const rows = Object.fromEntries(names.map((n) => [n, { ...qaRowStats('grpo', grpoDirs[n]!, byTask, priceOf(config)), label: `GRPO trained with ${n}`, wall_s: wall[n] }]));
  const first = names[0]!;
  const runs = (n: string) => grpoDirs[n]!.map(loadRunRows);
  const vsFirst = Object.fromEntries(names.slice(1).map((n) => [`${n}_vs_${first}`, { exact_match: pairedDelta(runs(first), runs(n), config.seed, 'exact_match'), f1: pairedDelta(runs(first), runs(n), config.seed, 'f1') }]));
  const summary = { plan: planName, tasks: config.tasks, split: plan.reportSplit, test_sha256: testSha256, test_tasks: tasks.length, samples_per_task: config.evalSamples, seeds, rubrics: names, rows, comparisons: vsFirst, machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '', loadavg_at_start: load, loadavg_at_end: loadavg() }, ...guard.fields(), date: new Date().toISOString() };
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.tmp`, JSON.stringify(summary, null, 2) + '\n');
  renameSync(`${out}.tmp`, out);
  for (const n of names) console.log(`GRPO trained with ${n}: EM ${rows[n]!.exact_match.toFixed(3)}, F1 ${rows[n]!.f1.toFixed(3)} (seeds ${rows[n]!.seeds.map((x) => x.toFixed(3)).join(', ')})`);
  for (const [k, c] of Object.entries(vsFirst)) console.log(`${k}: EM ${c.exact_match.delta.toFixed(3)} [${c.exact_match.ci_low.toFixed(3)}, ${c.exact_match.ci_high.toFixed(3)}], F1 ${c.f1.delta.toFixed(3)} [${c.f1.ci_low.toFixed(3)}, ${c.f1.ci_high.toFixed(3)}]`);
  console.log(`wrote ${out}`);
  process.exit(0);
}
