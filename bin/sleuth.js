#!/usr/bin/env node
// The `sleuth` command: the compiled CLI lives in dist/ (built by `npm ci` through the prepare script).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const MAIN = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(MAIN)) {
  // A checkout whose install scripts did not run (or `npx sleuth` in a fresh clone): build once, saying so.
  console.error('sleuth: dist/ is not built; building it now (once; about a minute on 2 cores; `npm run build` does the same)');
  const built = spawnSync(process.execPath, [new URL('../scripts/build-changed.mjs', import.meta.url).pathname], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const { main } = await import(MAIN.href);

// Exit as soon as the command is done (servers resolve only when stopped): a worker thread or a
// handle that some library left open must not keep a finished command alive. Into a pipe, stdout
// is written asynchronously: exit once what was printed has been handed on (an empty write's
// callback runs after every earlier write), or a --json document longer than 64 KiB is cut.
main(process.argv.slice(2)).then(
  (code) => process.stdout.write('', () => process.exit(code)),
  (err) => { console.error(err?.stack ?? String(err)); process.exit(1); },
);
