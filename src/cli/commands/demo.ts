import { resolve } from 'node:path';
import { InputError } from '../../errors.js';
import { formatComparison } from '../../eval/report.js';
import { outputWidth } from '../width.js';
import { BASE_BUILD, buildBaseModel } from '../../train/base-build.js';
import { FULL_PLAN, QUICK_PLAN, runDemo, type DemoResult } from '../../train/demo.js';
import { clock } from '../../train/progress.js';
import { parseFlags, printJson, type Command } from '../command.js';

const usage = `usage: sleuth demo [--quick] [--out DIR] [--json]
       sleuth demo --build-base [--out FILE]

The main job, on the embedded default with the local CPU model and no network: build the index,
evaluate the scripted baseline and the base model, SFT the small model by rejection sampling from
a teacher, run GRPO from the SFT checkpoint, evaluate, and compare with paired bootstrap intervals.

  --quick        a seconds-long version (a tiny model, a few tasks): checks the pipeline, not the gain
  --out DIR      the run directory (default runs/demo-TIMESTAMP)
  --json         print the result as JSON
  --build-base   rebuild the shipped pretrained base model bit for bit (default --out
                 src/train/assets/local-base.sampler.ckpt); takes longer than the demo`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { quick: { type: 'boolean' }, out: { type: 'string' }, json: { type: 'boolean' }, 'build-base': { type: 'boolean' } }, 'demo');
    if (positionals.length) throw new InputError(`unexpected argument '${positionals[0]}'`);
    const log = (line: string) => process.stderr.write(`${line}\n`);
    if (values['build-base']) {
      const out = resolve(values.out ?? 'src/train/assets/local-base.sampler.ckpt');
      if (!out.endsWith('.sampler.ckpt')) throw new InputError(`--out ${values.out}: the base model file name must end in .sampler.ckpt`);
      const r = await buildBaseModel({ ...BASE_BUILD, out, log });
      console.log(`base model: ${r.path} (final loss ${r.losses[r.losses.length - 1]?.toFixed(3)} per token)`);
      return 0;
    }
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const dir = resolve(values.out ?? `runs/demo-${stamp}`);
    const result = await runDemo({ dir, plan: values.quick ? QUICK_PLAN : FULL_PLAN, log });
    if (values.json) printJson(demoJson(result));
    else console.log(report(result));
    return 0;
  },
};

/** The numbers of a demo run, as bench/results/demo.json keeps them. */
export function demoJson(r: DemoResult): Record<string, unknown> {
  const pick = (s: Record<string, unknown>) => Object.fromEntries(['reward', 'recall', 'precision', 'f1', 'fbeta', 'valid', 'curated_size', 'turns', 'tokens', 'offform_episode_share', 'tasks', 'rollouts'].filter((k) => s[k] !== undefined).map((k) => [k, s[k]]));
  return {
    wall_s: r.wallSeconds,
    phases_s: r.phases,
    baseline: pick(r.baseline),
    base: pick(r.base),
    sft: pick(r.sft),
    grpo: pick(r.grpo),
    grpo_vs_sft: r.grpoVsSft,
    sft_data: { solved: r.sftRun.solved, kept: r.sftRun.kept, attempts: r.sftRun.attempts, best_epoch: r.sftRun.best.epoch },
    dir: r.dir,
  };
}

function report(r: DemoResult): string {
  const g = r.grpoVsSft;
  const verdict = g.shown && g.delta > 0 ? 'GRPO beats SFT: the interval excludes 0' : g.shown ? 'GRPO is worse than SFT: the interval excludes 0' : 'GRPO vs SFT: the interval contains 0 (no difference shown)';
  return [
    '',
    `sleuth demo — ${clock(r.wallSeconds)} (${Object.entries(r.phases).map(([k, v]) => `${k} ${v.toFixed(0)}s`).join(', ')})`,
    `SFT data: ${r.sftRun.solved} training queries solved by the teacher, ${r.sftRun.kept} demonstrations kept; best epoch ${r.sftRun.best.epoch}`,
    '',
    'runs: baseline (scripted) | base model | SFT | GRPO',
    formatComparison(r.table, outputWidth()),
    '',
    `GRPO - SFT, eval reward, paired over ${g.tasks} tasks: ${g.delta >= 0 ? '+' : ''}${g.delta.toFixed(3)} [${g.ci_low.toFixed(3)}, ${g.ci_high.toFixed(3)}] — ${verdict}`,
    '',
    `run directory: ${r.dir}`,
    `explore it:    sleuth explore ${r.dir}`,
  ].join('\n');
}
