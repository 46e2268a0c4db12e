import { resolve } from 'node:path';
import { InputError } from '../../errors.js';
import { formatComparison } from '../../eval/report.js';
import { outputWidth } from '../../text/width.js';
import { BUILDS, buildBaseModel } from '../../demo/base-build.js';
import { committedMusiqueResult, FULL_PLAN, hopRecall, MUSIQUE_DEMO_PLAN, MUSIQUE_QUICK_PLAN, QUICK_PLAN, runDemo, type DemoResult } from '../../demo/demo.js';
import { clock } from '../../train/progress.js';
import { parseFlags, printJson, type Command } from '../command.js';
import { terminalSafe } from '../safe-text.js';

const usage = `usage: sleuth demo [--quick] [--tasks default|musique] [--out DIR] [--json]
       sleuth demo --build-base [--size base|long] [--out FILE]

The main job, on the embedded default with the local CPU model and no network: build the index,
evaluate the scripted baseline and the base model, SFT the small model on the baseline's own plan
(the top 10 of the question's keywords), run GRPO (curves on the dev split), evaluate every agent on the test split,
and compare them with paired bootstrap intervals. The model writes every search itself.

  --quick        a seconds-long version (a tiny model, a few tasks): checks the pipeline, not the gain
  --tasks musique  the multi-hop MuSiQue set instead: SFT from the best fixed script on dev, GRPO (40 steps)
                 from its checkpoint, the baseline the best fixed script on dev, the hop oracle
                 beside it (a ceiling), per-hop recall; about 3 minutes on 2 cores
  --out DIR      the run directory (default runs/demo-TIMESTAMP)
  --json         print the result as JSON
  --build-base   rebuild the shipped pretrained base model bit for bit (default --out
                 src/backend/local/assets/local-base.sampler.ckpt); takes longer than the demo
  --size long    with --build-base: the long-episode model (context 2,048; default --out
                 src/backend/local/assets/local-long.sampler.ckpt)`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { quick: { type: 'boolean' }, tasks: { type: 'string' }, out: { type: 'string' }, json: { type: 'boolean' }, 'build-base': { type: 'boolean' }, size: { type: 'string' } }, 'demo');
    if (positionals.length) throw new InputError(`unexpected argument '${positionals[0]}'`);
    const log = (line: string) => process.stderr.write(`${terminalSafe(line)}\n`);
    if (values.size !== undefined && !values['build-base']) throw new InputError('--size goes with --build-base');
    if (values.tasks !== undefined && values['build-base']) throw new InputError('--tasks does not go with --build-base');
    if (values['build-base']) {
      const size = values.size ?? 'base';
      if (size !== 'base' && size !== 'long') throw new InputError(`--size ${size}: must be base or long`);
      const build = BUILDS[size];
      const out = resolve(values.out ?? build.out);
      if (!out.endsWith('.sampler.ckpt')) throw new InputError(`--out ${values.out}: the base model file name must end in .sampler.ckpt`);
      const r = await buildBaseModel({ ...build.options, out, log });
      console.log(`base model: ${r.path} (final loss ${r.losses[r.losses.length - 1]?.toFixed(3)} per token)`);
      return 0;
    }
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const dir = resolve(values.out ?? `runs/demo-${stamp}`);
    const tasks = values.tasks ?? 'default';
    if (tasks !== 'default' && tasks !== 'musique') throw new InputError(`--tasks ${tasks}: the demo runs on default or musique`);
    const plan = tasks === 'musique' ? (values.quick ? MUSIQUE_QUICK_PLAN : MUSIQUE_DEMO_PLAN) : values.quick ? QUICK_PLAN : FULL_PLAN;
    const result = await runDemo({ dir, plan, log });
    if (values.json) printJson(demoJson(result));
    else console.log(report(result, values.quick === true));
    return 0;
  },
};

/** The numbers of a demo run, as bench/results/demo.json keeps them (every number from the report split). */
export function demoJson(r: DemoResult): Record<string, unknown> {
  const pick = (s: Record<string, unknown>) => Object.fromEntries(['reward', 'recall', 'precision', 'f1', 'fbeta', 'valid', 'curated_size', 'turns', 'tokens', 'offform_episode_share', 'tasks', 'rollouts'].filter((k) => s[k] !== undefined).map((k) => [k, s[k]]));
  const agent = (name: 'baseline' | 'base' | 'sft' | 'grpo') => ({ ...pick(r[name]), ...r.behaviour[name] });
  return {
    seed: r.seed,
    split: r.reportSplit,
    wall_s: r.wallSeconds,
    phases_s: r.phases,
    grpo_from: r.grpoFrom,
    baseline: agent('baseline'),
    base: agent('base'),
    sft: agent('sft'),
    grpo: agent('grpo'),
    grpo_vs_base: r.grpoVsBase,
    grpo_vs_baseline: r.grpoVsBaseline,
    grpo_vs_sft: r.grpoVsSft,
    sft_data: { solved: r.sftRun.solved, kept: r.sftRun.kept, attempts: r.sftRun.attempts, best_epoch: r.sftRun.best.epoch },
    ...(r.bestScript ? { best_script: r.bestScript } : {}),
    ...(r.oracle ? { oracle: { spec: r.oracle.spec, ...pick(r.oracle.summary), dir: r.oracle.dir } } : {}),
    hop_recall: Object.fromEntries([...(['baseline', 'base', 'sft', 'grpo'] as const).map((a) => [a, hopRecall(r[a])]), ...(r.oracle ? [['oracle', hopRecall(r.oracle.summary)]] : [])]),
    dir: r.dir,
  };
}

/** What --quick's numbers mean, printed with them: they alarm otherwise. */
export const QUICK_NOTE = '--quick checks that every phase runs, not that anything learns: its model is tiny and barely trained, with 16 tokens a turn, so expect its models to curate nothing and score the empty-set reward (-0.200, valid 0.000); `npm start` runs the real demo';

/** The reward as a sum of its weighted parts, in words (the demo's rubric: F4, trajectory recall, the penalties). */
export function rewardFormula(weights: Record<string, number>): string {
  const part: Record<string, string> = { fbeta: 'F4 of the curated set', f1: 'F1 of the curated set', trajectory_recall: 'trajectory recall', trajectory_recall_if_curated: 'trajectory recall', empty: 'when nothing is curated', offform: 'when any call was off-form' };
  return Object.entries(weights)
    .filter(([, w]) => w !== 0)
    .map(([k, w], i) => {
      const name = part[k] ?? k;
      const flat = k === 'empty' || k === 'offform';
      const magnitude = Math.abs(w);
      const term = flat ? `${magnitude} ${name}` : magnitude === 1 ? name : `${magnitude} x ${name}`;
      return i === 0 ? `${w < 0 ? '-' : ''}${term}` : `${w < 0 ? ' - ' : ' + '}${term}`;
    })
    .join('');
}

function verdictOf(name: string, other: string, d: DemoResult['grpoVsBase']): string {
  const sign = `${d.delta >= 0 ? '+' : ''}${d.delta.toFixed(3)} [${d.ci_low.toFixed(3)}, ${d.ci_high.toFixed(3)}]`;
  const verdict = d.shown && d.delta > 0 ? `${name} beats ${other}` : d.shown ? `${name} is worse than ${other}` : 'the interval contains 0: no difference shown';
  return `${name} - ${other}: ${sign}  ${verdict}`;
}

/** Per-hop recall of each agent (and the oracle's, a ceiling), on a multi-hop task set. */
function hopLines(r: DemoResult): string[] {
  const agents: [string, Record<string, unknown>][] = [['baseline', r.baseline], ['base', r.base], ['sft', r.sft], ['grpo', r.grpo], ...(r.oracle ? [[`oracle`, r.oracle.summary] as [string, Record<string, unknown>]] : [])];
  const keys = ['hop1_recall', 'hop2_recall', 'hop3_recall', 'hop4_recall', 'last_hop_recall', 'last_hop_found'].filter((k) => typeof r.grpo[k] === 'number');
  if (!keys.length) return [];
  const labels = keys.map((x) => x.replace('_recall', ''));
  const cell = (x: unknown, i: number) => (typeof x === 'number' ? x.toFixed(3) : '-').padStart(Math.max(6, labels[i]!.length));
  return [
    `per-hop recall (curated; last_hop_found: anywhere in the episode)${r.oracle ? `; oracle = ${r.oracle.spec}, privileged: a ceiling, not a method` : ''}:`,
    `  ${''.padEnd(8)} ${labels.map((l) => l.padStart(Math.max(6, l.length))).join(' ')}`,
    ...agents.map(([name, s]) => `  ${name.padEnd(8)} ${keys.map((x, i) => cell(s[x], i)).join(' ')}`),
  ];
}

/**
 * One line where GRPO scores below the fixed script on a single-hop set: why, and the committed
 * MuSiQue result, where searching pays, beside it.
 */
function whyBelowScript(r: DemoResult): string[] {
  const g = r.grpoVsBaseline;
  if (r.bestScript || !(g.shown && g.delta < 0)) return [];
  const m = committedMusiqueResult();
  const musique = m ? `GRPO - ${m.script} is ${m.delta >= 0 ? '+' : ''}${m.delta.toFixed(3)} [${m.ci_low.toFixed(3)}, ${m.ci_high.toFixed(3)}] (bench/results/learn.json; npx sleuth demo --tasks musique)` : 'see npx sleuth demo --tasks musique';
  return [`  why: one search answers most of these questions and the script makes it with all 10 hits; on multi-hop MuSiQue, ${musique}`];
}

export function report(r: DemoResult, quick = false): string {
  const b = (name: 'baseline' | 'base' | 'sft' | 'grpo') => {
    const x = r.behaviour[name];
    return `${x.searches_per_episode.toFixed(2)} searches/episode, ${(100 * x.own_search_share).toFixed(0)}% with a second search${x.musique_trajectory_recall === null ? '' : `, MuSiQue trajectory recall ${x.musique_trajectory_recall.toFixed(3)}`}`;
  };
  return [
    '',
    `sleuth demo — ${clock(r.wallSeconds)} (${Object.entries(r.phases).map(([k, v]) => `${k.split(' (')[0]} ${v.toFixed(0)}s`).join(', ')})`,
    `SFT data: ${r.sftRun.solved} training queries solved by the teacher, ${r.sftRun.kept} demonstrations kept; best epoch ${r.sftRun.best.epoch}. GRPO started from the ${r.grpoFrom === 'sft' ? 'SFT checkpoint' : 'base model'}.`,
    '',
    `every number below is on the ${r.reportSplit} split (${r.table.sharedTasks.length} tasks), which nothing was tuned on`,
    `reward = ${rewardFormula(r.rewardWeights)} (so the scripted baseline can score above 1)`,
    ...(quick ? [QUICK_NOTE] : []),
    `runs: baseline (${r.bestScript ? `the best fixed script on ${r.bestScript.split}: ${r.bestScript.spec}` : 'scripted, top 10'}) | base model | SFT | GRPO`,
    formatComparison(r.table, outputWidth()),
    '',
    `reward, paired over ${r.grpoVsBase.tasks} tasks:`,
    `  ${verdictOf('GRPO', 'base model', r.grpoVsBase)}`,
    `  ${verdictOf('GRPO', 'baseline', r.grpoVsBaseline)}`,
    `  ${verdictOf('GRPO', 'SFT', r.grpoVsSft)}`,
    ...whyBelowScript(r),
    'how they searched:',
    ...(['baseline', 'base', 'sft', 'grpo'] as const).map((n) => `  ${n.padEnd(8)} ${b(n)}`),
    ...hopLines(r),
    '',
    `run directory: ${r.dir}`,
    `explore it:    npx sleuth explore ${r.dir}`,
  ].join('\n');
}
