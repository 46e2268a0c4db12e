// npm's prepare step (`npm ci`, `npm install`): build what changed or is missing
// (scripts/build-changed.mjs; `npm run build` rebuilds everything). `npx sleuth` in a checkout makes
// npm install the checkout into its npx cache as a link to this very directory and run prepare
// again, with its output hidden: there it does nothing, and bin/sleuth.js builds what is missing,
// saying so, on the first call.
import { spawnSync } from 'node:child_process';

if (process.env.npm_command === 'exec') process.exit(0);
const r = spawnSync(process.execPath, [new URL('./build-changed.mjs', import.meta.url).pathname], { stdio: 'inherit' });
process.exit(r.status ?? 1);
