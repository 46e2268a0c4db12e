import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadSampler } from '../../src/backend/local/backend.js';
import type { Datum } from '../../src/backend/types.js';
import { pythonSdk, runPythonJson, type PythonSdks } from '../fixtures/python-sdks.js';
import { directBackend, listeningUrl, tempDir, tinyCheckpoint } from '../backend/tinker/helpers.js';

/**
 * The official Tinker Python SDK (0.25.0: its source from $SLEUTH_CLIENTS_DIR or ../shared/clients,
 * or a pip-installed package; skipped, saying how to enable it, without either) against `sleuth serve-tinker`:
 * sdk_loop.py runs a whole training loop, once as the SDK is published (protobuf, zstd) and once
 * speaking the JSON wire of SDK <= 0.24. What it reports is checked against sleuth's local backend
 * doing the same work directly.
 */

const LOOP = join(dirname(fileURLToPath(import.meta.url)), 'sdk_loop.py');
const SEQUENCES = [
  [5, 40, 41, 42, 43, 44, 45],
  [7, 60, 61, 62, 63],
];
const PROMPT = [5, 40];

let sdks: PythonSdks;
let skip: string | undefined;
let checkpoint = '';
let url = '';
let stopCase: { prompt: number[]; max_tokens: number; seed: number; string: string; expected: number[] };
let child: ReturnType<typeof spawn> | undefined;

/** The datums sdk_loop.py builds (weight 0 on the first position). */
function datums(): Datum[] {
  return SEQUENCES.map((s) => {
    const n = s.length - 1;
    return { inputTokens: s.slice(0, -1), targetTokens: s.slice(1), weights: [0, ...new Array<number>(n - 1).fill(1)], logprobs: [0, ...new Array<number>(n - 1).fill(-5)], advantages: [0, ...new Array<number>(n - 1).fill(0.5)] };
  });
}

/** A stop string the base model completes at a known token, for this prompt and seed. */
function findStopCase(): typeof stopCase {
  const sampler = loadSampler(checkpoint);
  for (let seed = 1; seed < 50; seed++) {
    const [seq] = sampler.sampleSync(PROMPT, { maxTokens: 12, temperature: 1, seed });
    const text = (k: number) => sampler.tokenizer.decode(seq!.tokens.slice(0, k));
    for (let k = 3; k < seq!.tokens.length; k++) {
      const full = text(k + 1), before = text(k);
      const candidate = full.slice(-2);
      if (candidate.trim().length === 2 && !before.includes(candidate) && full.length > before.length) return { prompt: PROMPT, max_tokens: 12, seed, string: candidate, expected: seq!.tokens.slice(0, k + 1) };
    }
  }
  throw new Error('no usable stop string in 50 seeds');
}

beforeAll(async () => {
  const got = pythonSdk('tinker');
  if ('skip' in got) return void (skip = got.skip);
  sdks = got;
  checkpoint = await tinyCheckpoint();
  stopCase = findStopCase();
  child = spawn(process.execPath, ['bin/sleuth.js', 'serve-tinker', '--port', '0', '--checkpoint', checkpoint, '--model', 'base', '--dir', tempDir()], { stdio: ['ignore', 'pipe', 'pipe'] });
  url = await listeningUrl(child as Parameters<typeof listeningUrl>[0]);
}, 900_000);

beforeEach((context) => {
  if (skip) context.skip(skip);
});

afterAll(() => {
  child?.kill();
});

function runLoop(mode: 'proto' | 'json'): Promise<Record<string, any>> {
  const spec = { sequences: SEQUENCES, prompt: PROMPT, stop: stopCase };
  return runPythonJson(sdks, LOOP, [url, mode, 'base', JSON.stringify(spec)]);
}

function expectClose(a: (number | null)[][], b: (number | null)[][], tol = 1e-5): void {
  expect(a.map((x) => x.length)).toEqual(b.map((x) => x.length));
  a.forEach((row, i) => row.forEach((v, t) => expect(Math.abs(v! - b[i]![t]!)).toBeLessThan(tol)));
}

// The two wires run at once: one server, separate sessions and models.
describe.concurrent.each(['proto', 'json'] as const)('the official Tinker SDK against serve-tinker (%s wire)', (mode) => {
  it('runs the whole loop: forward, each loss, optim_step, a rejected step, sampling, string stops, compute_logprobs, state, runs and checkpoints', async () => {
    const r = await runLoop(mode);
    expect(r['sdk_version']).toBe('0.25.0');
    // client/config tells the SDK the truth: no pyqwest transport (not installed: the SDK would fail), zstd accepted.
    expect(r['client_config']).toEqual({ use_pyqwest_transport: false, proto_compress_fwdbwd: true });
    expect(r['capabilities']).toEqual(['base']);

    // The same work done directly on the local backend.
    const direct = directBackend(checkpoint);
    const data = datums();
    const forward = direct.forwardSync(data, 'cross_entropy');
    expectClose(r['forward']['logprobs'], forward.logprobs);
    expect(r['forward']['loss']).toBeCloseTo(forward.loss, 4);
    const losses = { cross_entropy: {}, importance_sampling: {}, ppo: { clipLowThreshold: 0.8, clipHighThreshold: 1.2 }, cispo: { clipLowThreshold: 0, clipHighThreshold: 4 } } as const;
    for (const [loss, cfg] of Object.entries(losses)) {
      const want = direct.forwardBackwardSync(data, loss as keyof typeof losses, cfg);
      const got = r['forward_backward'][loss];
      expect(got['lengths']).toEqual([6, 4]);
      expect(got['type']).toBe('TensorData');
      expect(got['metrics']['loss:sum']).toBeCloseTo(want.loss, 4);
    }
    // forward accumulated no gradient: the step's norm is that of the four forward_backwards alone.
    const step = direct.optimStepSync({ learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-12, weightDecay: 0, gradClipNorm: 0 });
    expect(r['optim_step']['step']).toBe(1);
    expect(r['optim_step']['grad_norm']).toBeCloseTo(step['grad_norm']!, 3);

    // The rejected optim_step (learning rate 1e308) is a 400 naming the field, and the next requests run.
    expect(r['rejected']['status']).toBe(400);
    expect(r['rejected']['message']).toMatch(/adam_params\.learning_rate = 1e\+308 is out of range/);
    expect(r['after_rejection']['step']['step']).toBe(2);

    // Sampling from the saved weights; compute_logprobs agrees with the learner on the same weights.
    expect(r['sample']).toHaveLength(3);
    for (const s of r['sample']) {
      expect(s['tokens'].length).toBeGreaterThan(0);
      expect(s['logprobs']).toHaveLength(s['tokens'].length);
    }
    for (const lp of r['compute_logprobs']) expect(lp[0]).toBeNull();
    expectClose(r['compute_logprobs'].map((lp: number[]) => lp.slice(1)), r['learner_logprobs']);
    // A string stop ends sampling at the token that completes it.
    expect(r['stop']).toEqual({ tokens: stopCase.expected, stop_reason: 'stop' });

    // save_state, then create_training_client_from_state(_with_optimizer) and load_state reproduce the weights.
    expect(r['state_path']).toBe(`tinker://${r['model_id']}/weights/state-1`);
    expectClose(r['restored_logprobs'], r['learner_logprobs'], 1e-7);
    expectClose(r['load_state_logprobs'], r['learner_logprobs'], 1e-7);
    // Weights only: Adam's step starts over with its moments (the state was saved after step 2);
    // with the optimiser, the step count goes on from the saved one, as the original's does.
    expect(r['restored_step']['step']).toBe(1);
    expect(r['continued_steps'].map((m: Record<string, number>) => m['step'])).toEqual([3, 3]);
    // With the optimiser state restored, one more step lands exactly where the original's does.
    expectClose(r['continued_logprobs'][1], r['continued_logprobs'][0], 1e-7);
    expect(Math.abs(r['continued_logprobs'][0][0][1] - r['learner_logprobs'][0][1])).toBeGreaterThan(1e-4);

    // Training runs and checkpoints: listed, TTL set, deleted.
    expect(r['training_runs']['ids']).toContain(r['model_id']);
    expect(r['training_run']).toEqual({ id: r['model_id'], rank: 8, base: 'base', metadata: { test: mode }, last_checkpoint: r['state_path'] });
    expect(r['checkpoints']).toEqual([['sampler', r['sampler_path']], ['training', r['state_path']]]);
    expect(r['ttl_seconds_left']).toBeGreaterThan(3000);
    expect(r['ttl_seconds_left']).toBeLessThanOrEqual(3600);
    expect(r['checkpoints_after_delete']).toEqual([r['state_path']]);
  });
});
