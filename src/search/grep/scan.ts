import RE2 from 're2';
import { InputError } from '../../errors.js';
import type { ChunkStore, GrepHit, GrepOptions, GrepResult } from '../types.js';
import { DEFAULT_BLOCK_SIZE, popcount } from './builder.js';
import { requiredLiterals, type Query } from './literals.js';
import { parsePythonRegex, type Node } from './parse.js';
import { translateParsed } from './translate.js';
import type { DocSet, GrepIndex } from './word-index.js';

/** The part of node-re2 used here, on UTF-8 bytes (offsets are then byte offsets). */
interface RE2Type {
  test(bytes: Buffer): boolean;
  exec(bytes: Buffer): { index: number; 0: Buffer } | null;
}

export const DEFAULT_K = 10;
export const DEFAULT_TIME_LIMIT_MS = 1000;
export const DEFAULT_SNIPPET_CHARS = 200;

/** A pattern ready to run: its RE2 program, its prefilter query, and whether block-level scans are safe. */
export interface CompiledPattern {
  pattern: string;
  re: RE2Type;
  query: Query;
  /**
   * True when the pattern has no anchors or word-boundary assertions. Then a chunk's match is a match
   * of the same bytes wherever they sit, so one RE2 call over a block's contiguous bytes can rule out
   * the whole block (a hit there is still confirmed chunk by chunk).
   */
  contextFree: boolean;
}

const cache = new Map<string, CompiledPattern>();
const CACHE_SIZE = 256;

/** Parse, translate and compile a Python pattern (InputError if it is invalid or unsupported). */
export function compilePattern(pattern: string): CompiledPattern {
  const hit = cache.get(pattern);
  if (hit) {
    cache.delete(pattern);
    cache.set(pattern, hit);
    return hit;
  }
  const parsed = parsePythonRegex(pattern);
  const { source, flags } = translateParsed(parsed);
  let re: RE2Type;
  try {
    re = new RE2(source, flags) as unknown as RE2Type;
  } catch (err) {
    throw new InputError(`invalid regex '${pattern}': ${(err as Error).message}`);
  }
  const compiled: CompiledPattern = { pattern, re, query: requiredLiterals(parsed), contextFree: !hasAssertion(parsed.root) };
  cache.set(pattern, compiled);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return compiled;
}

function hasAssertion(node: Node): boolean {
  switch (node.type) {
    case 'assert':
      return true;
    case 'concat':
      return node.parts.some(hasAssertion);
    case 'alt':
      return node.alts.some(hasAssertion);
    case 'repeat':
    case 'group':
    case 'flagged':
      return hasAssertion(node.sub);
    default:
      return false;
  }
}

/**
 * One regex test of a whole block pays only when most of its chunks are in play: the index names
 * candidate chunks, not just blocks, so a few candidates are cheaper tested one by one (measured on
 * 1M synthetic chunks, (?i) phrases: CPU per grep 3.05 ms with a block test from 9 candidates of 64,
 * 2.57 ms with none). Patterns without a usable literal still test whole blocks.
 */
const blockTestWorthIt = (inPlay: number, blockSize: number) => inPlay * 2 > blockSize;

/** The set bits of a bitmap below `size`, ascending (zero words are skipped a word at a time). */
function setBits(set: Uint32Array, size: number): Uint32Array {
  let n = 0;
  for (let w = 0; w < set.length; w++) if (set[w] !== 0) n += popcount(set[w]!);
  const out = new Uint32Array(n);
  let j = 0;
  for (let w = 0; w < set.length; w++) {
    let bits = set[w]!;
    while (bits !== 0) {
      const low = bits & -bits;
      const d = w * 32 + (31 - Math.clz32(low));
      if (d < size) out[j++] = d;
      bits ^= low;
    }
  }
  return j === n ? out : out.subarray(0, j);
}

/** Per store and block size, per block: 0 not yet checked, 1 its texts lie in order in one buffer, 2 they do not. */
const contiguity = new WeakMap<ChunkStore, Map<number, Uint8Array>>();

function blockSpan(store: ChunkStore, from: number, to: number, blockIndex: number, blockSize: number): Uint8Array | undefined {
  let bySize = contiguity.get(store);
  if (!bySize) contiguity.set(store, (bySize = new Map()));
  let state = bySize.get(blockSize);
  if (!state) bySize.set(blockSize, (state = new Uint8Array(Math.ceil(store.size / blockSize))));
  const first = store.textBytes(from);
  if (state[blockIndex] === 0) {
    let ok = true;
    let end = first.byteOffset + first.byteLength;
    for (let d = from + 1; d < to && ok; d++) {
      const t = store.textBytes(d);
      ok = t.buffer === first.buffer && t.byteOffset >= end;
      end = t.byteOffset + t.byteLength;
    }
    state[blockIndex] = ok ? 1 : 2;
  }
  if (state[blockIndex] !== 1) return undefined;
  const last = store.textBytes(to - 1);
  return new Uint8Array(first.buffer, first.byteOffset, last.byteOffset + last.byteLength - first.byteOffset);
}

/**
 * Run a Python-syntax regex over the chunk texts (titles are not searched) and return the first k
 * matching chunks in document order, each with a snippet around its first match.
 *
 * With an index, only chunks that can hold a match are run through the regex; the hits are exactly
 * those of a full scan. The time cap is checked between blocks of chunks (RE2 is linear, so a block
 * never takes long), and a call that reaches it returns what it found with timedOut set.
 */
export function grep(store: ChunkStore, index: GrepIndex | undefined, pattern: string, options: GrepOptions = {}): GrepResult {
  const k = options.k ?? DEFAULT_K;
  const timeLimitMs = options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
  const snippetChars = options.snippetChars ?? DEFAULT_SNIPPET_CHARS;
  // The cap covers the whole call: parsing, compiling and planning count against it, not just matching.
  const deadline = performance.now() + timeLimitMs;
  const compiled = compilePattern(pattern);
  const hits: GrepHit[] = [];
  if (k <= 0) return { hits, timedOut: false, scanned: 0 };

  const usable = index !== undefined && index.nDocs === store.size;
  const blockSize = usable ? index.blockSize : DEFAULT_BLOCK_SIZE;
  const candidates: DocSet = usable ? index.candidates(compiled.query) : null;
  const nBlocks = Math.ceil(store.size / blockSize);
  const re = compiled.re;
  let scanned = 0;
  let timedOut = false;

  // The documents in play, block by block: every document without a prefilter, else the
  // candidates (found a bitmap word at a time, so empty stretches of the corpus cost nothing).
  const inPlayDocs = candidates === null ? null : setBits(candidates, store.size);
  let next = 0;
  for (let b = 0; b < nBlocks; b++) {
    const first = next;
    if (inPlayDocs !== null) {
      if (next >= inPlayDocs.length) break;
      // Jump to the block of the next candidate.
      b = Math.max(b, Math.floor(inPlayDocs[next]! / blockSize));
    }
    const from = b * blockSize;
    const to = Math.min(store.size, from + blockSize);
    let inPlay = to - from;
    if (inPlayDocs !== null) {
      while (next < inPlayDocs.length && inPlayDocs[next]! < to) next++;
      inPlay = next - first;
    }
    if (performance.now() >= deadline) {
      timedOut = true;
      break;
    }
    if (compiled.contextFree && blockTestWorthIt(inPlay, blockSize)) {
      const span = blockSpan(store, from, to, b, blockSize);
      if (span !== undefined && !re.test(span as Buffer)) {
        scanned += to - from;
        continue;
      }
    }
    for (let i = 0; i < inPlay; i++) {
      const d = inPlayDocs === null ? from + i : inPlayDocs[first + i]!;
      scanned++;
      if (!re.test(store.textBytes(d) as Buffer)) continue;
      hits.push(makeHit(store, d, re, snippetChars));
      if (hits.length >= k) return { hits, timedOut: false, scanned };
    }
  }
  return { hits, timedOut, scanned };
}

function makeHit(store: ChunkStore, doc: number, re: RE2Type, snippetChars: number): GrepHit {
  const bytes = store.textBytes(doc);
  const m = re.exec(bytes as Buffer);
  const text = store.text(doc);
  let start = 0;
  let end = 0;
  if (m) {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    start = buf.toString('utf8', 0, m.index).length;
    end = start + m[0].toString('utf8').length;
  }
  return { id: store.id(doc), title: store.title(doc), snippet: snippetAround(text, start, end, snippetChars) };
}

/**
 * About `width` characters of `text` around [start, end), cut at spaces where possible, with '…'
 * where text was cut, and white space collapsed. A match longer than the width is shown from its start.
 */
export function snippetAround(text: string, start: number, end: number, width: number): string {
  if (text.length <= width) return text.replace(/\s+/g, ' ').trim();
  const matchLen = Math.min(end - start, width);
  let from = Math.max(0, start - Math.floor((width - matchLen) / 2));
  let to = Math.min(text.length, from + width);
  from = Math.max(0, to - width);
  if (from > 0) {
    const space = text.indexOf(' ', from);
    if (space >= 0 && space < start) from = space + 1;
  }
  if (to < text.length) {
    const space = text.lastIndexOf(' ', to);
    if (space > start + matchLen) to = space;
  }
  const body = text.slice(from, to).replace(/\s+/g, ' ').trim();
  return `${from > 0 ? '…' : ''}${body}${to < text.length ? '…' : ''}`;
}
