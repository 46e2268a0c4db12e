/**
 * npm run bench:learn — does the local agent learn to search? Runs the demo pipeline (baseline, base
 * model, SFT, GRPO; every number on the test split) once per training seed with a preset, and
 * writes bench/results/learn.json:
 *
 *   {preset, split, seeds: [{seed, wall_s, baseline, base, sft, grpo}], mean: {...},
 *    grpo_vs_baseline, grpo_vs_base, grpo_vs_sft: {metric, delta, ci_low, ci_high, shown, tasks, seeds},
 *    searches_per_episode, own_search_share, musique_trajectory_recall: {grpo, baseline},
 *    best_script: {spec, split, reward, candidates}, grpo_vs_best_script, oracle, hop_recall}
 *
 * With a plan of fixed scripts (musique), the baseline is the best of them on dev, so
 * grpo_vs_best_script is grpo_vs_baseline; the oracle (privileged) is a ceiling on test.
 *
 * The intervals are paired bootstraps over seeds x tasks (pairedBootstrapGrid). Every seed is
 * reported, not the best one.
 *
 *   node dist/bench/learn.js [--plan musique|long|demo|quick|musique-quick] [--seeds 0,1,2] [--out FILE] [--runs DIR]
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoJson } from '../src/cli/commands/demo.js';
import { curvesSvg } from '../src/explorer/curves-svg.js';
import { loadRunRows } from '../src/eval/compare.js';
import { readJsonl } from '../src/runs/jsonl.js';
import { FULL_PLAN, hopRecall, LONG_PLAN, MUSIQUE_PLAN, MUSIQUE_QUICK_PLAN, QUICK_PLAN, pairedDelta, runDemo, type DemoPlan, type DemoResult } from '../src/demo/demo.js';
import { badFlag, benchArgs } from './args.js';

const USAGE = `
usage: node dist/bench/learn.js [--plan long|demo|quick|musique|musique-quick] [--seeds 0,1,2] [--out FILE] [--runs DIR] [--curves FILE]

Runs baseline, base model, SFT and GRPO once per training seed and reports every seed on the test
split, their mean, and paired intervals over seeds x tasks.

  --plan    musique (default): configs/local-musique.json on the shipped MuSiQue set (below);
            long: configs/local-long.json on the default set; demo: configs/local-demo.json (sleuth demo's);
            quick: a seconds-long run of the whole pipeline on a tiny model;
            musique: SFT from the bridge teacher, GRPO from its checkpoint, the baseline the best
            fixed script on dev, the hop oracle beside on test (a ceiling);
            musique-quick: its seconds-long version
  --seeds   training seeds, comma-separated (default 0,1,2)
  --out     the result file (default bench/results/learn.json)
  --runs    where the run directories go (default runs/bench-learn-TIMESTAMP)
  --curves  also draw the first seed's GRPO curves to this SVG file
`;

const PLANS: Record<string, DemoPlan> = { long: LONG_PLAN, demo: FULL_PLAN, quick: QUICK_PLAN, musique: MUSIQUE_PLAN, 'musique-quick': MUSIQUE_QUICK_PLAN };

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = benchArgs({ plan: { type: 'string' }, seeds: { type: 'string' }, out: { type: 'string' }, runs: { type: 'string' }, curves: { type: 'string' } }, USAGE);
const planName = values.plan ?? 'musique';
const plan = PLANS[planName] ?? badFlag(`--plan ${planName}: expected one of ${Object.keys(PLANS).join(', ')}`);
const seeds = (values.seeds ?? '0,1,2').split(',').map((s) => {
  const n = Number(s);
  if (!/^\d+$/u.test(s.trim()) || !Number.isSafeInteger(n)) badFlag(`--seeds ${values.seeds}: expected whole numbers separated by commas, e.g. 0,1,2`);
  return n;
});
if (new Set(seeds).size !== seeds.length) badFlag(`--seeds ${values.seeds}: a seed is repeated`);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const runsDir = resolve(values.runs ?? join(root, 'runs', `bench-learn-${stamp}`));
const out = resolve(values.out ?? join(root, 'bench', 'results', 'learn.json'));

const results: DemoResult[] = [];
for (const seed of seeds) {
  process.stderr.write(`=== seed ${seed} (${planName})\n`);
  const r = await runDemo({ dir: join(runsDir, `seed-${seed}`), plan, seed, log: (l) => process.stderr.write(`${l}\n`) });
  results.push(r);
  const g = r.grpoVsBaseline;
  process.stderr.write(`seed ${seed}: ${r.wallSeconds.toFixed(0)}s; test reward baseline ${fmt(r.baseline['reward'])}, base ${fmt(r.base['reward'])}, SFT ${fmt(r.sft['reward'])}, GRPO ${fmt(r.grpo['reward'])}; GRPO - baseline ${g.delta.toFixed(3)} [${g.ci_low.toFixed(3)}, ${g.ci_high.toFixed(3)}]\n`);
}

const rowsOf = (agent: 'baseline' | 'base' | 'sft' | 'grpo') => results.map((r) => loadRunRows(r.evalDirs[agent]));
const grpoRows = rowsOf('grpo');
const perSeed = results.map((r) => {
  const j = demoJson(r);
  return { seed: r.seed, wall_s: r.wallSeconds, grpo_from: r.grpoFrom, baseline: j['baseline'], base: j['base'], sft: j['sft'], grpo: j['grpo'], grpo_vs_baseline: r.grpoVsBaseline, grpo_vs_base: r.grpoVsBase, dir: r.dir };
});
const meanOf = (agent: 'baseline' | 'base' | 'sft' | 'grpo', key: 'reward' | 'recall' | 'precision' | 'curated_size') => results.reduce((s, r) => s + Number(r[agent][key]), 0) / results.length;
const meanBehaviour = (agent: 'baseline' | 'grpo', key: 'searches_per_episode' | 'own_search_share' | 'musique_trajectory_recall') => {
  const xs = results.map((r) => r.behaviour[agent][key]).filter((x): x is number => typeof x === 'number');
  return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null;
};
const summary = {
  plan: planName,
  preset: `configs/${plan.preset}.json`,
  split: plan.reportSplit,
  seeds: perSeed,
  mean: Object.fromEntries((['baseline', 'base', 'sft', 'grpo'] as const).map((a) => [a, Object.fromEntries((['reward', 'recall', 'precision', 'curated_size'] as const).map((k) => [k, meanOf(a, k)]))])),
  grpo_vs_baseline: pairedDelta(rowsOf('baseline'), grpoRows),
  grpo_vs_base: pairedDelta(rowsOf('base'), grpoRows),
  grpo_vs_sft: pairedDelta(rowsOf('sft'), grpoRows),
  searches_per_episode: meanBehaviour('grpo', 'searches_per_episode'),
  own_search_share: meanBehaviour('grpo', 'own_search_share'),
  musique_trajectory_recall: { grpo: meanBehaviour('grpo', 'musique_trajectory_recall'), baseline: meanBehaviour('baseline', 'musique_trajectory_recall') },
  ...(results[0]!.bestScript ? { best_script: results[0]!.bestScript, grpo_vs_best_script: pairedDelta(rowsOf('baseline'), grpoRows) } : {}),
  ...(results[0]!.oracle ? { oracle: { spec: results[0]!.oracle.spec, ...pickMeans(results.map((r) => r.oracle!.summary)) } as Record<string, unknown> } : {}),
  hop_recall: Object.fromEntries([...(['baseline', 'base', 'sft', 'grpo'] as const).map((a) => [a, meanRecords(results.map((r) => hopRecall(r[a])))] as const), ...(results[0]!.oracle ? [['oracle', meanRecords(results.map((r) => hopRecall(r.oracle!.summary)))] as const] : [])]),
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '', loadavg_at_end: loadavg() },
  date: new Date().toISOString(),
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(`${out}.tmp`, JSON.stringify(summary, null, 2) + '\n');
renameSync(`${out}.tmp`, out);
if (values.curves) {
  const curves = resolve(values.curves);
  const metrics = readJsonl<Record<string, unknown>>(join(results[0]!.dir, 'grpo', 'metrics.jsonl')).records;
  mkdirSync(dirname(curves), { recursive: true });
  writeFileSync(`${curves}.tmp`, curvesSvg(metrics, { title: `sleuth ${planName}, GRPO seed ${results[0]!.seed} from the ${results[0]!.grpoFrom === 'sft' ? 'SFT checkpoint' : 'base model'} (${new Date().toISOString().slice(0, 10)})` }));
  renameSync(`${curves}.tmp`, curves);
}
const d = (x: { delta: number; ci_low: number; ci_high: number }) => `${x.delta >= 0 ? '+' : ''}${x.delta.toFixed(3)} [${x.ci_low.toFixed(3)}, ${x.ci_high.toFixed(3)}]`;
console.log(`${planName}, ${seeds.length} seed(s), ${plan.reportSplit} reward: ${perSeed.map((s) => `seed ${s.seed} GRPO ${fmt((s.grpo as Record<string, unknown>)['reward'])}`).join(', ')}`);
console.log(`GRPO - ${results[0]!.bestScript ? `best fixed script (${results[0]!.bestScript.spec}, chosen on ${results[0]!.bestScript.split})` : 'baseline'} ${d(summary.grpo_vs_baseline)}; GRPO - base ${d(summary.grpo_vs_base)}; GRPO - SFT ${d(summary.grpo_vs_sft)} (paired over seeds x tasks)`);
if (results[0]!.oracle) console.log(`oracle (${results[0]!.oracle.spec}, privileged: a ceiling, not a method) ${fmt(summary.oracle?.['reward'])}; last-hop recall: ${Object.entries(summary.hop_recall).map(([a, h]) => `${a} ${fmt(h['last_hop_recall'])}`).join(', ')}`);
console.log(`wrote ${out}`);
// Done: a worker thread left open by a backend must not keep the bench alive.
process.exit(0);

/** Means over seeds of the retrieval numbers of summaries. */
function pickMeans(summaries: Record<string, unknown>[]): Record<string, number> {
  return meanRecords(summaries.map((s) => Object.fromEntries(['reward', 'recall', 'precision', 'curated_size', 'last_hop_recall'].filter((k) => typeof s[k] === 'number').map((k) => [k, s[k] as number]))));
}

/** The mean of each key over records (keys every record has). */
function meanRecords(records: Record<string, number>[]): Record<string, number> {
  const keys = Object.keys(records[0] ?? {}).filter((k) => records.every((r) => typeof r[k] === 'number'));
  return Object.fromEntries(keys.map((k) => [k, records.reduce((s, r) => s + r[k]!, 0) / records.length]));
}

function fmt(x: unknown): string {
  return typeof x === 'number' ? x.toFixed(3) : '-';
}
