import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildEmbeddedTasks } from '../../scripts/build-embedded-tasks.js';
import { devTestHalves, splitSha256, taskSource } from '../../src/tasks/split.js';
import { taskSetOf } from '../../src/tasks/registry.js';
import { embeddedTasksPath, readSplitTasks } from '../../src/tasks/store.js';
import { unavailable } from '../unavailable.js';

/** The source data the embedded tasks are built from: $SLEUTH_DATA_DIR, else ../shared/data beside this package. */
const SHARED = resolve(process.env['SLEUTH_DATA_DIR'] ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'data'));
const NO_SHARED = existsSync(join(SHARED, 'hotpotqa')) ? undefined : unavailable(`the HotpotQA and MuSiQue source data are not at ${SHARED}: set SLEUTH_DATA_DIR to the folder holding hotpotqa/ and musique/`);
const tasks = readSplitTasks(embeddedTasksPath());
const of = (split: string) => tasks.filter((t) => t.split === split).map(({ split: _s, ...t }) => t);

describe('the embedded default task set', () => {
  it('holds the HotpotQA dev-500 and MuSiQue-100 questions, each with facts and answers', () => {
    expect(tasks).toHaveLength(600);
    expect(tasks.filter((t) => taskSource(t) === 'hotpotqa')).toHaveLength(500);
    expect(tasks.filter((t) => taskSource(t) === 'musique')).toHaveLength(100);
    for (const t of tasks) {
      expect(t.facts.length).toBeGreaterThanOrEqual(2);
      expect(t.answers?.length).toBeGreaterThan(0);
    }
  });

  it('has train and eval splits that never overlap, at least 100 eval questions, stratified by source', () => {
    const train = new Set(of('train').map((t) => t.id));
    const evalIds = of('eval').map((t) => t.id);
    expect(new Set(tasks.map((t) => t.split))).toEqual(new Set(['train', 'eval']));
    expect(evalIds.length).toBeGreaterThanOrEqual(100);
    expect(evalIds.filter((id) => train.has(id))).toEqual([]);
    expect(train.size + evalIds.length).toBe(tasks.length);
    for (const source of ['hotpotqa', 'musique']) {
      const all = tasks.filter((t) => taskSource(t) === source).length;
      const held = of('eval').filter((t) => taskSource(t) === source).length;
      expect(held).toBe(Math.round(all * 0.2));
    }
  });

  it('halves eval into dev and test: disjoint, together eval, both sources in proportion, the same on every load', async () => {
    const set = taskSetOf('default', tasks, '/nonexistent-index');
    expect(set.splits).toEqual(['train', 'eval', 'dev', 'test']);
    const dev = set.tasks('dev'), test = set.tasks('test');
    const devIds = new Set(dev.map((t) => t.id));
    expect(test.filter((t) => devIds.has(t.id))).toEqual([]);
    expect(new Set([...dev, ...test].map((t) => t.id))).toEqual(new Set(of('eval').map((t) => t.id)));
    for (const [source, n] of [['hotpotqa', 50], ['musique', 10]] as const) {
      expect(dev.filter((t) => taskSource(t) === source)).toHaveLength(n);
      expect(test.filter((t) => taskSource(t) === source)).toHaveLength(n);
    }
    // Halving depends on the ids and the seed only: shuffled input gives the same halves, in input order.
    const shuffled = [...of('eval')].reverse();
    expect(devTestHalves(shuffled).dev.map((t) => t.id)).toEqual(dev.map((t) => t.id).reverse());
    expect(devTestHalves(of('eval'), 'another seed').dev.map((t) => t.id)).not.toEqual(dev.map((t) => t.id));
    // A set with its own dev split keeps it and derives nothing.
    const own = taskSetOf('own', [...tasks.slice(0, 3).map((t) => ({ ...t, split: 'dev' })), ...tasks.slice(3, 6).map((t) => ({ ...t, split: 'eval' }))], '/x');
    expect(own.splits).toEqual(['eval', 'dev']);
    expect(own.tasks('dev').map((t) => t.id)).toEqual(tasks.slice(0, 3).map((t) => t.id));
  });

  it('matches the split hashes published in data/embedded/SPLITS.md', () => {
    const md = readFileSync(join('data', 'embedded', 'SPLITS.md'), 'utf8');
    const set = taskSetOf('default', tasks, '/nonexistent-index');
    for (const split of ['train', 'eval', 'dev', 'test']) {
      const row = md.split('\n').find((l) => l.startsWith(`| ${split} |`));
      expect(row, `SPLITS.md has a row for ${split}`).toBeDefined();
      const published = /`([0-9a-f]{64})`/.exec(row!)?.[1];
      expect(published).toBe(splitSha256(set.tasks(split)));
      expect(row).toContain(`| ${set.tasks(split).length} |`);
    }
  });

  // Rebuilding from the shared source data must reproduce the shipped file byte for byte.
  it('is reproduced exactly by scripts/build-embedded-tasks.ts', async (context) => {
    if (NO_SHARED) context.skip(NO_SHARED);
    const out = mkdtempSync(join(tmpdir(), 'sleuth-embedded-'));
    await buildEmbeddedTasks(SHARED, out);
    expect(readFileSync(join(out, 'SPLITS.md'), 'utf8')).toBe(readFileSync(join('data', 'embedded', 'SPLITS.md'), 'utf8'));
    expect(readFileSync(join(out, 'tasks.jsonl.gz'))).toEqual(readFileSync(embeddedTasksPath()));
  });
});
