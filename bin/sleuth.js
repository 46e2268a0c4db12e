#!/usr/bin/env node
// The `sleuth` command: the compiled CLI lives in dist/ (built by `npm ci` through the prepare script).
import { main } from '../dist/src/cli/main.js';

// Exit as soon as the command is done (servers resolve only when stopped): a worker thread or a
// handle that some library left open must not keep a finished command alive.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => { console.error(err?.stack ?? String(err)); process.exit(1); },
);
