import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { SkipReasonReporter } from './test/skip-reporter.js';
import { unavailable } from './test/unavailable.js';

/** The explorer's browser tests drive Debian's Chromium (playwright-core brings no browser). */
const CHROMIUM = '/usr/bin/chromium';
const leftOut = existsSync(CHROMIUM) ? [] : [{ file: 'test/explorer/browser.test.ts', reason: unavailable(`Chromium is not at ${CHROMIUM}: install it (Debian: apt-get install chromium) to run the explorer's browser tests`) }];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', ...leftOut.map((l) => l.file)],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Two cores: more workers only fight over them.
    maxWorkers: 2,
    reporters: ['default', new SkipReasonReporter(leftOut)],
  },
});
