import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DamagedIndexError, InputError } from '../errors.js';
import { checksumOf } from '../files/checksum.js';
import { Analyzer } from './analyzer.js';
import { BLOCK, blockOffsets, blockWidths, MAX_POSTING_TF } from './block-postings.js';
import { blockSums, BLOCK_BYTES, fileBlockSums, fileChecksums, IndexSums, SUMS_FILE, summedFiles } from './checksums.js';
import { indexKind, readManifest, readSegmentsManifest, readWhole, type Manifest } from './format.js';
import { openIndex } from './open.js';

/** One thing wrong with an index: the file, where (a byte offset, when there is one), and what. */
export interface IndexProblem {
  file: string;
  offset?: number;
  problem: string;
}

export interface VerifyReport {
  dir: string;
  /** Whether the index has checksums (one built before them can only have its structure checked). */
  checksums: boolean;
  files: number;
  bytes: number;
  seconds: number;
  problems: IndexProblem[];
}

/**
 * One postings block in this many has its score bound checked exactly against every posting's
 * document norm; the others against the bounds that hold without them (see checkStructure).
 */
const EXACT_BOUND_EVERY = 4;

/** Documents whose lengths are checked against their texts, re-analysed (spread over the index). */
const SAMPLED_TEXTS = 1000;

/**
 * Check an index in full, as Lucene's CheckIndex does: the manifest's seal, every block of every
 * file against its checksum, and the cross-references (offsets against the files they index, ids
 * in order, the vocabulary sorted, every postings block decoded against the term table, its block
 * metadata and the document lengths, and a sample of texts re-analysed against their lengths).
 * Never throws for damage: every problem is reported with its file and offset (an InputError when
 * there is no index at dir).
 */
export async function verifyIndex(dir: string): Promise<VerifyReport> {
  const started = performance.now();
  const report: VerifyReport = { dir, checksums: true, files: 0, bytes: 0, seconds: 0, problems: [] };
  // Nothing there is the caller's mistake, not damage.
  if (!existsSync(join(dir, 'manifest.json'))) throw new InputError(`no search index at ${dir} (missing manifest.json): run \`sleuth index\` first`);
  let kind: 'index' | 'segments';
  try {
    kind = indexKind(dir);
  } catch (err) {
    return finish(report, started, [problemOf(err, 'manifest.json')]);
  }
  if (kind === 'index') {
    await verifyOne(dir, '', report);
  } else {
    try {
      const sm = readSegmentsManifest(dir);
      if (sm.checksum === undefined) report.checksums = false;
      for (const s of sm.segments) await verifyOne(join(dir, s.dir), `${s.dir}/`, report);
    } catch (err) {
      report.problems.push(problemOf(err, 'manifest.json'));
    }
  }
  return finish(report, started, []);
}

function finish(report: VerifyReport, started: number, problems: IndexProblem[]): VerifyReport {
  report.problems.push(...problems);
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

/** A thrown error as a problem of `file` (a DamagedIndexError names its own). */
function problemOf(err: unknown, file: string): IndexProblem {
  if (err instanceof DamagedIndexError) return { file: err.file, problem: err.what };
  if (err instanceof InputError) return { file, problem: err.message };
  throw err;
}

async function verifyOne(dir: string, prefix: string, report: VerifyReport): Promise<void> {
  const problems: IndexProblem[] = [];
  const add = (file: string, problem: string, offset?: number) => problems.push({ file: prefix + file, problem, ...(offset !== undefined ? { offset } : {}) });
  try {
    let m: Manifest;
    try {
      m = readManifest(dir, true);
    } catch (err) {
      const p = problemOf(err, 'manifest.json');
      return void add(p.file, p.problem);
    }
    // Files that are missing or of the wrong size: nothing else about them can be trusted.
    const bad = new Set<string>();
    for (const [name, size] of Object.entries(m.files)) {
      const path = join(dir, name);
      const actual = existsSync(path) ? statSync(path).size : -1;
      if (actual === size) continue;
      bad.add(name);
      add(name, actual < 0 ? 'missing' : `is ${actual} bytes, the manifest says ${size}`);
    }
    report.files += Object.keys(m.files).length;
    report.bytes += Object.values(m.files).reduce((s, n) => s + n, 0);
    // The files the structure is checked on, kept from the checksum pass: each file is read once.
    const held = new Map<string, Uint8Array>();
    if (m.checksums === undefined) report.checksums = false;
    else if (!bad.has(SUMS_FILE)) checkBlocks(dir, m, bad, held, add);
    // The structure, over the files whose bytes are what was written.
    if (!STRUCTURE_FILES.some((f) => bad.has(f))) {
      checkStructure(dir, m, (name) => held.get(name) ?? readWhole(join(dir, name), m.files[name]), add);
      if (problems.length === 0) await checkTexts(dir, m, add);
    }
  } finally {
    report.problems.push(...problems);
  }
}

/** The files checkStructure reads (texts and the grep prefilter are only summed). */
const STRUCTURE_FILES = ['text.off', 'ids.off', 'ids.bin', 'ids.order', 'titles.off', 'titles.bin', 'meta.off', 'meta.bin', 'doclen', 'terms.bin', 'terms.off', 'post.off', 'post.data', 'block.at', 'block.last', 'block.max', 'term.maxtf'];

/**
 * Every block of every file against SUMS_FILE (itself checked whole first); damaged files go into
 * `bad`, and the STRUCTURE_FILES read into `held`.
 */
function checkBlocks(dir: string, m: Manifest, bad: Set<string>, held: Map<string, Uint8Array>, add: (file: string, problem: string, offset?: number) => void): void {
  const table = readWhole(join(dir, SUMS_FILE), m.files[SUMS_FILE]);
  const sum = checksumOf(table);
  if (sum !== m.checksums!.sum) {
    bad.add(SUMS_FILE);
    return add(SUMS_FILE, `it has checksum ${sum}, the manifest records ${m.checksums!.sum}: no file's blocks can be checked`);
  }
  let sums: IndexSums;
  try {
    sums = new IndexSums(dir, m.files, new Uint32Array(table.buffer, table.byteOffset, table.byteLength / 4));
  } catch (err) {
    bad.add(SUMS_FILE);
    return add(SUMS_FILE, problemOf(err, SUMS_FILE).problem);
  }
  // The manifest's one checksum per file against the blocks' checksums it sums.
  const perFile = m.checksums!.files ? fileChecksums(m.files, new Uint32Array(table.buffer, table.byteOffset, table.byteLength / 4)) : undefined;
  for (const [name, sum] of Object.entries(perFile ?? {})) {
    if (m.checksums!.files![name] !== sum) add(SUMS_FILE, `${name}'s block checksums sum to ${sum}, the manifest records ${m.checksums!.files![name] ?? 'none'}`);
  }
  for (const name of summedFiles(m.files)) {
    if (bad.has(name)) continue;
    const expected = sums.of(name).sums;
    let actual: Uint32Array;
    if (STRUCTURE_FILES.includes(name)) {
      const bytes = readWhole(join(dir, name), m.files[name]);
      held.set(name, bytes);
      actual = blockSums(bytes);
    } else {
      actual = fileBlockSums(join(dir, name), m.files[name]!);
    }
    // Runs of damaged blocks, reported as one byte range each.
    for (let b = 0; b < expected.length; b++) {
      if (actual[b] === expected[b]) continue;
      let end = b + 1;
      while (end < expected.length && actual[end] !== expected[end]) end++;
      bad.add(name);
      add(name, `bytes ${b * BLOCK_BYTES}..${Math.min(m.files[name]!, end * BLOCK_BYTES)} do not match their checksums`, b * BLOCK_BYTES);
      b = end;
    }
  }
}

/** Offsets, orders and postings against one another (the files' bytes already checked; `bytes` reads one). */
function checkStructure(dir: string, m: Manifest, bytes: (name: string) => Uint8Array, add: (file: string, problem: string, offset?: number) => void): void {
  const { docs: N, terms: T, postings: P, tokens } = m.counts;
  const u32 = (name: string) => {
    const b = bytes(name);
    return new Uint32Array(b.buffer, b.byteOffset, b.byteLength >>> 2);
  };
  const length = (name: string, arr: { length: number }, want: number) => {
    if (arr.length === want) return true;
    add(name, `holds ${arr.length} entries, the manifest's counts make ${want}`);
    return false;
  };
  /** offsets[] ascending from 0 to the size of `data` (its entries' ends). */
  const offsets = (name: string, off: ArrayLike<number>, data: string | number) => {
    const end = typeof data === 'number' ? data : m.files[data]!;
    if (off[0] !== 0) add(name, `starts at ${off[0]}, not 0`, 0);
    for (let i = 1; i < off.length; i++) {
      if (off[i]! < off[i - 1]!) return add(name, `entry ${i} (${off[i]}) is before entry ${i - 1} (${off[i - 1]})`, i * (name === 'text.off' ? 8 : 4));
    }
    if (off[off.length - 1] !== end) add(name, `ends at ${off[off.length - 1]}, ${typeof data === 'number' ? 'the texts hold' : `${data} is`} ${end} bytes`);
  };

  const textOffBytes = bytes('text.off');
  const textOff = new Float64Array(textOffBytes.buffer, textOffBytes.byteOffset, textOffBytes.byteLength >>> 3);
  if (length('text.off', textOff, N + 1)) {
    offsets('text.off', textOff, m.textShards.reduce((s, sh) => s + sh.bytes, 0));
    for (const s of m.textShards) if (textOff[s.firstDoc] !== s.start) add('text.off', `document ${s.firstDoc} starts at ${textOff[s.firstDoc]}, shard ${s.file} at ${s.start}`);
  }
  for (const [off, data] of [['ids.off', 'ids.bin'], ['titles.off', 'titles.bin'], ['meta.off', 'meta.bin']] as const) {
    const o = u32(off);
    if (length(off, o, N + 1)) offsets(off, o, data);
  }
  const idOff = u32('ids.off');
  const ids = bytes('ids.bin');
  const order = u32('ids.order');
  if (length('ids.order', order, N)) {
    const seen = new Uint8Array(N);
    for (let r = 0; r < N; r++) {
      const d = order[r]!;
      if (d >= N || seen[d]) return add('ids.order', `rank ${r} holds document ${d}, ${d >= N ? 'out of range' : 'twice'}`, r * 4);
      seen[d] = 1;
      if (r > 0 && compareBytes(ids, idOff[order[r - 1]!]!, idOff[order[r - 1]! + 1]!, idOff[d]!, idOff[d + 1]!) >= 0) {
        return add('ids.order', `the ids at ranks ${r - 1} and ${r} are not in ascending order`, r * 4);
      }
    }
  }
  const termOff = u32('terms.off');
  const termBytes = bytes('terms.bin');
  if (length('terms.off', termOff, T + 1)) {
    offsets('terms.off', termOff, 'terms.bin');
    for (let t = 1; t < T; t++) {
      if (compareBytes(termBytes, termOff[t - 1]!, termOff[t]!, termOff[t]!, termOff[t + 1]!) >= 0) return add('terms.bin', `terms ${t - 1} and ${t} are not in ascending order`, termOff[t]);
    }
  }
  const postOff = u32('post.off');
  if (!length('post.off', postOff, T + 1)) return;
  if (postOff[T] !== P) return add('post.off', `ends at ${postOff[T]} postings, the manifest says ${P}`);
  for (let t = 0; t < T; t++) if (postOff[t + 1]! <= postOff[t]!) return add('post.off', `term ${t} has no postings (or a negative count)`, (t + 1) * 4);
  const blockOff = blockOffsets(postOff);
  const B = blockOff[T]!;
  const blockAt = u32('block.at');
  const blockLast = u32('block.last');
  const maxBytes = bytes('block.max');
  const blockMax = new Float32Array(maxBytes.buffer, maxBytes.byteOffset, maxBytes.byteLength >>> 2);
  const maxTfBytes = bytes('term.maxtf');
  const termMax = new Float64Array(maxTfBytes.buffer, maxTfBytes.byteOffset, maxTfBytes.byteLength >>> 3);
  const doclen = u32('doclen');
  if (!length('block.at', blockAt, B + 1) || !length('block.last', blockLast, B) || !length('block.max', blockMax, B) || !length('term.maxtf', termMax, T) || !length('doclen', doclen, N)) return;
  const words = u32('post.data');
  offsets('block.at', blockAt, words.length);
  let sumLen = 0;
  for (let d = 0; d < N; d++) sumLen += doclen[d]!;
  if (sumLen !== tokens) add('doclen', `the lengths add up to ${sumLen} terms, the manifest says ${tokens}`);
  // Every block decoded (block-postings.ts's layout, read through byte, half-word and word views:
  // decodeBlock's general loop was most of this pass): documents in range, the last one and the
  // score bound as recorded. Documents ascend by construction (each is the last plus a gap plus one).
  const u8 = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  const u16 = new Uint16Array(words.buffer, words.byteOffset, words.byteLength >>> 1);
  const valueAt = (width: number, wordAt: number, i: number) => (width === 8 ? u8[wordAt * 4 + i]! : width === 16 ? u16[wordAt * 2 + i]! : width === 32 ? words[wordAt + i]! : 0);
  // Each document's BM25 length norm, as the builder computed it for the bounds. It is read at
  // random, posting after posting, and a miss of the cache is most of this pass's time at 2.1M
  // chunks, so it is in f32 (the bounds are checked to a relative 1e-6, far above f32's rounding of a
  // norm) and alone: a per-document sum of term frequencies beside it doubled the array past what
  // the cache holds (measured: 400-460 MB/s against 650), so the sums are checked in total instead.
  const norms = new Float32Array(N);
  for (let d = 0; d < N; d++) norms[d] = m.bm25.k1 * (1 - m.bm25.b + (m.bm25.b * doclen[d]!) / m.avgdl);
  let normMax = 0;
  for (let d = 0; d < N; d++) if (norms[d]! > normMax) normMax = norms[d]!;
  let tfTotal = 0;
  let saturated = false;
  for (let t = 0; t < T; t++) {
    let left = postOff[t + 1]! - postOff[t]!;
    let prev = -1;
    let termBound = 0;
    for (let k = blockOff[t]!; k < blockOff[t + 1]!; k++) {
      const n = Math.min(BLOCK, left);
      left -= n;
      const at = blockAt[k]!;
      const widths = blockWidths(words[at]!);
      if (!widths) return add('post.data', `term ${t}'s block ${k - blockOff[t]!} has a header no block has (${words[at]!.toString(16)})`, at * 4);
      const [docWidth, tfWidth] = widths;
      const gapsAt = at + 1;
      const tfsAt = gapsAt + Math.ceil((n * docWidth) / 32);
      if (tfsAt + Math.ceil((n * tfWidth) / 32) > blockAt[k + 1]!) return add('block.at', `block ${k} runs past the next block's start (word ${blockAt[k + 1]})`, (k + 1) * 4);
      // Every EXACT_BOUND_EVERY-th block's bound is checked exactly, from each posting's norm (read
      // at random: most of this pass's time); every block's against what holds without the norms.
      const exact = k % EXACT_BOUND_EVERY === 0;
      let bound = 0;
      let tfMax = 0;
      let d = prev;
      for (let i = 0; i < n; i++) {
        d = d + 1 + valueAt(docWidth, gapsAt, i);
        if (d >= N) return add('post.data', `term ${t}'s block ${k - blockOff[t]!} holds document ${d} (there are ${N})`, at * 4);
        const tf = valueAt(tfWidth, tfsAt, i) + 1;
        tfTotal += tf;
        if (tf > tfMax) tfMax = tf;
        if (exact) {
          const part = tf / (tf + norms[d]!);
          if (part > bound) bound = part;
        }
      }
      if (tfMax === MAX_POSTING_TF) saturated = true;
      if (blockLast[k] !== d) return add('block.last', `block ${k} ends at document ${d}, block.last says ${blockLast[k]}`, k * 4);
      // Its largest tf's part is at least tfMax / (tfMax + the longest document's norm).
      const least = exact ? bound : tfMax / (tfMax + normMax);
      if (blockMax[k]! < Math.fround(least) * (1 - 1e-6)) return add('block.max', `block ${k}'s bound ${blockMax[k]} is under its largest score part ${least}`, k * 4);
      // And a block's bound is no more than its term's (f32, rounded up from it).
      if (blockMax[k]! > termMax[t]! * (1 + 1e-6)) return add('block.max', `block ${k}'s bound ${blockMax[k]} is over its term's ${termMax[t]}`, k * 4);
      termBound = Math.max(termBound, bound);
      prev = d;
    }
    if (termMax[t]! < termBound * (1 - 1e-6)) return add('term.maxtf', `term ${t}'s bound ${termMax[t]} is under its largest score part ${termBound}`, t * 8);
  }
  // The postings' term frequencies add up to the documents' lengths (less where a tf saturated at 65535).
  if (saturated ? tfTotal > tokens : tfTotal !== tokens) add('post.data', `its term frequencies add up to ${tfTotal}, the documents' lengths to ${tokens}`);
}

/** A spread sample of documents: their titles and texts re-analysed give the lengths recorded. */
async function checkTexts(dir: string, m: Manifest, add: (file: string, problem: string, offset?: number) => void): Promise<void> {
  const N = m.counts.docs;
  const index = await openIndex(dir, { scoringKernel: false });
  try {
    const analyzer = new Analyzer(m.analyzer);
    const doclen = readWhole(join(dir, 'doclen'), m.files['doclen']);
    const lens = new Uint32Array(doclen.buffer, doclen.byteOffset, N);
    const step = Math.max(1, Math.floor(N / SAMPLED_TEXTS));
    for (let d = 0; d < N; d += step) {
      const n = analyzer.terms(index.store.title(d)).length + analyzer.terms(index.store.text(d)).length;
      if (n !== lens[d]) return add('doclen', `document ${d} (${index.store.id(d)}) has ${n} terms in its title and text, doclen says ${lens[d]}`, d * 4);
    }
  } catch (err) {
    // Texts that cannot be read are damage too (an index without checksums gets as far as the
    // decoder): a problem to report, not a crash of the check.
    const p = err instanceof DamagedIndexError || err instanceof InputError ? problemOf(err, 'texts') : { file: 'texts', problem: `a text cannot be read: ${(err as Error).message}` };
    add(p.file, p.problem);
  } finally {
    index.close();
  }
}

/** Byte-wise order of a[aFrom..aTo) and a[bFrom..bTo) (UTF-8 byte order is code point order). */
function compareBytes(a: Uint8Array, aFrom: number, aTo: number, bFrom: number, bTo: number): number {
  const n = Math.min(aTo - aFrom, bTo - bFrom);
  for (let i = 0; i < n; i++) {
    const d = a[aFrom + i]! - a[bFrom + i]!;
    if (d !== 0) return d;
  }
  return aTo - aFrom - (bTo - bFrom);
}
