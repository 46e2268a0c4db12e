import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

/** One import of one file: `import`, `import type`, `export ... from` or a dynamic `import()`. */
export interface ImportEdge {
  /** The importing file, relative to the root, with `/` separators (`src/eval/report.ts`). */
  readonly from: string;
  /** The specifier as written (`../text/width.js`). */
  readonly specifier: string;
  /** The imported file relative to the root (`src/text/width.ts`); packages and `node:` are left out. */
  readonly to: string;
}

const toPosix = (path: string) => path.split(sep).join(posix.sep);

/** Every `.ts` file under `dir` (relative to `root`), skipping the folders `skip` names by their path from the root. */
export function typescriptFiles(root: string, dir: string, skip: readonly string[] = []): string[] {
  const out: string[] = [];
  const walk = (relativeDir: string): void => {
    for (const entry of readdirSync(join(root, relativeDir), { withFileTypes: true })) {
      const path = posix.join(relativeDir, entry.name);
      if (skip.includes(path)) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
    }
  };
  walk(toPosix(dir));
  return out.sort();
}

/** A relative module path as sleuth writes one: `./x.js`, `../y/z.js`. */
const RELATIVE_MODULE = /^\.\.?\/.+\.js$/u;

/**
 * The relative imports of `file` (a path from `root`): every string literal that is a relative `.js`
 * module path. That is each `import`, `import type`, `export ... from`, `import('...')` (as a call or a
 * type), and also a path held in a constant first (`const TINKER_MODULE = '../backend/tinker/index.js'`)
 * or a worker's URL, which name a module as surely as an import does. A `.js` path names the `.ts` file
 * tsc compiles to it (NodeNext resolution).
 */
export function importsOf(root: string, file: string): ImportEdge[] {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, false);
  const specifiers = new Set<string>();
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && RELATIVE_MODULE.test(node.text)) specifiers.add(node.text);
    node.forEachChild(visit);
  };
  visit(source);
  return [...specifiers].map((specifier) => ({ from: file, specifier, to: toPosix(relative(root, join(root, dirname(file), specifier.replace(/\.js$/u, '.ts')))) }));
}

/** Every relative import of every `.ts` file under `dir`. */
export function importGraph(root: string, dir: string, skip: readonly string[] = []): ImportEdge[] {
  return typescriptFiles(root, dir, skip).flatMap((file) => importsOf(root, file));
}
