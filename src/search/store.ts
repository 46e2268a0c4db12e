import type { ChunkStore } from './types.js';

const decoder = new TextDecoder();

export interface TextShard {
  firstDoc: number;
  /** Global byte offset of the shard's first byte. */
  start: number;
  bytes: Uint8Array;
}

/**
 * The chunks of an index, read straight from the index files' bytes: ids, titles, texts and
 * metadata as UTF-8 with offset arrays. Strings are decoded only when asked for.
 */
export class IndexChunkStore implements ChunkStore {
  readonly size: number;

  constructor(
    private readonly idBytes: Uint8Array,
    private readonly idOff: Uint32Array,
    private readonly idOrder: Uint32Array,
    private readonly titleBytes: Uint8Array,
    private readonly titleOff: Uint32Array,
    private readonly shards: TextShard[],
    private readonly textOff: Float64Array,
    private readonly metaBytes: Uint8Array,
    private readonly metaOff: Uint32Array,
  ) {
    this.size = idOrder.length;
  }

  private check(doc: number): void {
    if (!Number.isInteger(doc) || doc < 0 || doc >= this.size) throw new RangeError(`document number ${doc} is outside 0..${this.size - 1}`);
  }

  id(doc: number): string {
    this.check(doc);
    return decoder.decode(this.idBytes.subarray(this.idOff[doc]!, this.idOff[doc + 1]!));
  }

  title(doc: number): string {
    this.check(doc);
    return decoder.decode(this.titleBytes.subarray(this.titleOff[doc]!, this.titleOff[doc + 1]!));
  }

  textBytes(doc: number): Uint8Array {
    this.check(doc);
    // Shards are few (1 GiB each): a backwards scan finds the one holding doc.
    let s = this.shards.length - 1;
    while (s > 0 && this.shards[s]!.firstDoc > doc) s--;
    const shard = this.shards[s]!;
    return shard.bytes.subarray(this.textOff[doc]! - shard.start, this.textOff[doc + 1]! - shard.start);
  }

  text(doc: number): string {
    return decoder.decode(this.textBytes(doc));
  }

  /** The chunk's metadata, or undefined when it had none. */
  meta(doc: number): Record<string, unknown> | undefined {
    this.check(doc);
    const bytes = this.metaBytes.subarray(this.metaOff[doc]!, this.metaOff[doc + 1]!);
    return bytes.length === 0 ? undefined : (JSON.parse(decoder.decode(bytes)) as Record<string, unknown>);
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
