import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.js';
import { isSuiteKind } from './registry.js';

/**
 * `sleuth new-suite NAME`: a new suite is a copy of the template suite (src/suites/template/, a
 * complete small environment, and its test in test/suites/template/) under a new name, plus its
 * line in SUITES (src/suites/registry.ts), which the user adds: the scaffold writes only new folders.
 */

/** The kind of the template suite, which the copy renames in every spelling (template, Template, TEMPLATE). */
export const TEMPLATE_KIND = 'template';

const NAME = /^[a-z][a-z0-9]{1,30}$/u;

export interface Scaffold {
  /** The files written, relative to the root. */
  files: string[];
  /** What to add to src/suites/registry.ts: an import, and the suite in the SUITES list. */
  registryImport: string;
  suiteExport: string;
}

/** Copy the template suite to src/suites/NAME/ and test/suites/NAME/ under `root` (a checkout of sleuth). */
export function scaffoldSuite(root: string, name: string): Scaffold {
  if (!NAME.test(name)) throw new InputError(`NAME '${name}': a suite's name is a lowercase letter and 1 to 30 more lowercase letters or digits (runs record it, and code names identifiers after it)`);
  if (name === TEMPLATE_KIND || isSuiteKind(name)) throw new InputError(`NAME '${name}': a suite of that name exists already`);
  const sources = { src: join('src/suites', TEMPLATE_KIND), test: join('test/suites', TEMPLATE_KIND) };
  for (const dir of [sources.src, sources.test]) {
    if (!existsSync(join(root, dir))) throw new InputError(`--root ${root}: no ${dir}/ there (the root is a checkout of sleuth)`);
  }
  const targets = { src: join('src/suites', name), test: join('test/suites', name) };
  for (const dir of [targets.src, targets.test]) {
    if (existsSync(join(root, dir))) throw new InputError(`${join(root, dir)} exists: new-suite writes only folders that do not exist yet`);
  }
  const pascal = name[0]!.toUpperCase() + name.slice(1);
  const rename = (text: string) => text.replaceAll('TEMPLATE', name.toUpperCase()).replaceAll('Template', pascal).replaceAll(TEMPLATE_KIND, name);
  const files: string[] = [];
  for (const key of ['src', 'test'] as const) {
    mkdirSync(join(root, targets[key]), { recursive: true });
    for (const file of readdirSync(join(root, sources[key])).filter((f) => f.endsWith('.ts')).sort()) {
      const to = join(targets[key], rename(file));
      // 'wx': never overwrite a file (the folder was just made, so nothing is there to overwrite).
      writeFileSync(join(root, to), rename(readFileSync(join(root, sources[key], file), 'utf8')), { flag: 'wx' });
      files.push(to);
    }
  }
  return { files, registryImport: `import { ${name}Suite } from './${name}/suite.js';`, suiteExport: `${name}Suite` };
}
