import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A Python virtual environment with the official Tinker and OpenAI Python SDKs, for the tests that
 * drive sleuth's servers with clients sleuth did not write. The Tinker SDK is installed from its
 * source in ../shared/clients (or $SLEUTH_CLIENTS_DIR), everything else from the machine's pip
 * mirror (pip's configured index; there is no PyPI here). Built once and cached under the system
 * temp folder, keyed by what goes into it; a build happens in a scratch folder renamed into place,
 * so two test files building at once never share a half-built venv.
 *
 * If it cannot be built, `pythonSdks()` throws one line saying why: the tests that need it fail,
 * they never pass by skipping.
 */

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * The SDK sources: $SLEUTH_CLIENTS_DIR, else the workplace's shared/clients beside the checkout,
 * else at its fixed place (/work/shared/clients) for a clone made elsewhere (CI's fresh clone).
 */
export const CLIENTS_DIR = process.env['SLEUTH_CLIENTS_DIR'] ?? [resolve(REPO, '..', 'shared', 'clients'), '/work/shared/clients'].find((d) => existsSync(d)) ?? resolve(REPO, '..', 'shared', 'clients');
export const TINKER_SDK = join(CLIENTS_DIR, 'tinker-python-0.25.0');
/** The Tinker SDK's runtime dependencies, less pyqwest and transformers (see ../shared/clients/README.md). */
const TINKER_DEPS = ['httpx[http2]', 'pydantic', 'anyio', 'distro', 'sniffio', 'typing-extensions', 'protobuf', 'numpy', 'rich', 'click', 'orjson', 'zstandard', 'hatchling', 'hatch-fancy-pypi-readme'];
const OPENAI_SDK = ['openai'];
/** pip would otherwise spend about a minute retrying the unreachable public index. */
const PIP_FLAGS = ['--retries', '0', '--timeout', '2', '--disable-pip-version-check', '--no-input'];

export interface PythonSdks {
  python: string;
  versions: Record<string, string>;
}

let cached: PythonSdks | undefined;

export function pythonSdks(): PythonSdks {
  if (cached) return cached;
  if (!existsSync(join(TINKER_SDK, 'pyproject.toml'))) throw new Error(`Python SDK tests: the Tinker SDK source is not at ${TINKER_SDK} (set SLEUTH_CLIENTS_DIR)`);
  const key = createHash('sha256').update(JSON.stringify([TINKER_DEPS, OPENAI_SDK, readFileSync(join(TINKER_SDK, 'pyproject.toml'), 'utf8'), 1])).digest('hex').slice(0, 12);
  const venv = join(tmpdir(), `sleuth-python-sdks-${key}`);
  const python = join(venv, 'bin', 'python');
  if (!existsSync(join(venv, 'ready'))) build(venv);
  const v = run(python, ['-c', 'import json, importlib.metadata as m; print(json.dumps({p: m.version(p) for p in ("tinker", "openai", "httpx", "pydantic", "protobuf")}))'], 'reading the installed versions');
  cached = { python, versions: JSON.parse(v) as Record<string, string> };
  return cached;
}

function build(venv: string): void {
  const scratch = `${venv}.build-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(dirname(scratch), { recursive: true });
  run(process.env['PYTHON'] ?? 'python3', ['-m', 'venv', scratch], 'creating a virtual environment (python3 -m venv; Debian: apt-get install python3-venv)');
  const pip = join(scratch, 'bin', 'pip');
  run(pip, ['install', ...PIP_FLAGS, ...TINKER_DEPS, ...OPENAI_SDK], `installing ${[...TINKER_DEPS, ...OPENAI_SDK].join(' ')} from the pip mirror`);
  run(pip, ['install', ...PIP_FLAGS, '--no-deps', '--no-build-isolation', TINKER_SDK], `installing the Tinker SDK from ${TINKER_SDK}`);
  writeFileSync(join(scratch, 'ready'), new Date().toISOString());
  try {
    renameSync(scratch, venv);
  } catch {
    // Another test file finished first: use its venv.
    rmSync(scratch, { recursive: true, force: true });
  }
  // Only bin/python is used from here on: it finds the venv from its own path, so the rename is safe
  // (pip's script, which names the scratch folder, is not).
  if (!existsSync(join(venv, 'ready'))) throw new Error(`Python SDK tests: the venv at ${venv} is incomplete`);
}

function run(cmd: string, args: string[], what: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) {
    const said = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim().split('\n').filter(Boolean).at(-1) ?? r.error?.message ?? `exit ${r.status}`;
    throw new Error(`Python SDK tests: ${what} failed: ${said}`);
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
