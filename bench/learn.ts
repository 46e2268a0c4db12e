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
import { basename, dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { demoJson } from '../src/cli/commands/demo.js';
import { curvesSvg } from '../src/explorer/curves-svg.js';
import { loadRunRows } from '../src/eval/compare.js';
import { readJsonl } from '../src/runs/jsonl.js';
import { agentEpisodes, explorationCurve, type EpisodeRecord } from '../src/demo/learn-report.js';
import { loadSampler } from '../src/backend/local/index.js';
import { loadTaskSet } from '../src/tasks/registry.js';
import { mergeConfig, parseTrainConfig, readConfigFile, rubricOf } from '../src/train/config.js';
import { FULL_PLAN, hopRecall, presetPath, LONG_PLAN, MUSIQUE_LONG_PLAN, MUSIQUE_PLAN, MUSIQUE_QUICK_PLAN, QUICK_PLAN, pairedDelta, runDemo, type DemoPlan, type DemoResult } from '../src/demo/demo.js';
import { badFlag, benchArgs } from './args.js';
import { guardLoad, LOAD_FLAG } from './load.js';

const USAGE = `
usage: node dist/bench/learn.js [--plan long|demo|quick|musique|musique-long|musique-quick] [--seeds 0,1,2] [--out FILE] [--runs DIR] [--curves FILE]

Runs baseline, base model, SFT and GRPO once per training seed and reports every seed on the test
split, their mean, and paired intervals over seeds x tasks.

  --plan    musique (default): configs/local-musique.json on the shipped MuSiQue set (below);
            long: configs/local-long.json on the default set; demo: configs/local-demo.json (sleuth demo's);
            quick: a seconds-long run of the whole pipeline on a tiny model;
            musique: SFT from the bridge teacher, GRPO from its checkpoint, the baseline the best
            fixed script on dev, the hop oracle beside on test (a ceiling);
            musique-long: the same on the shipped 1.32M model in a 2,048-token context;
            musique-quick: its seconds-long version
  --seeds   training seeds, comma-separated (default 0,1,2)
  --out     the result file (default bench/results/learn.json)
  --runs    where the run directories go (default runs/bench-learn-TIMESTAMP)
  --curves  also draw the first seed's GRPO curves to this SVG file
`;

const PLANS: Record<string, DemoPlan> = { long: LONG_PLAN, demo: FULL_PLAN, quick: QUICK_PLAN, musique: MUSIQUE_PLAN, 'musique-long': MUSIQUE_LONG_PLAN, 'musique-quick': MUSIQUE_QUICK_PLAN };

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = benchArgs({ plan: { type: 'string' }, seeds: { type: 'string' }, out: { type: 'string' }, runs: { type: 'string' }, curves: { type: 'string' }, ...LOAD_FLAG }, USAGE);
const planName = values.plan ?? 'musique';
const plan = PLANS[planName] ?? badFlag(`--plan ${planName}: expected one of ${Object.keys(PLANS).join(', ')}`);
const seeds = (values.seeds ?? '0,1,2').split(',').map((s) => {
  const n = Number(s);
  if (!/^\d+$/u.test(s.trim()) || !Number.isSafeInteger(n)) badFlag(`--seeds ${values.seeds}: expected whole numbers separated by commas, e.g. 0,1,2`);
  return n;
});
if (new Set(seeds).size !== seeds.length) badFlag(`--seeds ${values.seeds}: a seed is repeated`);
// After the flags are checked: a bad flag is named first, whatever the load.
const guard = guardLoad('bench:learn', values['allow-loaded']);
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

// How each agent searched and curated on the report split, and every episode in a compact form (committed beside the summary).
const config = parseTrainConfig(mergeConfig(readConfigFile(presetPath(plan.preset)), plan.grpo), `configs/${plan.preset}.json with the plan`);
const rubric = rubricOf(config);
const reportTasks = new Map((await loadTaskSet(config.tasks)).tasks(plan.reportSplit).map((t) => [t.id, t]));
const tokenizer = loadSampler(results[0]!.sftRun.best.samplerPath).tokenizer;
const episodesDir = join(dirname(out), `${basename(out, '.json')}-episodes`);
const REPORTED = ['baseline', 'base', 'sft', 'grpo'] as const;
const perSeedAgents = results.map((r) => {
  const dirs: Record<string, string> = { ...r.evalDirs, ...(r.oracle ? { oracle: r.oracle.dir } : {}) };
  const agents = Object.fromEntries(Object.entries(dirs).map(([a, d]) => [a, agentEpisodes(a, d, reportTasks, rubric, tokenizer)]));
  const episodes: EpisodeRecord[] = Object.values(agents).flatMap((a) => a.episodes);
  mkdirSync(episodesDir, { recursive: true });
  writeFileSync(join(episodesDir, `seed-${r.seed}.jsonl.gz.tmp`), gzipSync(episodes.map((e) => JSON.stringify(e)).join('\n') + '\n'));
  renameSync(join(episodesDir, `seed-${r.seed}.jsonl.gz.tmp`), join(episodesDir, `seed-${r.seed}.jsonl.gz`));
  const exploration = explorationCurve(readJsonl<Record<string, unknown>>(join(r.dir, 'grpo', 'metrics.jsonl')).records);
  return { agents, exploration };
});
const last10 = (curve: { zero_variance_share: number; entropy: number }[], key: 'zero_variance_share' | 'entropy') => {
  const xs = curve.slice(-10).map((c) => c[key]).filter((x) => Number.isFinite(x));
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
};
const meanOver = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

const rowsOf = (agent: 'baseline' | 'base' | 'sft' | 'grpo') => results.map((r) => loadRunRows(r.evalDirs[agent]));
const grpoRows = rowsOf('grpo');
const perSeed = results.map((r) => {
  const j = demoJson(r);
  const extra = perSeedAgents[results.indexOf(r)]!;
  return {
    seed: r.seed, wall_s: r.wallSeconds, grpo_from: r.grpoFrom, baseline: j['baseline'], base: j['base'], sft: j['sft'], grpo: j['grpo'], grpo_vs_baseline: r.grpoVsBaseline, grpo_vs_base: r.grpoVsBase,
    // Where the run went, relative to the checkout (the episodes themselves are in episodes_file).
    dir: relative(root, r.dir),
    episodes_file: relative(root, join(episodesDir, `seed-${r.seed}.jsonl.gz`)),
    perfect_curation: Object.fromEntries(Object.entries(extra.agents).map(([a, x]) => [a, x.perfect_curation])),
    exploration: { zero_variance_share_last10: last10(extra.exploration, 'zero_variance_share'), entropy_last10: last10(extra.exploration, 'entropy'), per_step: extra.exploration },
  };
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
  // Of every seed's report-split episodes: the moves each agent wrote and how it curated.
  moves: Object.fromEntries([...REPORTED, 'oracle'].filter((a) => perSeedAgents[0]!.agents[a]).map((a) => [a, poolMoves(perSeedAgents.map((p) => p.agents[a]!.moves))])),
  // What curating exactly the gold chunks among the hits each agent was shown would score (mean of seeds).
  perfect_curation: Object.fromEntries([...REPORTED, 'oracle'].filter((a) => perSeedAgents[0]!.agents[a]).map((a) => [a, meanOver(perSeedAgents.map((p) => p.agents[a]!.perfect_curation))])),
  exploration: {
    zero_variance_share_last10: meanOver(perSeedAgents.map((p) => last10(p.exploration, 'zero_variance_share') ?? NaN)),
    entropy_last10: meanOver(perSeedAgents.map((p) => last10(p.exploration, 'entropy') ?? NaN)),
    zero_variance_share_first10: meanOver(perSeedAgents.map((p) => meanOver(p.exploration.slice(0, 10).map((c) => c.zero_variance_share)))),
  },
  hop_recall: Object.fromEntries([...(['baseline', 'base', 'sft', 'grpo'] as const).map((a) => [a, meanRecords(results.map((r) => hopRecall(r[a])))] as const), ...(results[0]!.oracle ? [['oracle', meanRecords(results.map((r) => hopRecall(r.oracle!.summary)))] as const] : [])]),
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '', loadavg_at_end: loadavg() },
  ...guard.fields(),
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

/** Move shares pooled over seeds (each seed's shares weighted by its episodes or follow-ups). */
function poolMoves(seeds: ReturnType<typeof agentEpisodes>['moves'][]): ReturnType<typeof agentEpisodes>['moves'] {
  const episodes = seeds.reduce((s, m) => s + m.episodes, 0);
  const followUps = seeds.reduce((s, m) => s + m.follow_ups, 0);
  const byFollow = (f: (m: (typeof seeds)[number]) => number) => (followUps ? seeds.reduce((s, m) => s + f(m) * m.follow_ups, 0) / followUps : 0);
  const byEpisode = (f: (m: (typeof seeds)[number]) => number) => (episodes ? seeds.reduce((s, m) => s + f(m) * m.episodes, 0) / episodes : 0);
  const first = seeds[0]!;
  return {
    episodes,
    follow_ups: followUps,
    follow_up: Object.fromEntries(Object.keys(first.follow_up).map((k) => [k, byFollow((m) => m.follow_up[k as keyof typeof m.follow_up])])) as typeof first.follow_up,
    follow_up_span_or_subset: byFollow((m) => m.follow_up_span_or_subset),
    // Curate shares weighted by episodes (about one curate call each).
    curate: Object.fromEntries(Object.keys(first.curate).map((k) => [k, byEpisode((m) => m.curate[k as keyof typeof m.curate])])) as typeof first.curate,
    curated_not_all_shown: byEpisode((m) => m.curated_not_all_shown),
    curated_size: byEpisode((m) => m.curated_size),
  };
}

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
