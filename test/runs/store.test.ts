import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import {
  appendRollouts,
  finishedKeys,
  latestRollouts,
  openRunDir,
  readRollouts,
  readRunConfig,
  readSummary,
  rolloutKey,
  writeSummary,
} from '../../src/runs/store.js';
import { runPath } from '../../src/runs/layout.js';
import { rollout } from '../reward/helpers.js';

let dir: string;
beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), 'sleuth-runs-')), 'run');
});
afterEach(() => {
  rmSync(join(dir, '..'), { recursive: true, force: true });
});

describe('run directories', () => {
  it('are created with config.json, and reopened only by the same run', () => {
    const config = { kind: 'eval' as const, agent: 'baseline', samples: 2 };
    expect(openRunDir(dir, config, ['agent', 'samples'])).toEqual({ resumed: false });
    expect(readRunConfig(dir)).toEqual(config);
    expect(openRunDir(dir, { ...config, createdAt: 'later' }, ['agent', 'samples'])).toEqual({ resumed: true });
    expect(() => openRunDir(dir, { ...config, samples: 4 }, ['agent', 'samples'])).toThrow(/samples was 2, now 4/);
    expect(() => openRunDir(dir, { ...config, kind: 'train' }, ['agent'])).toThrow(InputError);
    // no temporary files left behind
    expect(readdirSync(dir)).toEqual(['config.json']);
  });

  it('refuse a file as the directory, and a config without a kind', () => {
    const file = join(dir, '..', 'plain-file');
    writeFileSync(file, 'x');
    expect(() => openRunDir(file, { kind: 'eval' }, [])).toThrow(/is not a directory/);
    openRunDir(dir, { kind: 'eval' }, []);
    writeFileSync(runPath(dir, 'config'), '{"agent":"x"}');
    expect(() => readRunConfig(dir)).toThrow(/config.json: kind/);
  });

  it('append rollouts and read them back, skipping a line cut by a crash and naming it', () => {
    openRunDir(dir, { kind: 'eval' }, []);
    appendRollouts(dir, [rollout({ taskId: 'a', sample: 0 }), rollout({ taskId: 'a', sample: 1 })]);
    appendFileSync(runPath(dir, 'rollouts'), '{"version":1,"id":"half');
    appendFileSync(runPath(dir, 'rollouts'), '\n{"not":"a rollout"}\n');
    appendRollouts(dir, [rollout({ taskId: 'b', sample: 0 })]);
    const { rollouts, skipped } = readRollouts(dir);
    expect(rollouts.map(rolloutKey)).toEqual(['a\u00000', 'a\u00001', 'b\u00000']);
    expect(skipped.map((s) => s.line)).toEqual([3, 4]);
    expect(skipped[1]!.reason).toMatch(/not a rollout: version/);
    expect(readRollouts(join(dir, 'missing'))).toEqual({ rollouts: [], skipped: [] });
  });

  it('seal a line cut by a kill when reopened, so the next record is not glued onto it', () => {
    openRunDir(dir, { kind: 'eval' }, []);
    appendRollouts(dir, [rollout({ taskId: 'a', sample: 0 })]);
    appendFileSync(runPath(dir, 'rollouts'), '{"version":1,"taskId":"b","sam');
    openRunDir(dir, { kind: 'eval' }, []);
    appendRollouts(dir, [rollout({ taskId: 'b', sample: 0 })]);
    const { rollouts, skipped } = readRollouts(dir);
    expect(rollouts.map((r) => r.taskId)).toEqual(['a', 'b']);
    expect(skipped.map((s) => s.line)).toEqual([2]);
    // reopening a clean file adds nothing
    const before = readFileSync(runPath(dir, 'rollouts'), 'utf8');
    openRunDir(dir, { kind: 'eval' }, []);
    expect(readFileSync(runPath(dir, 'rollouts'), 'utf8')).toBe(before);
  });

  it('let a re-run supersede an errored sample, but never a finished one', () => {
    const failed = rollout({ taskId: 'a', sample: 0, endReason: 'error', error: 'HTTP 500' });
    const retried = rollout({ taskId: 'a', sample: 0, endReason: 'finish', id: 'retry' });
    const later = rollout({ taskId: 'a', sample: 0, endReason: 'error', id: 'later' });
    expect(latestRollouts([failed, retried, later]).map((r) => r.id)).toEqual(['retry']);
    expect(latestRollouts([failed]).map((r) => r.endReason)).toEqual(['error']);
    expect([...finishedKeys([failed, rollout({ taskId: 'b', sample: 1 })])]).toEqual(['b\u00001']);
  });

  it('replace summary.json whole through a rename', () => {
    openRunDir(dir, { kind: 'eval' }, []);
    writeSummary(dir, { reward: 0.5 });
    writeSummary(dir, { reward: 0.7, recall: 1 });
    expect(readSummary(dir)).toEqual({ reward: 0.7, recall: 1 });
    expect(readFileSync(runPath(dir, 'summary'), 'utf8').endsWith('\n')).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'summary.json']);
    writeFileSync(runPath(dir, 'summary'), '[1]');
    expect(() => readSummary(dir)).toThrow(/not a JSON object/);
  });
});
