import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importsOf } from '../../scripts/architecture/imports.js';
import { checkLayers, layerViolations, parseLayerTable, rowOf } from '../../scripts/architecture/layers.js';

const ROOT = resolve('.');

/**
 * Upward imports the plan knows about and someone is fixing, each with why it is still here. An entry
 * that no longer occurs fails the test, so the list only shrinks.
 */
const KNOWN_UPWARD: readonly { from: string; to: string; why: string }[] = [];

/** Test folders that name no src/ folder, and why. */
const TEST_ONLY_FOLDERS: Readonly<Record<string, string>> = {
  'test/fixtures': 'data and helpers the tests share (corpora, qrels, task files, the Python SDK finder)',
  'test/architecture': 'checks docs/ARCHITECTURE.md against src/ and test/ (scripts/architecture/)',
  'test/attack': 'the adversarial-input suite of scripts/attack/, across every command',
  'test/bench': "tests of bench/ (the benchmarks' corpus generators and readers), which sits beside src/",
  'test/docs': 'checks README.md and docs/ against each other and the code (links, commands, lengths)',
  'test/search/fixtures': 'indexes in earlier formats, for the old-format error (test/search/index.test.ts)',
};

describe('the layer table of docs/ARCHITECTURE.md', () => {
  it('is read from the doc: base first, the CLI last, and every src/ file in one row', () => {
    const rows = parseLayerTable(readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8'));
    expect(rows[0]!.paths).toEqual(['src/errors.ts']);
    expect(rows.at(-1)!.paths).toEqual(['src/cli/']);
    expect(rowOf(rows, 'src/search/grep/regex.ts')?.path).toBe('src/search/');
    expect(rowOf(rows, 'src/nowhere.ts')).toBeUndefined();
  });

  it('holds for src/: no import runs up the stack, beyond the known ones', () => {
    const violations = checkLayers(ROOT);
    const known = (v: (typeof violations)[number]) => KNOWN_UPWARD.some((k) => k.from === v.edge.from && k.to === v.edge.to);
    expect(violations.filter((v) => !known(v)).map((v) => v.message)).toEqual([]);
    const stale = KNOWN_UPWARD.filter((k) => !violations.some((v) => v.edge.from === k.from && v.edge.to === k.to));
    expect(stale.map((k) => `${k.from} -> ${k.to} no longer runs up: remove it from KNOWN_UPWARD`)).toEqual([]);
  });
});

describe('the layer check', () => {
  const copies: string[] = [];
  afterAll(() => copies.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  /** A copy of the doc and of src/ to plant imports in: src/ itself is never written. */
  const copy = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'sleuth-layers-'));
    copies.push(dir);
    cpSync(join(ROOT, 'docs/ARCHITECTURE.md'), join(dir, 'docs/ARCHITECTURE.md'));
    cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
    return dir;
  };

  it('fails on a planted upward import, naming the file, the import and both layers', () => {
    const dir = copy();
    const before = checkLayers(dir).length;
    writeFileSync(join(dir, 'src/corpus/planted.ts'), "import type { Rollout } from '../agent/rollout.js';\nexport type Planted = Rollout;\n");
    const planted = checkLayers(dir).filter((v) => v.edge.from === 'src/corpus/planted.ts');
    expect(planted.map((v) => v.message)).toEqual([
      "src/corpus/planted.ts imports '../agent/rollout.js': src/corpus/ (layer data, row 4) imports from src/agent/ (layer episode, row 11), which is below it",
    ]);
    expect(checkLayers(dir).length).toBe(before + 1);
  });

  it('sees type-only, re-exported and dynamic imports, and a module path held in a constant', () => {
    const dir = copy();
    writeFileSync(join(dir, 'src/errors-planted.ts'), [
      "import type { Chunk } from './corpus/chunk.js';",
      "export { runEpisode } from './agent/episode.js';",
      "export const later = () => import('./train/grpo.js');",
      "const MODULE = './cli/main.js';",
      'export type Planted = Chunk | typeof MODULE;',
    ].join('\n'));
    expect(importsOf(dir, 'src/errors-planted.ts').map((e) => e.to)).toEqual(['src/corpus/chunk.ts', 'src/agent/episode.ts', 'src/train/grpo.ts', 'src/cli/main.ts']);
    // A file in no row of the table is named as such.
    expect(checkLayers(dir).filter((v) => v.edge.from === 'src/errors-planted.ts').map((v) => v.message)).toEqual(
      ['src/corpus/chunk.ts', 'src/agent/episode.ts', 'src/train/grpo.ts', 'src/cli/main.ts'].map((to, i) => `src/errors-planted.ts imports '${['./corpus/chunk.js', './agent/episode.js', './train/grpo.js', './cli/main.js'][i]}', but src/errors-planted.ts is in no row of the layer table`),
    );
  });

  it("fails on an import between two folders of one row, and reads the rows' order from the doc", () => {
    const rows = parseLayerTable('## Layers\n\n| layer | folder | owns |\n|---|---|---|\n| low | `src/a/` | a |\n| high | `src/b/`, `src/c/` | b and c |\n\n## Next\n');
    const edge = (from: string, toFile: string) => ({ from, specifier: `../${toFile.split('/')[1]}/x.js`, to: toFile });
    expect(layerViolations(rows, [edge('src/b/x.ts', 'src/a/x.ts')])).toEqual([]);
    expect(layerViolations(rows, [edge('src/a/x.ts', 'src/b/x.ts')]).map((v) => v.message)).toEqual([
      "src/a/x.ts imports '../b/x.js': src/a/ (layer low, row 1) imports from src/b/ (layer high, row 2), which is below it",
    ]);
    expect(layerViolations(rows, [edge('src/b/x.ts', 'src/c/x.ts')]).map((v) => v.message)).toEqual([
      "src/b/x.ts imports '../c/x.js': src/b/ (layer high, row 2) imports from its peer src/c/ (layer high, row 2) in the same row",
    ]);
    expect(() => parseLayerTable('# no layers here\n')).toThrow('docs/ARCHITECTURE.md: no "## Layers" section');
  });
});

describe('test/ mirrors src/', () => {
  it('every test folder names a src/ folder, or is listed with its reason', () => {
    const folders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const path = posix.join(dir, entry.name);
        folders.push(path);
        if (!(path in TEST_ONLY_FOLDERS)) walk(path);
      }
    };
    walk('test');
    const strays = folders.filter((f) => !(f in TEST_ONLY_FOLDERS) && !existsSync(join(ROOT, 'src', f.slice('test/'.length))));
    expect(strays.map((f) => `${f} names no folder src/${f.slice('test/'.length)}`)).toEqual([]);
    const stale = Object.keys(TEST_ONLY_FOLDERS).filter((f) => !existsSync(join(ROOT, f)));
    expect(stale.map((f) => `${f} is gone: remove it from TEST_ONLY_FOLDERS`)).toEqual([]);
  });
});
