import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configFromFlags, mergeConfig, parseTrainConfig, readConfigFile, rubricOf, totalSteps } from '../../src/train/config.js';
import { epochOrder, groupSeed, taskAt } from '../../src/train/grpo.js';
import { readTaskSet } from '../../src/tasks/registry.js';

const ROOT = join(import.meta.dirname, '..', '..');
const tmp = mkdtempSync(join(tmpdir(), 'sleuth-config-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('train config', () => {
  it("every preset in configs/ is a valid config; the blog-post presets have the blog post's settings", () => {
    const presets = readdirSync(join(ROOT, 'configs')).filter((f) => f.endsWith('.json') && f !== 'prices.json');
    expect(presets).toContain('local-demo.json');
    for (const f of presets) parseTrainConfig(readConfigFile(join(ROOT, 'configs', f)), f);
    const seeds = parseTrainConfig(readConfigFile(join(ROOT, 'configs', 'tinker-gpt-oss-20b.json')), 'seeds');
    expect(seeds).toMatchObject({ backend: 'tinker', model: 'openai/gpt-oss-20b', loraRank: 32, groupSize: 8, groupsPerStep: 64, steps: 24, temperature: 1, advantage: 'dr-grpo', maxStaleness: 0 });
    expect(seeds.adam).toMatchObject({ learningRate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0 });
    expect(parseTrainConfig(readConfigFile(join(ROOT, 'configs', 'tinker-qwen3.json')), 'qwen3').renderer).toBe('qwen3');
  });

  it("the gpt-oss-20b presets' comments say how many epochs of their task set's train split they run (issue 50, point 3)", () => {
    for (const f of ['tinker-gpt-oss-20b.json', 'tinker-gpt-oss-20b-format.json']) {
      const raw = JSON.parse(readFileSync(join(ROOT, 'configs', f), 'utf8')) as { $comment: string };
      const c = parseTrainConfig(readConfigFile(join(ROOT, 'configs', f)), f);
      const train = readTaskSet(c.tasks).tasks.filter((t) => t.split === c.trainSplit).length;
      const epochs = ((c.steps ?? 0) * c.groupsPerStep) / train;
      expect(raw.$comment, f).toContain(`${epochs.toFixed(1)} epochs of the default task set's ${train} training tasks`);
      expect(raw.$comment, f).not.toMatch(/24 steps \(1\.5 epochs/);
    }
  });

  it('reads YAML, and flags override the file field by field', () => {
    const path = join(tmp, 'c.yaml');
    writeFileSync(path, 'steps: 3\ngroupSize: 4\nadam:\n  learningRate: 0.002\nreward:\n  rubric: f4\n');
    const flags = configFromFlags({ 'group-size': '6', 'adam.beta2': '0.99', beta: 'linear:4:1:10', 'empty-value': '-0.3', 'eval-at-start': 'false' });
    const c = parseTrainConfig(mergeConfig(readConfigFile(path), flags), 'test');
    expect(c).toMatchObject({ steps: 3, groupSize: 6, evalAtStart: false });
    expect(c.adam).toMatchObject({ learningRate: 0.002, beta2: 0.99, beta1: 0.9 });
    const rubric = rubricOf(c);
    expect(rubric.beta).toEqual({ kind: 'linear', from: 4, to: 1, steps: 10 });
    expect(rubric.weights['empty']).toBe(-0.3);
    expect(rubric.name).toMatch(/^f4\[/);
  });

  it('epochs decide the steps when steps are not given', () => {
    const c = parseTrainConfig({ epochs: 1.5, groupsPerStep: 64 }, 'test');
    expect(totalSteps(c, 1024)).toBe(24);
  });

  it('names the bad field', () => {
    expect(() => parseTrainConfig({ steps: 2, groupSize: 0 }, 'my.json')).toThrow(/my\.json: groupSize/);
    expect(() => parseTrainConfig({ steps: 2, loss: 'mse' }, 'my.json')).toThrow(/loss/);
    expect(() => parseTrainConfig({ steps: 2, bogus: 1 }, 'my.json')).toThrow(/bogus|Unrecognized/);
    expect(() => parseTrainConfig({}, 'my.json')).toThrow(/steps or epochs/);
    expect(() => parseTrainConfig({ steps: 1, env: 'qa', reward: { rubric: 'f4' } }, 'my.json')).toThrow(/scores search rollouts/);
    expect(() => configFromFlags({ lr: 'fast' })).toThrow(/--lr must be a number/);
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, '{ "steps": ');
    expect(() => readConfigFile(bad)).toThrow(/bad\.json: not valid JSON/);
  });
});

describe('data order and seeds', () => {
  it('each epoch is a permutation; the order continues across epochs and is reproducible', () => {
    const a = epochOrder(10, 3, 0);
    expect([...a].sort((x, y) => x - y)).toEqual([...Array(10).keys()]);
    expect(epochOrder(10, 3, 0)).toEqual(a);
    expect(epochOrder(10, 3, 1)).not.toEqual(a);
    expect(Array.from({ length: 10 }, (_, i) => taskAt(i, 10, 3))).toEqual(a);
    expect(Array.from({ length: 10 }, (_, i) => taskAt(10 + i, 10, 3))).toEqual(epochOrder(10, 3, 1));
    expect(groupSeed(0, 5)).toBe(groupSeed(0, 5));
    expect(groupSeed(0, 5)).not.toBe(groupSeed(0, 6));
  });
});
