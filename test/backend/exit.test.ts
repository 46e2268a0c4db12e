import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureWasm } from './helpers.js';

// Worker threads run the compiled backend, so this test drives dist/ (built here if missing).
const DIST = join(process.cwd(), 'dist/src');

beforeAll(() => {
  ensureWasm();
  if (!existsSync(join(DIST, 'backend/local/sampler-worker.js'))) spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'ignore' });
});

describe('a process that used the local backend', () => {
  it('exits by itself when its work is done, with its decoding and gradient threads never closed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-exit-'));
    const url = (p: string) => pathToFileURL(join(DIST, p)).href;
    // A finished command that forgets close(): the worker threads must not hold the event loop
    // (a 'message' listener added after unref() refs the worker's port again).
    const script = `
      import { createLocalBackend } from ${JSON.stringify(url('backend/local/backend.js'))};
      import { trainBpe } from ${JSON.stringify(url('protocol/compact/bpe.js'))};
      import { SPECIALS } from ${JSON.stringify(url('protocol/compact/renderer.js'))};
      const texts = ['The quick brown fox jumps over the lazy dog.', 'Paris is the capital of France; Berlin is the capital of Germany.'];
      const tok = trainBpe(texts, 320, [...SPECIALS]);
      const b = createLocalBackend({ tokenizer: tok, config: { context: 64, dModel: 16, nLayers: 2, nHeads: 2 }, seed: 1, threads: 2, dir: ${JSON.stringify(dir)} });
      const ids = tok.encode(texts.join(' '));
      const datum = (s) => ({ inputTokens: ids.slice(s, s + 20), targetTokens: ids.slice(s + 1, s + 21), weights: ids.slice(s + 1, s + 21).map(() => 1) });
      await b.forwardBackward([datum(0), datum(3), datum(6)], 'cross_entropy');
      const sampler = await b.saveWeightsForSampler('w0');
      const got = await sampler.sample(ids.slice(0, 8), { maxTokens: 4, temperature: 1, seed: 2 }, 2);
      console.log('workers', b.threads, sampler.constructor.name, got.length);
    `;
    const file = join(dir, 'finish.mjs');
    writeFileSync(file, script);
    const r = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('workers 2 BatchSampler 2');
    // Killed at the timeout, the child has no status and signal SIGTERM.
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
  });
});
