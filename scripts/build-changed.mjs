// Builds what changed, or is missing, and nothing else: `npm test` and a first `sleuth` call run it.
// `npm run build` still builds everything. Each step has inputs (files and folders) and outputs: it
// runs when an output is missing or when the SHA-256 of its inputs (paths and contents) differs from
// the one recorded after its last successful run, in dist/.build-stamps/. Contents, not times, so a
// `touch` or a checkout of identical files rebuilds nothing and a changed file always rebuilds.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (pkg, file) => join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), file);
const node = (...args) => [process.execPath, ...args];
const WEB = 'src/explorer/web';
const isAssembly = (p) => /(^|\/)assembly\//.test(p) || p.endsWith('.as.ts');

const steps = [
  {
    name: 'WebAssembly kernels',
    inputs: ['scripts/build-wasm.mjs', 'src'],
    only: isAssembly,
    outputs: ['dist/wasm/kernels.wasm', 'dist/wasm/bm25.wasm', 'dist/wasm/words.wasm', 'dist/wasm/lz4.wasm', 'dist/wasm/jsonl.wasm'],
    commands: [node(join(root, 'scripts', 'build-wasm.mjs'))],
  },
  {
    name: 'TypeScript (tsc)',
    inputs: ['tsconfig.json', 'package-lock.json', 'src', 'bench', 'scripts'],
    only: (p) => !p.startsWith(`${WEB}/`) && !isAssembly(p) && !p.startsWith('bench/results/'),
    outputs: ['dist/src/cli/main.js'],
    commands: [node(bin('typescript', 'bin/tsc'), '-p', 'tsconfig.json')],
  },
  {
    name: "the explorer's web page (vite)",
    inputs: ['package-lock.json', WEB],
    only: () => true,
    outputs: ['dist/explorer-web/index.html'],
    commands: [node(bin('typescript', 'bin/tsc'), '-p', `${WEB}/tsconfig.json`), node(bin('vite', 'bin/vite.js'), 'build', '--config', `${WEB}/vite.config.mjs`)],
  },
];

/** Every file under `paths` (relative to the package root) that `only` keeps, sorted. */
function files(paths, only) {
  const out = [];
  const walk = (p) => {
    const abs = join(root, p);
    if (!existsSync(abs)) return;
    if (statSync(abs).isDirectory()) for (const name of readdirSync(abs).sort()) walk(`${p}/${name}`);
    else if (only(p)) out.push(p);
  };
  for (const p of paths) walk(p);
  return out;
}

function inputsHash(step) {
  const h = createHash('sha256');
  for (const f of files(step.inputs, (p) => step.only(p) || step.inputs.includes(p))) h.update(`${f}\0`).update(readFileSync(join(root, f))).update('\0');
  return h.digest('hex');
}

const stamps = join(root, 'dist', '.build-stamps');
let built = 0;
for (const step of steps) {
  const stamp = join(stamps, `${step.name.replace(/[^a-z]+/gi, '-')}.sha256`);
  const hash = inputsHash(step);
  const missing = step.outputs.filter((o) => !existsSync(join(root, o)));
  const recorded = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '';
  if (missing.length === 0 && recorded === hash) continue;
  console.error(`build: ${step.name}: ${missing.length ? `${relative('.', join(root, missing[0]))} is missing` : recorded ? 'its sources changed' : 'no record of its last build'}; building`);
  for (const [cmd, ...args] of step.commands) {
    const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) {
      console.error(`build: ${step.name} failed (${[cmd, ...args].map((a) => relative(root, a) || a).join(' ')} exited with ${r.status ?? r.signal})`);
      process.exit(1);
    }
  }
  mkdirSync(stamps, { recursive: true });
  writeFileSync(stamp, `${hash}\n`);
  built++;
}
if (built === 0) console.error('build: dist/ is up to date with the sources');
