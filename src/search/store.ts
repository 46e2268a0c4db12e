import type { ChunkStore } from './types.js';

const decoder = new TextDecoder();

/** Bytes of a file by range: a PagedFile (read on demand) or an array already in memory. */
export interface ByteSource {
  range(from: number, to: number): Uint8Array;
  /** Read every byte now, if it is read on demand. */
  loadAll?(): void;
}

export interface TextShard {
  firstDoc: number;
  /** Global byte offset of the shard's first byte. */
  start: number;
  bytes: ByteSource;
}

/**
 * The chunks of an index, read straight from the index files' bytes: ids, titles, texts and
 * metadata as UTF-8 with offset arrays. Strings are decoded only when asked for; with PagedFile
 * sources, bytes are read from disk only when first asked for. The texts of consecutive documents
 * of one shard lie back to back in one buffer (grep scans a block of them at once).
 */
export class IndexChunkStore implements ChunkStore {
  readonly size: number;

  constructor(
    private readonly idBytes: ByteSource,
    private readonly idOff: Uint32Array,
    private readonly idOrder: Uint32Array,
    private readonly titleBytes: ByteSource,
    private readonly titleOff: Uint32Array,
    private readonly shards: TextShard[],
    private readonly textOff: Float64Array,
    private readonly metaBytes: ByteSource,
    private readonly metaOff: Uint32Array,
  ) {
    this.size = idOrder.length;
  }

  private check(doc: number): void {
    if (!Number.isInteger(doc) || doc < 0 || doc >= this.size) throw new RangeError(`document number ${doc} is outside 0..${this.size - 1}`);
  }

  id(doc: number): string {
    this.check(doc);
    return decoder.decode(this.idBytes.range(this.idOff[doc]!, this.idOff[doc + 1]!));
  }

  title(doc: number): string {
    this.check(doc);
    return decoder.decode(this.titleBytes.range(this.titleOff[doc]!, this.titleOff[doc + 1]!));
  }

  textBytes(doc: number): Uint8Array {
    this.check(doc);
    // Shards are few (1 GiB each): a backwards scan finds the one holding doc.
    let s = this.shards.length - 1;
    while (s > 0 && this.shards[s]!.firstDoc > doc) s--;
    const shard = this.shards[s]!;
    return shard.bytes.range(this.textOff[doc]! - shard.start, this.textOff[doc + 1]! - shard.start);
  }

  /** Read every id, title, metadata and text now (a long-lived process that will touch most of them anyway). */
  loadAll(): void {
    for (const bytes of [this.idBytes, this.titleBytes, this.metaBytes, ...this.shards.map((s) => s.bytes)]) bytes.loadAll?.();
  }

  text(doc: number): string {
    return decoder.decode(this.textBytes(doc));
  }

  /** The chunk's metadata, or undefined when it had none. */
  meta(doc: number): Record<string, unknown> | undefined {
    this.check(doc);
    const bytes = this.metaBytes.range(this.metaOff[doc]!, this.metaOff[doc + 1]!);
    return bytes.length === 0 ? undefined : (JSON.parse(decoder.decode(bytes)) as Record<string, unknown>);
  }

  /** The id that comes `rank`-th in id order (JS string order, as docOf searches it). */
  idAtRank(rank: number): string {
    return this.id(this.idOrder[rank]!);
  }

  docOf(id: string): number {
    // idOrder lists documents by id in JS string order (as the builder sorted them).
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const doc = this.idOrder[mid]!;
      const other = this.id(doc);
      if (other === id) return doc;
      if (other < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}
