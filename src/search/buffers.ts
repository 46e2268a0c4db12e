import { closeSync, openSync, writeSync } from 'node:fs';

type TypedArrayCtor<T> = { new (length: number): T };

/** An append-only typed array that doubles its capacity: the builder's postings and offsets. */
export class Grow<T extends Uint32Array | Uint16Array | Float64Array> {
  private data: T;
  length = 0;
  constructor(private readonly ctor: TypedArrayCtor<T>, capacity = 1024) {
    this.data = new ctor(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new this.ctor(this.data.length * 2);
      next.set(this.data as never);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  /**
   * The backing array, grown to hold at least `extra` more values past `length`: a hot loop
   * writes data[length...] directly and then advances `length` itself.
   */
  reserve(extra: number): T {
    if (this.length + extra > this.data.length) {
      const next = new this.ctor(Math.max(this.data.length * 2, this.length + extra));
      next.set(this.data as never);
      this.data = next;
    }
    return this.data;
  }
  get(i: number): number {
    return this.data[i]!;
  }
  /** A view of the filled part (shares memory until the next push). */
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}

/**
 * Every document's (term, tf) pairs, in document order, as the index builder collected them
 * (PairChunks here, or the WebAssembly word loop's, ./word-loops.ts), laid out into postings at
 * the end.
 */
export interface PostingPairs {
  /** Pairs in all. */
  readonly length: number;
  /** Replace every pair's term t by map[t]. */
  remapTerms(map: Uint32Array): void;
  /**
   * The postings, a range of terms at a time (postingPasses): for each pass, in term order, the
   * docs and tfs of its terms' postings (each term's in document order), handed to `write` (views
   * valid until it returns). Fills maxTf[t], the largest tf / (tf + norms[doc]) over term t's
   * postings. postOff: where each term's postings start, terms in their final order.
   */
  layout(postOff: Uint32Array, norms: Float64Array, maxTf: Float64Array, write: (docs: Uint32Array, tfs: Uint16Array) => void): void;
}

/** Postings per pass of PostingPairs.layout (a term with more gets a pass of its own). */
export const POSTINGS_PER_PASS = 1 << 24;

/**
 * The passes of a postings layout: term ranges [lo, hi) of at most `perPass` postings each.
 *
 * A range of terms at a time, in passes over the pairs, through one reused buffer: scattering
 * all postings at once writes to every term's list in turn, and at a million chunks nearly every
 * write missed the cache (100 ns a posting, measured); a range's lists stay in cache, and the
 * postings never take memory of their own.
 */
export function postingPasses(postOff: Uint32Array, perPass = POSTINGS_PER_PASS): { lo: number; hi: number; postings: number }[] {
  const T = postOff.length - 1;
  const passes = [];
  for (let lo = 0; lo < T; ) {
    let hi = lo + 1;
    while (hi < T && postOff[hi + 1]! - postOff[lo]! <= perPass) hi++;
    passes.push({ lo, hi, postings: postOff[hi]! - postOff[lo]! });
    lo = hi;
  }
  return passes;
}

/**
 * (term, tf) pairs appended a document at a time into fixed-size chunks: no doubling copies of
 * hundreds of megabytes (each first touch of fresh memory costs a page fault), and a document's
 * pairs never straddle two chunks. Read back in passes by scatter().
 */
export class PairChunks implements PostingPairs {
  private readonly chunks: { terms: Uint32Array; tfs: Uint16Array; used: number }[] = [];
  /** Pairs per document, in order. */
  private readonly counts = new Grow(Uint32Array);
  length = 0;

  constructor(private readonly chunkPairs = 1 << 22) {}

  /** Room for `extra` pairs of the next document: the arrays and the index to write from. */
  reserve(extra: number): { terms: Uint32Array; tfs: Uint16Array; at: number } {
    let c = this.chunks[this.chunks.length - 1];
    if (c === undefined || c.used + extra > c.terms.length) {
      const size = Math.max(this.chunkPairs, extra);
      c = { terms: new Uint32Array(size), tfs: new Uint16Array(size), used: 0 };
      this.chunks.push(c);
    }
    return { terms: c.terms, tfs: c.tfs, at: c.used };
  }

  /** Record that the document reserved last wrote `n` pairs. */
  commit(n: number): void {
    this.chunks[this.chunks.length - 1]!.used += n;
    this.counts.push(n);
    this.length += n;
  }

  /** Replace every pair's term t by map[t]. */
  remapTerms(map: Uint32Array): void {
    for (const c of this.chunks) {
      const terms = c.terms;
      for (let i = 0; i < c.used; i++) terms[i] = map[terms[i]!]!;
    }
  }

  layout(postOff: Uint32Array, norms: Float64Array, maxTf: Float64Array, write: (docs: Uint32Array, tfs: Uint16Array) => void): void {
    const passes = postingPasses(postOff);
    const most = Math.max(0, ...passes.map((p) => p.postings));
    const docs = new Uint32Array(most);
    const tfs = new Uint16Array(most);
    for (const { lo, hi, postings } of passes) {
      const cursor = new Uint32Array(hi - lo);
      for (let t = lo; t < hi; t++) cursor[t - lo] = postOff[t]! - postOff[lo]!;
      this.scatter(lo, hi - lo, cursor, docs, tfs, norms, maxTf);
      write(docs.subarray(0, postings), tfs.subarray(0, postings));
    }
  }

  /**
   * One pass of the postings layout: every pair whose term is in [lo, lo + span), in
   * document order, goes to docs/tfs at cursor[term - lo]++, and maxTf[term] keeps the largest
   * tf / (tf + norms[doc]). One loop over the arrays, no call per document: it runs over every
   * pair once per pass.
   */
  private scatter(lo: number, span: number, cursor: Uint32Array, docs: Uint32Array, tfs: Uint16Array, norms: Float64Array, maxTf: Float64Array): void {
    const counts = this.counts.view();
    let doc = 0;
    for (const chunk of this.chunks) {
      const pairTerms = chunk.terms;
      const pairTfs = chunk.tfs;
      const used = chunk.used;
      // A document's pairs never straddle two chunks; one without pairs may sit at either end.
      for (let i = 0; i < used; doc++) {
        const end = i + counts[doc]!;
        for (; i < end; i++) {
          const r = pairTerms[i]! - lo;
          if (r >>> 0 >= span) continue;
          const at = cursor[r]++;
          const tf = pairTfs[i]!;
          docs[at] = doc;
          tfs[at] = tf;
          const w = tf / (tf + norms[doc]!);
          if (w > maxTf[lo + r]!) maxTf[lo + r] = w;
        }
      }
    }
  }
}

const encoder = new TextEncoder();

/**
 * Strings appended to files as UTF-8 through one reusable buffer, starting a new file when the
 * current one would pass `maxFileBytes` (the text shards). Tracks the global byte position. The
 * buffer is written out when full, or once it holds `flushAt` bytes; either way where a string
 * ends (Lz4TextSink compresses each flush as a block).
 */
export class Utf8Sink {
  protected buf = new Uint8Array(8 << 20);
  protected used = 0;
  protected fd = -1;
  protected fileBytes = 0;
  /** Bytes written over all files. */
  position = 0;
  readonly files: { file: string; start: number; bytes: number; firstItem: number }[] = [];
  private items = 0;
  private closed = false;

  constructor(private readonly pathFor: (shard: number) => string, private readonly maxFileBytes = Number.MAX_SAFE_INTEGER, private readonly flushAt = Infinity) {}

  /** Appends s; returns nothing, position advances by its UTF-8 length. */
  write(s: string): void {
    if (this.fd === -1 || (this.fileBytes > 0 && this.fileBytes + s.length * 3 > this.maxFileBytes)) this.startFile();
    this.items++;
    let { read, written } = encoder.encodeInto(s, this.buf.subarray(this.used));
    if (read < s.length) {
      // Buffer full: flush, then encode into an empty buffer (grown if one string needs more).
      this.flush();
      if (s.length * 3 > this.buf.length) this.buf = new Uint8Array(s.length * 3);
      ({ read, written } = encoder.encodeInto(s, this.buf));
    }
    this.used += written;
    this.fileBytes += written;
    this.position += written;
    if (this.used >= this.flushAt) this.flush();
  }

  /**
   * Appends the UTF-8 bytes of a string of `units` UTF-16 code units (already encoded): the same
   * bytes, and the same file boundaries, as write() of that string.
   */
  writeBytes(bytes: Uint8Array, units: number): void {
    if (this.fd === -1 || (this.fileBytes > 0 && this.fileBytes + units * 3 > this.maxFileBytes)) this.startFile();
    this.items++;
    if (this.used + bytes.length > this.buf.length) {
      this.flush();
      if (bytes.length > this.buf.length) this.buf = new Uint8Array(bytes.length);
    }
    this.buf.set(bytes, this.used);
    this.used += bytes.length;
    this.fileBytes += bytes.length;
    this.position += bytes.length;
    if (this.used >= this.flushAt) this.flush();
  }

  protected startFile(): void {
    if (this.fd !== -1) this.closeFile();
    this.fd = openSync(this.pathFor(this.files.length), 'w');
    this.files.push({ file: '', start: this.position, bytes: 0, firstItem: this.items });
    this.files[this.files.length - 1]!.file = this.pathFor(this.files.length - 1);
    this.fileBytes = 0;
  }

  /** Write out the buffer (it ends where a string ends). */
  protected flush(): void {
    let at = 0;
    while (at < this.used) at += writeSync(this.fd, this.buf, at, this.used - at);
    this.used = 0;
  }

  protected closeFile(): void {
    this.flush();
    closeSync(this.fd);
    this.files[this.files.length - 1]!.bytes = this.fileBytes;
    this.fd = -1;
  }

  /** Flush and close (again: a no-op); creates an empty file if nothing was written. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.fd === -1 && this.files.length === 0) this.startFile();
    if (this.fd !== -1) this.closeFile();
  }
}
