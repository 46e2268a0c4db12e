// npm's prepare step: build everything (`npm run build`), once. `npm ci` and `npm install` build
// here. `npx sleuth` in this checkout makes npm install the checkout into its npx cache as a
// link to this very directory, and run prepare again: when dist/ is already built that second
// build only rewrites the same files, for minutes on a small machine, so it is skipped.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (process.env.npm_command === 'exec' && existsSync(new URL('../dist/src/cli/main.js', import.meta.url))) {
  console.error('prepare: dist/ is built; npx runs it as it is (after changing sources: npm run build)');
  process.exit(0);
}
const npm = process.env.npm_execpath;
const r = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: true });
process.exit(r.status ?? 1);
