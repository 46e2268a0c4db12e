/**
 * The one seeded PRNG: mulberry32, small, fast, and the same sequence on every platform and Node
 * version (Math.random cannot be seeded). Weight initialisation, sampling, data order, bootstrap
 * intervals and the invoice world all draw from it, so every run repeats exactly from its seed.
 */
export class Mulberry32 {
  /** The generator's 32-bit state (a stream forked from it starts from its value). */
  state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

/** A uniform [0, 1) stream from a numeric seed. */
export function seededRandom(seed: number): () => number {
  const g = new Mulberry32(seed);
  return () => g.next();
}

/** A 32-bit seed from text: FNV-1a, then a splitmix32 finaliser, so that similar texts give unrelated seeds. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
