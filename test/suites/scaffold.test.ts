import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scaffoldSuite } from '../../src/suites/scaffold.js';

const ROOT = resolve(import.meta.dirname, '../..');
const sleuth = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin/sleuth.js'), ...args], { encoding: 'utf8' });

const temps: string[] = [];
afterAll(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'sleuth-new-suite-'));
  temps.push(dir);
  return dir;
};

/** A copy of the checkout's src/ and of the template's test, with the real node_modules: src/ itself is never written. */
function checkoutCopy(): string {
  const dir = tempDir();
  cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true, filter: (from) => !from.includes(join('src', 'backend', 'local', 'assets')) });
  cpSync(join(ROOT, 'test/suites/template'), join(dir, 'test/suites/template'), { recursive: true });
  for (const file of ['package.json', 'tsconfig.json']) cpSync(join(ROOT, file), join(dir, file));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

describe('sleuth new-suite', () => {
  it('makes a suite that passes its own test, and the registry line makes it an environment', () => {
    const dir = checkoutCopy();
    const made = sleuth('new-suite', '--root', dir, 'capitals');
    expect(made.stderr).toBe('');
    expect(made.status).toBe(0);
    expect(made.stdout).toContain("import { capitalsSuite } from './capitals/suite.js';");
    for (const file of ['agents.ts', 'env.ts', 'reward.ts', 'suite.ts', 'tasks.ts', 'tools.ts']) expect(existsSync(join(dir, 'src/suites/capitals', file)), file).toBe(true);
    expect(readFileSync(join(dir, 'src/suites/capitals/suite.ts'), 'utf8')).not.toMatch(/template/iu);

    // The one registry line: the import, and the suite in SUITES.
    const registry = join(dir, 'src/suites/registry.ts');
    const text = readFileSync(registry, 'utf8');
    expect(text).toContain('[searchSuite, qaSuite, invoiceSuite]');
    writeFileSync(registry, text.replace("import { searchSuite } from './search/suite.js';", "$&\nimport { capitalsSuite } from './capitals/suite.js';").replace('[searchSuite, qaSuite, invoiceSuite]', '[searchSuite, qaSuite, invoiceSuite, capitalsSuite]'));
    writeFileSync(
      join(dir, 'test/registered.test.ts'),
      `import { expect, it } from 'vitest';
import { defaultRubric, resolveSuiteAgent, suiteKindList, suiteOf } from '../src/suites/registry.js';
import { runScoredEpisode } from '../src/suites/scored-episode.js';
it('is an environment: named, opened, its oracle run and scored through the registry', async () => {
  expect(suiteKindList()).toBe('search, qa, invoices or capitals');
  const opened = await suiteOf('capitals').open();
  const { env, close } = await opened.environment();
  const task = opened.tasks('eval')[0]!;
  const rollout = await runScoredEpisode(await resolveSuiteAgent(opened, 'oracle', new Map()), env, task, env.defaultBudgets, defaultRubric('capitals'));
  await close();
  expect(rollout.env).toBe('capitals');
  expect(rollout.reward?.total).toBe(1);
});
`,
    );
    const tests = spawnSync(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', 'test/suites/capitals', 'test/registered.test.ts'], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    // The generated suite's three tests and the registry's one.
    expect(tests.stdout + tests.stderr).toMatch(/Tests\s+4 passed \(4\)/u);
    expect(tests.status).toBe(0);
  });

  it('names what is wrong (exit 2) and writes nothing over what is there', () => {
    const bad = sleuth('new-suite', 'Capitals');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("NAME 'Capitals': a suite's name is a lowercase letter");
    expect(() => scaffoldSuite(ROOT, 'search')).toThrow("NAME 'search': a suite of that name exists already");
    const empty = tempDir();
    expect(() => scaffoldSuite(empty, 'capitals')).toThrow(`--root ${empty}: no src/suites/template/ there`);
    const dir = tempDir();
    cpSync(join(ROOT, 'src/suites/template'), join(dir, 'src/suites/template'), { recursive: true });
    cpSync(join(ROOT, 'test/suites/template'), join(dir, 'test/suites/template'), { recursive: true });
    cpSync(join(ROOT, 'test/suites/template'), join(dir, 'test/suites/capitals'), { recursive: true });
    expect(() => scaffoldSuite(dir, 'capitals')).toThrow(`${join(dir, 'test/suites/capitals')} exists`);
    expect(existsSync(join(dir, 'src/suites/capitals'))).toBe(false);
  });
});
