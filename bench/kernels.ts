/**
 * npm run bench:kernels [-- --against REV] [--rows N] [--rounds N] — the local
 * backend's kernels as built now (dist/wasm/kernels.wasm) against those of git revision REV
 * (default HEAD: a change in the working tree against what it changes), alternating in one process
 * on the 1.32M model's shapes: GFLOP/s per kernel, and whether every output is the same bit for
 * bit. For kernel work: a change meant to be exact must say `bit-identical: yes`, and its speed is
 * read beside the old kernels' on the same machine at the same moment. bench:local runs the same
 * comparison against the kernels before issue 47 and keeps it in bench/results/local.json; this one
 * prints.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { badFlag, benchArgs, wholeFlag } from './args.js';
import { compareKernels, longModelShapes } from './kernels-then.js';
import { guardLoad, LOAD_FLAG } from './load.js';
import { LONG_MODEL } from '../src/backend/local/backend.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const usage = `usage: npm run bench:kernels -- [--against REV] [--rows N] [--rounds N]
  --against REV  the git revision whose kernels to compare with (default HEAD)
  --rows N       rows of the sequence (default 828, the reference sequence of bench:local)
  --rounds N     alternations; each kernel's best round counts (default 10)
`;
const { values } = benchArgs({ against: { type: 'string', default: 'HEAD' }, rows: { type: 'string', default: '828' }, rounds: { type: 'string', default: '10' }, ...LOAD_FLAG }, usage);
const rows = wholeFlag(values, 'rows', 2);
const rounds = wholeFlag(values, 'rounds', 1);
if (rows > LONG_MODEL.context) badFlag(`--rows must be at most the model's context of ${LONG_MODEL.context}, got ${rows}`);
guardLoad('bench:kernels', values['allow-loaded']);
const result = await compareKernels(root, values.against!, longModelShapes(rows), rounds);
if (!('gflops_now' in result)) badFlag(`--against ${values.against}: ${String(result['skipped'])}`);
const then = result['gflops_then'] as Record<string, number>, now = result['gflops_now'] as Record<string, number>;
console.log(`kernels GFLOP/s, ${values.against} against this build, ${rounds} alternating rounds, ${rows} rows; bit-identical: ${result['bit_identical'] ? 'yes' : 'NO'}`);
console.table(Object.fromEntries(Object.keys(now).map((k) => [k, { [String(values.against)]: then[k], now: now[k], ratio: +(now[k]! / then[k]!).toFixed(2) }])));
