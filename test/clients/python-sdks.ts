import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unavailable } from '../unavailable.js';

/**
 * A Python with one of the official SDKs (Tinker or OpenAI) importable, for the conformance tests
 * that drive sleuth's servers with clients sleuth did not write. Where each comes from, first found:
 *
 * - Tinker: its source at $SLEUTH_CLIENTS_DIR/tinker-python-0.25.0, else at ../shared/clients beside
 *   this package (a virtual environment is built from it, its dependencies from pip's configured
 *   index); else a `python3` that already imports `tinker`.
 * - OpenAI: a `python3` that already imports `openai`; else a virtual environment into which pip
 *   installs `openai` from its configured index.
 *
 * A virtual environment is built once and cached under the system temp folder, keyed by what goes
 * into it; a build happens in a scratch folder renamed into place, so two test files building at
 * once never share a half-built one.
 *
 * When an SDK cannot be had, `pythonSdk` returns `{ skip }`: one line saying why and how to enable
 * it, which the test reports as its skip reason (or, under SLEUTH_TEST_ALL=1 as in CI, throws).
 */

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TINKER_SOURCE = 'tinker-python-0.25.0';
/** The Tinker SDK's runtime dependencies, less pyqwest and transformers (see ../shared/clients/README.md). */
const TINKER_DEPS = ['httpx[http2]', 'pydantic', 'anyio', 'distro', 'sniffio', 'typing-extensions', 'protobuf', 'numpy', 'rich', 'click', 'orjson', 'zstandard', 'hatchling', 'hatch-fancy-pypi-readme'];
/** pip would otherwise spend about a minute retrying an unreachable index. */
const PIP_FLAGS = ['--retries', '0', '--timeout', '2', '--disable-pip-version-check', '--no-input'];
/** What test/openai-server/openai_sdk.py imports besides the SDK itself. */
const OPENAI_PACKAGES = ['openai', 'httpx', 'pydantic'];
const SYSTEM_PYTHON = process.env['PYTHON'] ?? 'python3';

export type SdkName = 'tinker' | 'openai';

export interface PythonSdks {
  python: string;
  versions: Record<string, string>;
}

/** The folders searched for SDK sources, in order: $SLEUTH_CLIENTS_DIR, then ../shared/clients beside the package. */
export function clientsDirs(): string[] {
  const fromEnv = process.env['SLEUTH_CLIENTS_DIR'];
  return [...(fromEnv ? [resolve(fromEnv)] : []), resolve(REPO, '..', 'shared', 'clients')];
}

/** Where the Tinker SDK's source is, or undefined. */
export function tinkerSource(): string | undefined {
  return clientsDirs().map((d) => join(d, TINKER_SOURCE)).find((d) => existsSync(join(d, 'pyproject.toml')));
}

const found = new Map<SdkName, PythonSdks | { skip: string }>();

/** A Python that imports `name`'s SDK, or `{ skip }` with one line that says how to enable its tests. */
export function pythonSdk(name: SdkName): PythonSdks | { skip: string } {
  let got = found.get(name);
  if (!got) {
    got = name === 'tinker' ? findTinker() : findOpenai();
    if ('skip' in got) got = { skip: unavailable(got.skip) };
    found.set(name, got);
  }
  return got;
}

function findTinker(): PythonSdks | { skip: string } {
  const source = tinkerSource();
  if (source) {
    const key = createHash('sha256').update(JSON.stringify([TINKER_DEPS, readFileSync(join(source, 'pyproject.toml'), 'utf8'), 2])).digest('hex').slice(0, 12);
    const venv = join(tmpdir(), `sleuth-python-tinker-${key}`);
    try {
      if (!existsSync(join(venv, 'ready'))) {
        build(venv, [
          [['install', ...PIP_FLAGS, ...TINKER_DEPS], `installing the Tinker SDK's dependencies with pip (${TINKER_DEPS.join(' ')})`],
          [['install', ...PIP_FLAGS, '--no-deps', '--no-build-isolation', source], `installing the Tinker SDK from ${source}`],
        ]);
      }
    } catch (e) {
      return { skip: `${(e as Error).message}; make pip's index reachable, or pip install tinker==0.25.0 into python3` };
    }
    return withVersions(join(venv, 'bin', 'python'), 'tinker');
  }
  if (imports(SYSTEM_PYTHON, 'tinker')) return withVersions(SYSTEM_PYTHON, 'tinker');
  return { skip: `the Tinker SDK is neither at ${clientsDirs().map((d) => join(d, TINKER_SOURCE)).join(' nor ')} nor importable by ${SYSTEM_PYTHON}: set SLEUTH_CLIENTS_DIR to a folder holding ${TINKER_SOURCE}, or pip install tinker==0.25.0` };
}

function findOpenai(): PythonSdks | { skip: string } {
  if (imports(SYSTEM_PYTHON, 'openai, httpx, pydantic')) return withVersions(SYSTEM_PYTHON, 'openai');
  const venv = join(tmpdir(), `sleuth-python-openai-${createHash('sha256').update(JSON.stringify(OPENAI_PACKAGES)).digest('hex').slice(0, 12)}`);
  try {
    if (!existsSync(join(venv, 'ready'))) build(venv, [[['install', ...PIP_FLAGS, ...OPENAI_PACKAGES], `installing ${OPENAI_PACKAGES.join(' ')} with pip`]]);
  } catch (e) {
    return { skip: `the OpenAI Python SDK is not importable by ${SYSTEM_PYTHON}, and ${(e as Error).message}: pip install openai, or make pip's index reachable` };
  }
  return withVersions(join(venv, 'bin', 'python'), 'openai');
}

function imports(python: string, module: string): boolean {
  return spawnSync(python, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0;
}

function withVersions(python: string, sdk: SdkName): PythonSdks {
  const packages = sdk === 'tinker' ? ['tinker', 'httpx', 'pydantic', 'protobuf'] : OPENAI_PACKAGES;
  const v = run(python, ['-c', `import json, importlib.metadata as m; print(json.dumps({p: m.version(p) for p in ${JSON.stringify(packages)}}))`], 'reading the installed versions');
  return { python, versions: JSON.parse(v) as Record<string, string> };
}

/** Build a virtual environment at `venv` by running each pip step in a scratch copy renamed into place. */
function build(venv: string, pipSteps: [string[], string][]): void {
  const scratch = `${venv}.build-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(dirname(scratch), { recursive: true });
  try {
    run(SYSTEM_PYTHON, ['-m', 'venv', scratch], `creating a virtual environment (${SYSTEM_PYTHON} -m venv; Debian: apt-get install python3-venv)`);
    for (const [args, what] of pipSteps) run(join(scratch, 'bin', 'pip'), args, what);
  } catch (e) {
    rmSync(scratch, { recursive: true, force: true });
    throw e;
  }
  writeFileSync(join(scratch, 'ready'), new Date().toISOString());
  try {
    renameSync(scratch, venv);
  } catch {
    // Another test file finished first: use its venv.
    rmSync(scratch, { recursive: true, force: true });
  }
  // Only bin/python is used from here on: it finds the venv from its own path, so the rename is safe
  // (pip's script, which names the scratch folder, is not).
  if (!existsSync(join(venv, 'ready'))) throw new Error(`the virtual environment at ${venv} is incomplete`);
}

function run(cmd: string, args: string[], what: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) {
    const said = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().split('\n').filter(Boolean).at(-1) ?? r.error?.message ?? `exit ${r.status}`;
    throw new Error(`${what} failed (${said.trim()})`);
  }
  return r.stdout;
}

/**
 * Run a driver script with the venv's Python; resolves with the JSON object it prints last. A
 * non-zero exit rejects with the end of its stderr. The guard kills a hung run (not a timing check).
 */
export function runPythonJson(sdks: PythonSdks, script: string, args: string[], guardMs = 240_000): Promise<Record<string, any>> {
  return new Promise((ok, fail) => {
    const p = spawn(sdks.python, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (b: Buffer) => (out += b.toString()));
    p.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const guard = setTimeout(() => p.kill(), guardMs);
    p.once('exit', (code) => {
      clearTimeout(guard);
      if (code !== 0) fail(new Error(`${basename(script)} exited with ${code}:\n${err.split('\n').slice(-25).join('\n')}`));
      else ok(JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, any>);
    });
  });
}
