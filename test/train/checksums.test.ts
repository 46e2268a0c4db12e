import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSampler } from '../../src/backend/local/backend.js';
import { readCheckpoints, verifyRecordedCheckpoint } from '../../src/runs/checkpoints.js';
import { verifyRunFiles, type CheckpointRecord } from '../../src/runs/training.js';

/**
 * Checkpoints and run files are checked by checksum, not only by whether they parse: a real
 * training run (the built CLI, dist/; a tiny model, two steps), then copies of it damaged by one
 * byte that keeps every file the same size and every line valid JSON.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'sleuth.js');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-sums-'));
const RUN = join(tmp, 'run');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TINY = ['--config', 'configs/local-demo.json', '--model', 'base', '--local.d-model', '16', '--local.n-layers', '1', '--local.n-heads', '2', '--local.context', '512',
  '--context-tokens', '512', '--max-turns', '2', '--max-tokens-per-turn', '12', '--groups-per-step', '2', '--group-size', '3', '--eval-limit', '2', '--concurrency', '4'];

const sleuth = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8' });

let copies = 0;
/** A copy of the trained run to damage. */
function copyRun(): string {
  const dir = join(tmp, `copy-${++copies}`);
  cpSync(RUN, dir, { recursive: true });
  return dir;
}

/** Replace the byte at `at` of a file (its size unchanged). */
function setByte(path: string, at: number, value: string): void {
  const bytes = readFileSync(path);
  expect(bytes[at]).not.toBe(value.charCodeAt(0));
  bytes[at] = value.charCodeAt(0);
  writeFileSync(path, bytes);
}

beforeAll(() => {
  const r = sleuth(['train', ...TINY, '--steps', '2', '--out', RUN]);
  expect(r.stderr).not.toMatch(/Error/);
  expect(r.status).toBe(0);
}, 300_000);

describe('checkpoint files', () => {
  it('are recorded with their checksums, and a sampler checkpoint changed by one byte is refused by serve and by the loader, naming the file (exit 2)', () => {
    const last = readCheckpoints<CheckpointRecord>(RUN).at(-1)!;
    expect(last.checksums).toEqual({ path: expect.stringMatching(/^[0-9a-f]{8}$/u), samplerPath: expect.stringMatching(/^[0-9a-f]{8}$/u) });
    const dir = copyRun();
    const sampler = join(dir, 'checkpoints', 'sampler-2.sampler.ckpt');
    expect(verifyRecordedCheckpoint(sampler)).toBe(dir);
    // One byte of the header's name, which the file's own hash of its tensors does not cover: it still loads on its own.
    const at = readFileSync(sampler).indexOf('"name":"') + 8;
    setByte(sampler, at, 'X');
    expect(() => loadSampler(sampler)).not.toThrow();
    expect(() => verifyRecordedCheckpoint(sampler)).toThrow(/sampler-2\.sampler\.ckpt: corrupted \(its xxh32 is [0-9a-f]{8}; .*checkpoints\.jsonl recorded [0-9a-f]{8} when step 2 wrote it\)/u);
    const served = sleuth(['serve', '--checkpoint', sampler, '--port', '0']);
    expect(served.status).toBe(2);
    expect(served.stderr).toContain(`checkpoint ${sampler}: corrupted`);
  });

  it('a resume from a state checkpoint changed by one byte is refused, naming the file (exit 2)', () => {
    const dir = copyRun();
    const state = join(dir, 'checkpoints', 'step-2.state.ckpt');
    const at = readFileSync(state).indexOf('"name":"') + 8;
    setByte(state, at, 'X');
    const r = sleuth(['train', '--resume', dir, '--steps', '3']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`checkpoint ${state}: corrupted`);
    expect(readCheckpoints<CheckpointRecord>(dir).map((c) => c.step)).toEqual([0, 1, 2]);
  });
});

describe('rollouts.jsonl and metrics.jsonl', () => {
  it('a reward changed by one digit inside the checkpointed prefix (same size, still JSON) stops the resume, naming the file and the byte range (exit 2)', () => {
    const dir = copyRun();
    const rollouts = join(dir, 'rollouts.jsonl');
    const size = statSync(rollouts).size;
    // The last digit of the first rollout's total reward (byte offsets: the file is UTF-8).
    const bytes = readFileSync(rollouts);
    let digit = bytes.indexOf('"reward":{"total":') + '"reward":{"total":'.length;
    while (/[-\d.]/u.test(String.fromCharCode(bytes[digit + 1]!))) digit++;
    setByte(rollouts, digit, bytes[digit] === '7'.charCodeAt(0) ? '8' : '7');
    expect(statSync(rollouts).size).toBe(size);
    for (const line of readFileSync(rollouts, 'utf8').trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    const r = sleuth(['train', '--resume', dir, '--steps', '3']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`${rollouts.replace(/[.*+?^${}()|[\]\\/]/gu, '\\$&')}: bytes 0-\\d+ \\(written up to the checkpoint of step 1\\) changed since then`, 'u'));
    // Nothing was dropped or appended: the damaged run is as it was.
    expect(statSync(rollouts).size).toBe(size);
  });

  it('metrics.jsonl cut inside the prefix is refused; bytes after the last checkpoint are not checked', () => {
    const dir = copyRun();
    const metrics = join(dir, 'metrics.jsonl');
    const last = readCheckpoints<CheckpointRecord>(dir).at(-1)!;
    const end = last.jsonl!.metrics!.to;
    // The eval records written after the last checkpoint may change (a resume drops or keeps them by step).
    writeFileSync(metrics, readFileSync(metrics).subarray(0, end));
    expect(() => verifyRunFiles(dir, 2)).not.toThrow();
    writeFileSync(metrics, readFileSync(metrics).subarray(0, end - 1));
    expect(() => verifyRunFiles(dir, 2)).toThrow(new RegExp(`metrics\\.jsonl: bytes ${last.jsonl!.metrics!.from}-${end} \\(written up to the checkpoint of step 2\\) are cut: the file has ${end - 1} bytes`, 'u'));
  });

  it('a run whose checkpoint records predate checksums (no checksums, no segments) still resumes', () => {
    const dir = copyRun();
    const path = join(dir, 'checkpoints.jsonl');
    const old = readFileSync(path, 'utf8').trim().split('\n').map((l) => {
      const { checksums: _c, jsonl: _j, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return JSON.stringify(rest);
    });
    writeFileSync(path, `${old.join('\n')}\n`);
    const r = sleuth(['train', '--resume', dir, '--steps', '3']);
    expect(r.stderr).not.toMatch(/Error/);
    expect(r.status).toBe(0);
    const records = readCheckpoints<CheckpointRecord>(dir);
    expect(records.map((c) => c.step)).toEqual([0, 1, 2, 3]);
    // The new checkpoint vouches for the whole file from its start (its predecessor recorded no segment).
    expect(records.at(-1)!.jsonl!.rollouts).toMatchObject({ from: 0, to: statSync(join(dir, 'rollouts.jsonl')).size });
    expect(() => verifyRunFiles(dir, 3)).not.toThrow();
  });

  it('a resumed run extends the chain: the new checkpoint starts where the resume point ended, and the whole prefix verifies', () => {
    const dir = copyRun();
    const r = sleuth(['train', '--resume', dir, '--steps', '3']);
    expect(r.status).toBe(0);
    const [, , two, three] = readCheckpoints<CheckpointRecord>(dir);
    expect(three!.jsonl!.rollouts!.from).toBe(two!.jsonl!.rollouts!.to);
    expect(() => verifyRunFiles(dir, 3)).not.toThrow();
  });
});
