import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../files/atomic.js';
import { InputError } from '../../errors.js';
import { curvesSvg, SEED_CURVES, seriesOf } from '../../explorer/curves-svg.js';
import { readJsonl } from '../../runs/jsonl.js';
import { parseFlags, type Command } from '../command.js';

export const command: Command = {
  usage: `usage: sleuth curves RUN_DIR [--out FILE] [--title TEXT]

Reads RUN_DIR/metrics.jsonl (of sleuth train, or the grpo/ folder of a sleuth demo run) and writes
the curves of the run against the step: train reward, share of valid rollouts, entropy (mean
negative sampler logprob per sampled token) and eval F1, with eval reward and curated-set size,
as one standalone SVG.

  --out FILE     where to write it (default: RUN_DIR/curves.svg)
  --title TEXT   a title line above the panels`,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { out: { type: 'string' }, title: { type: 'string' } }, 'curves');
    const dir = positionals[0];
    if (!dir || positionals.length > 1) throw new InputError('curves takes one run directory (sleuth curves RUN_DIR)');
    const path = join(dir, 'metrics.jsonl');
    if (!existsSync(path)) throw new InputError(`${path}: no such file (is ${dir} a training run directory?)`);
    const { records, skipped } = readJsonl<Record<string, unknown>>(path);
    if (skipped.length) process.stderr.write(`${path}: skipped ${skipped.length} malformed line(s), first at line ${skipped[0]!.line}\n`);
    const counts = SEED_CURVES.map((p) => seriesOf(records, p).length);
    if (counts.every((n) => n === 0)) throw new InputError(`${path}: no train or eval steps to draw`);
    const out = values.out ?? join(dir, 'curves.svg');
    writeFileAtomic(out, curvesSvg(records, values.title ? { title: values.title } : {}));
    console.log(`${out}: ${SEED_CURVES.map((p, i) => `${p.title} ${counts[i]} point(s)`).join(', ')}`);
    return 0;
  },
};
