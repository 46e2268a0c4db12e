import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalBackend } from '../../src/backend/local/backend.js';
import { createBackend } from '../../src/train/backend-factory.js';
import { configFromFlags, parseTrainConfig } from '../../src/train/config.js';
import { ADAM, datumFor, ensureWasm, tinyBackend } from '../backend/helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'sleuth-factory-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a run started fresh from a state checkpoint', () => {
  it("starts with Adam's moments and step reset, exactly like the same weights with a new optimiser", async () => {
    ensureWasm();
    // Another run's state: a few optimiser steps leave non-zero moments and step 3.
    const other = tinyBackend();
    const data = [datumFor(other.tokenizer.encode('Paris is the capital of France.')), datumFor(other.tokenizer.encode('The quick brown fox jumps.'))];
    for (let i = 0; i < 3; i++) {
      await other.forwardBackward(data, 'cross_entropy');
      await other.optimStep(ADAM);
    }
    const state = await other.saveState('other-run');
    const weights = (await other.saveWeightsForSampler('other-run')).modelPath;
    await other.close();

    // What a fresh optimiser over the same weights does in one step.
    // A sampler checkpoint holds no moments; its step count is the only optimiser state to clear.
    const fresh = createLocalBackend({ checkpoint: weights, dir: join(tmp, 'fresh') });
    fresh.step = 0;
    await fresh.forwardBackward(data, 'cross_entropy');
    await fresh.optimStep(ADAM);

    const config = parseTrainConfig({ backend: 'local', model: state, steps: 1, budgets: { contextTokens: 64, maxTokensPerTurn: 16, maxTurns: 2 } }, 'test');
    const setup = await createBackend(config, { checkpointDir: join(tmp, 'run') });
    const backend = setup.backend as ReturnType<typeof createLocalBackend>;
    expect(backend.step).toBe(0);
    await backend.forwardBackward(data, 'cross_entropy');
    const m = await backend.optimStep(ADAM);
    expect(m.metrics['step']).toBe(1);
    // Same weights after the step, to the bit: old moments would have moved them differently.
    expect(Array.from(backend.model.params.a)).toEqual(Array.from(fresh.model.params.a));
    await backend.close();
    await fresh.close();
  });
});

describe('localModel.threads', () => {
  it('sets the local backend\'s gradient threads, from the config and the --local.threads flag, and rejects 0', async () => {
    ensureWasm();
    const b = tinyBackend();
    const weights = (await b.saveWeightsForSampler('threads')).modelPath;
    await b.close();
    const budgets = { contextTokens: 64, maxTokensPerTurn: 16, maxTurns: 2 };
    for (const threads of [1, 3]) {
      const setup = await createBackend(parseTrainConfig({ backend: 'local', model: weights, steps: 1, budgets, localModel: { threads } }, 'test'), { checkpointDir: join(tmp, `threads-${threads}`) });
      expect((setup.backend as ReturnType<typeof createLocalBackend>).threads).toBe(threads);
      await setup.backend.close();
    }
    expect(() => parseTrainConfig({ backend: 'local', model: weights, budgets, localModel: { threads: 0 } }, 'test')).toThrow(/threads/);
    expect(configFromFlags({ 'local.threads': '1' })).toEqual({ localModel: { threads: 1 } });
  });
});
