/**
 * Chunk id -> a 32-bit value, for the reader's duplicate check over millions of ids: an
 * open-addressing table of FNV-1a hashes over typed arrays, with the ids themselves kept in one
 * array for the comparison. A Map<string, number> does the same job at 4 s per million ids
 * (measured), most of it growing and garbage-collecting its one huge backing store.
 */
export class IdTable {
  private slots = new Int32Array(1 << 12).fill(-1);
  private hashes = new Int32Array(1 << 11);
  private values = new Uint32Array(1 << 11);
  private readonly ids: string[] = [];

  get size(): number {
    return this.ids.length;
  }

  /** The value stored for `id`; if there is none, stores `value` and returns undefined. */
  setIfAbsent(id: string, value: number): number | undefined {
    let h = 0x811c9dc5;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    // murmur3's finaliser: FNV's low bits, which pick the slot, are weak alone on ids like "doc-000123".
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    const mask = this.slots.length - 1;
    let s = h & mask;
    for (;;) {
      const e = this.slots[s]!;
      if (e < 0) break;
      if (this.hashes[e] === h && this.ids[e] === id) return this.values[e];
      s = (s + 1) & mask;
    }
    const e = this.ids.length;
    if (e === this.hashes.length) {
      this.hashes = grow(this.hashes, new Int32Array(2 * e));
      this.values = grow(this.values, new Uint32Array(2 * e));
    }
    this.ids.push(id);
    this.hashes[e] = h;
    this.values[e] = value;
    this.slots[s] = e;
    // Kept at most half full, so probes stay short.
    if (2 * (e + 1) > this.slots.length) this.rehash();
    return undefined;
  }

  private rehash(): void {
    const slots = new Int32Array(2 * this.slots.length).fill(-1);
    const mask = slots.length - 1;
    for (let e = 0; e < this.ids.length; e++) {
      let s = this.hashes[e]! & mask;
      while (slots[s]! >= 0) s = (s + 1) & mask;
      slots[s] = e;
    }
    this.slots = slots;
  }
}

function grow<T extends Int32Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
