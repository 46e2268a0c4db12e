import { Mulberry32, seedOf } from '../../random.js';

/**
 * The invoice world's draws, from the shared seeded PRNG (src/random.ts) seeded from the seed's
 * text, so the world is identical on every machine and Node version: the gold answers are only
 * correct by construction if the database and the tasks come from one reproducible pass.
 */
export class Rng {
  private readonly gen: Mulberry32;

  constructor(seed: string | number) {
    this.gen = new Mulberry32(seedOf(String(seed)));
  }

  /** A uniform float in [0, 1). */
  next(): number {
    return this.gen.next();
  }

  /** A whole number in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Fisher–Yates, returning a new array. */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /** A string of `n` decimal digits (leading zeros allowed). */
  digits(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String(this.int(0, 9));
    return s;
  }

  /** A version-4-shaped UUID drawn from this stream (deterministic, unlike crypto.randomUUID). */
  uuid(): string {
    const hex = (n: number) => Array.from({ length: n }, () => this.int(0, 15).toString(16)).join('');
    const variant = (8 + this.int(0, 3)).toString(16);
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(12)}`;
  }

  /** A child stream, so adding draws in one part of generation does not shift another part. */
  fork(label: string): Rng {
    return new Rng(`${this.gen.state}:${label}`);
  }
}
