import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The README is the user's manual (issue #36): short, with the two quickstart commands, linking every
 * page under docs/; the pages hold the full reference. These tests keep it that way as the pages change.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
const MAX_README_LINES = 400;

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** The lines of a Markdown file outside fenced code blocks (a `#` in a shell block is no heading). */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line);
    if (opening) {
      if (fence === null) fence = opening[1]!;
      else if (opening[1]!.startsWith(fence)) fence = null;
      continue;
    }
    if (fence === null) lines.push(line);
  }
  return lines;
}

/** GitHub's anchor for a heading: its text as rendered, lower-cased, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  const rendered = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
  return rendered.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a file's headings give, numbered as GitHub numbers repeated headings (-1, -2, ...). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link { from: string; target: string; line: number }

/** Inline links and images outside code: `[text](target)`, with any `"title"` after the target dropped. */
function links(file: string): Link[] {
  const out: Link[] = [];
  let fence: string | null = null;
  readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line);
    if (opening) {
      if (fence === null) fence = opening[1]!;
      else if (opening[1]!.startsWith(fence)) fence = null;
      return;
    }
    if (fence !== null) return;
    const withoutCode = line.replace(/`[^`]*`/g, '');
    for (const m of withoutCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ from: file, target: m[1]!, line: i + 1 });
  });
  return out;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** The file a relative link points at (null for an in-page anchor), and its anchor. */
function resolveLink(link: Link): { file: string; anchor: string | null } {
  const [path, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? link.from : resolve(dirname(link.from), decodeURIComponent(path));
  return { file, anchor: anchor === undefined ? null : decodeURIComponent(anchor) };
}

const readme = readFileSync(README, 'utf8');
const docsPages = markdownFiles(DOCS);
const rel = (path: string): string => relative(ROOT, path);

describe('the README is the user manual', () => {
  it(`is at most ${MAX_README_LINES} lines`, () => {
    const lines = readme.endsWith('\n') ? readme.split('\n').length - 1 : readme.split('\n').length;
    expect(lines).toBeLessThanOrEqual(MAX_README_LINES);
  });

  it('gives exactly the two quickstart commands: npm ci && npm start, and npm test', () => {
    const section = /^## Quickstart\n([\s\S]*?)(?=^## )/m.exec(readme);
    expect(section, 'the README has a "## Quickstart" section').not.toBeNull();
    const block = /^```\w*\n([\s\S]*?)^```/m.exec(section![1]!);
    expect(block, 'the Quickstart section opens with a code block').not.toBeNull();
    const commands = block![1]!.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter((line) => line !== '');
    expect(commands).toEqual(['npm ci && npm start', 'npm test']);
  });

  it('says where sleuth demo writes by default, as the command does, and counts no tests that will change', () => {
    const demoHelp = spawnSync(process.execPath, [join(ROOT, 'bin', 'sleuth.js'), 'demo', '--help'], { encoding: 'utf8' }).stdout;
    expect(demoHelp).toContain('(default runs/demo-TIMESTAMP)');
    expect(readme).toContain('`runs/demo-TIMESTAMP`');
    const commands = readFileSync(join(DOCS, 'commands.md'), 'utf8');
    expect(commands).not.toMatch(/run directory: runs\/demo\n|local:runs\/demo\//);
    // A count of the suite's tests is wrong by the next commit.
    for (const page of [README, ...docsPages]) expect(readFileSync(page, 'utf8'), rel(page)).not.toMatch(/\b\d+ test files\b|\b\d+ tests (passed|and)\b|\b\d+ files passed/);
  });

  it('links every page under docs/ directly', () => {
    const linked = new Set(links(README).filter((l) => !isExternal(l.target)).map((l) => resolveLink(l).file));
    const missing = docsPages.filter((page) => !linked.has(page)).map(rel);
    expect(missing, 'docs pages the README does not link').toEqual([]);
  });

  it('reaches every page under docs/ by following links from the README', () => {
    const reached = new Set<string>([README]);
    const queue = [README];
    while (queue.length > 0) {
      const page = queue.shift()!;
      for (const link of links(page)) {
        if (isExternal(link.target)) continue;
        const { file } = resolveLink(link);
        if (file.endsWith('.md') && existsSync(file) && !reached.has(file)) {
          reached.add(file);
          queue.push(file);
        }
      }
    }
    const unreached = docsPages.filter((page) => !reached.has(page)).map(rel);
    expect(unreached, 'docs pages no chain of links from the README reaches').toEqual([]);
  });

  it('resolves every relative link and #anchor in the README and the docs pages', () => {
    const anchorsOf = new Map<string, Set<string>>();
    const broken: string[] = [];
    for (const page of [README, ...docsPages]) {
      for (const link of links(page)) {
        if (isExternal(link.target)) continue;
        const { file, anchor } = resolveLink(link);
        const where = `${rel(page)}:${link.line}: ${link.target}`;
        if (!existsSync(file)) {
          broken.push(`${where} (no file ${rel(file)})`);
          continue;
        }
        if (anchor === null || anchor === '') continue;
        if (!file.endsWith('.md')) {
          broken.push(`${where} (an anchor into a file that is not Markdown)`);
          continue;
        }
        if (!anchorsOf.has(file)) anchorsOf.set(file, anchors(readFileSync(file, 'utf8')));
        if (!anchorsOf.get(file)!.has(anchor)) broken.push(`${where} (no heading gives #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names only repository files that exist when it names a source, test, script, bench or config file', () => {
    // Backticked repository paths such as `src/search/bm25.ts`; folders and globs are left alone.
    const pathLike = /`((?:src|test|scripts|bench|configs|bin|data)\/[\w./-]*\.\w+)`/g;
    const missing: string[] = [];
    for (const page of [README, ...markdownFiles(DOCS).filter((p) => dirname(p) === DOCS)]) {
      for (const line of proseLines(readFileSync(page, 'utf8'))) {
        for (const m of line.matchAll(pathLike)) if (!existsSync(join(ROOT, m[1]!))) missing.push(`${rel(page)}: ${m[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('the manual checks its own rules', () => {
  it('slugs headings as GitHub does: code spans, colons and pipes dropped, each space a hyphen', () => {
    expect(slug('Task sets: `tasks list | show | subset | import`')).toBe('task-sets-tasks-list--show--subset--import');
    expect(slug('Where searching pays: learning on MuSiQue (`bench:learn`, `demo --tasks musique`)')).toBe('where-searching-pays-learning-on-musique-benchlearn-demo---tasks-musique');
    expect(slug('How a million chunks are indexed in 24 s')).toBe('how-a-million-chunks-are-indexed-in-24-s');
    expect([...anchors('# A\n## A\n```sh\n# not a heading\n```\n## B\n')]).toEqual(['a', 'a-1', 'b']);
  });

  it('finds links outside code only, with their targets and anchors', () => {
    const text = 'See [x](docs/a.md#b) and `[y](no.md)`.\n```\n[z](code.md)\n```\n![img](docs/img/p.svg "title")\n';
    const found = links(writeTemp(text)).map((l) => l.target);
    expect(found).toEqual(['docs/a.md#b', 'docs/img/p.svg']);
  });
});

function writeTemp(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'sleuth-manual-')), 'page.md');
  writeFileSync(path, text);
  return path;
}
