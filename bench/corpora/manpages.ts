/**
 * The real-text corpus of the search benchmarks: the English manual pages installed on this
 * machine (the top-level manN directories of the man root, default /usr/share/man, not the
 * translations), read as text by troff.ts and cut into passages of about 150 words, the size of
 * wiki-18's passages. Queries are the pages' own one-line descriptions ("list directory contents"),
 * the text a person reads in `apropos`, each about one page.
 *
 * Skipped: pages that only point at another (.so), and generated families that would swamp the
 * rest (MAN_SKIPPED_FAMILIES: gcloud's 16,631 pages are one CLI's flag reference, 45% of the words).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Chunk } from '../../src/corpus/chunk.js';
import { rng } from '../synth.js';
import { readManPage, soTarget, type ManPage } from './troff.js';

export const DEFAULT_MAN_ROOT = '/usr/share/man';
/** Families (the name before the first '-', '_' or '.') of generated pages left out. */
export const MAN_SKIPPED_FAMILIES: readonly string[] = ['gcloud'];
/** Words a passage holds at most; passages break at paragraph ends where they can. */
export const PASSAGE_WORDS = 150;

/** Page files under root's manN directories, sorted, generated families left out. */
export function manPageFiles(root = DEFAULT_MAN_ROOT): string[] {
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new Error(`man pages: ${root} is not a directory (pass --man-root DIR, a directory holding man1, man2, ...)`);
  const files: string[] = [];
  for (const dir of readdirSync(root).filter((d) => /^man[0-9n]\w*$/.test(d)).sort()) {
    for (const f of readdirSync(join(root, dir)).sort()) {
      const family = f.split(/[-_.]/)[0]!;
      if (!MAN_SKIPPED_FAMILIES.includes(family)) files.push(join(root, dir, f));
    }
  }
  return files;
}

/** A page file's troff source (gunzipped when it ends .gz). */
export function readPageSource(file: string): string {
  const bytes = readFileSync(file);
  return (file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
}

/** The pages under root as text, in file order; aliases (.so pages) and pages with no text left out. */
export function* manPages(root = DEFAULT_MAN_ROOT): Generator<ManPage & { file: string }> {
  for (const file of manPageFiles(root)) {
    let source: string;
    try {
      source = readPageSource(file);
    } catch (err) {
      // A broken or non-gzip file in the man tree is not ours to fix: said and skipped.
      process.stderr.write(`man pages: skipping ${file}: ${(err as Error).message}\n`);
      continue;
    }
    if (soTarget(source) !== undefined) continue;
    const page = readManPage(source);
    if (page.sections.every((s) => s.paragraphs.length === 0)) continue;
    if (!page.name) page.name = file.replace(/^.*\//, '').replace(/\.gz$/, '').replace(/\.[^.]*$/, '');
    yield { ...page, file };
  }
}

/**
 * A page's passages: its sections' headings and paragraphs in order, cut before the paragraph that
 * would take a passage past PASSAGE_WORDS words (a longer paragraph is cut by words). Each passage's
 * title is the page and the heading it starts under ("ls(1) DESCRIPTION").
 */
export function pagePassages(page: ManPage, idBase: string): Chunk[] {
  const out: Chunk[] = [];
  const label = page.section ? `${page.name}(${page.section})` : page.name;
  let words: string[] = [];
  let heading = '';
  const flush = () => {
    if (words.length) out.push({ id: `${idBase}#${out.length}`, title: heading ? `${label} ${heading}` : label, text: words.join(' ') });
    words = [];
  };
  for (const s of page.sections) {
    const blocks = [s.heading, ...s.paragraphs].filter(Boolean);
    for (let b = 0; b < blocks.length; b++) {
      const w = blocks[b]!.split(' ');
      if (words.length + w.length > PASSAGE_WORDS) flush();
      if (words.length === 0) heading = s.heading;
      for (let i = 0; i < w.length; i += PASSAGE_WORDS) {
        if (i > 0) flush();
        if (words.length === 0) heading = s.heading;
        words.push(...w.slice(i, i + PASSAGE_WORDS));
      }
    }
  }
  flush();
  return out;
}

/** Every page's passages, in file order; ids are "name.section#k", made unique across files. */
export function* manPassages(root = DEFAULT_MAN_ROOT): Generator<Chunk> {
  const seen = new Set<string>();
  for (const page of manPages(root)) {
    let base = `${page.name}.${page.section || 'x'}`;
    for (let k = 2; seen.has(base); k++) base = `${page.name}.${page.section || 'x'}~${k}`;
    seen.add(base);
    yield* pagePassages(page, base);
  }
}

/** Queries of the man-page corpus, at most. */
export const MAN_QUERIES = 1000;

/**
 * Up to MAN_QUERIES page descriptions with 2 or more searchable words (`searchable` counts them),
 * distinct, in an order shuffled by the seed: the man-page corpus's queries.
 */
export function manQueries(root: string, searchable: (text: string) => number, seed = 1): string[] {
  const all = new Set<string>();
  for (const page of manPages(root)) {
    const d = page.description.replace(/\s+/g, ' ').trim();
    if (d && searchable(d) >= 2) all.add(d);
  }
  const list = [...all];
  const r = rng(seed ^ 0x3a11);
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
  return list.slice(0, MAN_QUERIES);
}
