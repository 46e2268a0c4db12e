// npm's pretest step: what `npm test` needs beyond node_modules, provided or asked for.
// The explorer's browser tests drive Debian's Chromium at /usr/bin/chromium (playwright-core
// brings no browser). Found: nothing to do. Missing: installed with apt-get when this user may
// (root, or sudo without a password); otherwise the exact command to run is printed and the
// tests do not start.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = '/usr/bin/chromium';
const INSTALL = 'apt-get update -qq && apt-get install -y -qq chromium';

function fail(message) {
  console.error(`pretest: ${message}`);
  process.exit(1);
}

if (!existsSync(CHROMIUM)) {
  const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
  if (!has('apt-get')) fail(`the explorer's browser tests need Chromium at ${CHROMIUM}, and this system has no apt-get: install Chromium there (or link it there), then run npm test again`);
  const root = process.getuid?.() === 0;
  const sudo = !root && has('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  if (!root && !sudo) fail(`the explorer's browser tests need Chromium at ${CHROMIUM}; install it with:\n  sudo sh -c '${INSTALL}'\nthen run npm test again`);
  console.error(`pretest: Chromium is not at ${CHROMIUM}; installing Debian's chromium with apt-get (once)`);
  const r = spawnSync(root ? 'sh' : 'sudo', [...(root ? [] : ['-n', 'sh']), '-c', INSTALL], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (r.status !== 0 || !existsSync(CHROMIUM)) fail(`installing chromium with apt-get failed (exit ${r.status}); run it yourself:\n  sudo sh -c '${INSTALL}'`);
  console.error(`pretest: installed ${CHROMIUM}`);
}
