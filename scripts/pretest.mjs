// npm's pretest step: what `npm test` needs beyond node_modules, provided or asked for.
// The explorer's browser tests drive Debian's Chromium at /usr/bin/chromium (playwright-core
// brings no browser); the official SDKs' conformance tests build a Python virtual environment
// (python3 with venv and ensurepip: Debian's python3-venv). Found: nothing to do. Missing:
// installed with apt-get when this user may (root, or sudo without a password); otherwise the
// exact command to run is printed and the tests do not start.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = '/usr/bin/chromium';

function fail(message) {
  console.error(`pretest: ${message}`);
  process.exit(1);
}

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const pythonVenv = () => spawnSync('python3', ['-c', 'import venv, ensurepip'], { stdio: 'ignore' }).status === 0;

/** Install Debian packages for `what` with apt-get, or say exactly how and stop. */
function provide(what, packages, present) {
  const install = `apt-get update -qq && apt-get install -y -qq ${packages}`;
  if (!has('apt-get')) fail(`${what}, and this system has no apt-get: install ${packages} yourself, then run npm test again`);
  const root = process.getuid?.() === 0;
  const sudo = !root && has('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  if (!root && !sudo) fail(`${what}; install it with:\n  sudo sh -c '${install}'\nthen run npm test again`);
  console.error(`pretest: ${what}; installing Debian's ${packages} with apt-get (once)`);
  const r = spawnSync(root ? 'sh' : 'sudo', [...(root ? [] : ['-n', 'sh']), '-c', install], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (r.status !== 0 || !present()) fail(`installing ${packages} with apt-get failed (exit ${r.status}); run it yourself:\n  sudo sh -c '${install}'`);
  console.error(`pretest: installed ${packages}`);
}

if (!existsSync(CHROMIUM)) provide(`the explorer's browser tests need Chromium at ${CHROMIUM}`, 'chromium', () => existsSync(CHROMIUM));
if (!pythonVenv()) provide('the SDK conformance tests need python3 with venv and ensurepip', 'python3 python3-venv', pythonVenv);
