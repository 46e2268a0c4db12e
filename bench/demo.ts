/**
 * npm run bench:demo — runs `sleuth demo` (the full version) and writes bench/results/demo.json:
 * {"wall_s", "base", "sft", "grpo" (eval metrics), "grpo_vs_sft": {"metric": "reward", "delta",
 * "ci_low", "ci_high"}} plus the baseline, phase times and the SFT data counts; and the GRPO
 * phase's curves to docs/img/demo-curves.svg.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoJson } from '../src/cli/commands/demo.js';
import { curvesSvg } from '../src/explorer/curves-svg.js';
import { readJsonl } from '../src/runs/jsonl.js';
import { FULL_PLAN, runDemo } from '../src/train/demo.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const result = await runDemo({ dir: join(root, 'runs', `bench-demo-${stamp}`), plan: FULL_PLAN, log: (l) => process.stderr.write(`${l}\n`) });
const out = { ...demoJson(result), machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '', loadavg_at_end: loadavg() }, date: new Date().toISOString() };
const path = join(root, 'bench', 'results', 'demo.json');
mkdirSync(dirname(path), { recursive: true });
writeFileSync(`${path}.tmp`, JSON.stringify(out, null, 2) + '\n');
renameSync(`${path}.tmp`, path);
// The README shows the GRPO phase's curves (docs/img/demo-curves.svg) from this run.
const curves = join(root, 'docs', 'img', 'demo-curves.svg');
const metrics = readJsonl<Record<string, unknown>>(join(result.dir, 'grpo', 'metrics.jsonl')).records;
writeFileSync(`${curves}.tmp`, curvesSvg(metrics, { title: `sleuth demo, GRPO from the SFT checkpoint (${new Date().toISOString().slice(0, 10)})` }));
renameSync(`${curves}.tmp`, curves);
const g = result.grpoVsSft;
console.log(`wall ${result.wallSeconds.toFixed(0)}s; eval reward base ${fmt(result.base['reward'])}, SFT ${fmt(result.sft['reward'])}, GRPO ${fmt(result.grpo['reward'])}; GRPO - SFT ${g.delta.toFixed(3)} [${g.ci_low.toFixed(3)}, ${g.ci_high.toFixed(3)}]`);
console.log(`wrote ${path} and ${curves}`);

function fmt(x: unknown): string {
  return typeof x === 'number' ? x.toFixed(3) : '-';
}
