import { z } from 'zod';

/**
 * A byte-level BPE tokenizer for sleuth's small local model, trained from scratch (deterministically)
 * on the embedded corpus and rendered tool transcripts. Ids: 0..255 are bytes, then the special
 * tokens, then one id per merge in the order learned. Any text encodes (bytes are the fallback);
 * special tokens are matched only as whole strings.
 */

export const BpeDataSchema = z
  .object({
    version: z.literal(1),
    specials: z.array(z.string().min(1)),
    /** Pairs of ids, merge i creates id 256 + specials.length + i. */
    merges: z.array(z.tuple([z.number().int().min(0), z.number().int().min(0)])),
  })
  .strict();

export type BpeData = z.infer<typeof BpeDataSchema>;

/** GPT-2-style pre-tokenizer: words with their leading space, single digits, punctuation runs, spaces. */
const PRETOKEN = / ?\p{L}+| ?\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

const utf8 = new TextEncoder();

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const pairKey = (a: number, b: number) => a * 65536 + b;

/** `ids` with each occurrence of the pair (a, b), left to right, replaced by `merged`. */
function mergePair(ids: readonly number[], a: number, b: number, merged: number): number[] {
  const next: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    if (i + 1 < ids.length && ids[i] === a && ids[i + 1] === b) {
      next.push(merged);
      i++;
    } else next.push(ids[i]!);
  }
  return next;
}

export class BpeTokenizer {
  readonly vocabSize: number;
  private readonly ranks = new Map<number, number>();
  private readonly bytesOf: Uint8Array[] = [];
  private readonly specialIds = new Map<string, number>();
  private readonly specialSplit: RegExp | null;
  private readonly cache = new Map<string, number[]>();
  private readonly decoder = new TextDecoder('utf-8');

  constructor(readonly data: BpeData) {
    for (let b = 0; b < 256; b++) this.bytesOf.push(Uint8Array.of(b));
    data.specials.forEach((s, i) => {
      this.specialIds.set(s, 256 + i);
      this.bytesOf.push(utf8.encode(s));
    });
    const base = 256 + data.specials.length;
    data.merges.forEach(([a, b], i) => {
      if (a >= base + i || b >= base + i) throw new Error(`BPE merge ${i} refers to an id not yet defined`);
      this.ranks.set(pairKey(a, b), i);
      const x = this.bytesOf[a]!, y = this.bytesOf[b]!;
      const m = new Uint8Array(x.length + y.length);
      m.set(x);
      m.set(y, x.length);
      this.bytesOf.push(m);
    });
    this.vocabSize = this.bytesOf.length;
    this.specialSplit = data.specials.length
      ? new RegExp(`(${[...data.specials].sort((p, q) => q.length - p.length).map(escapeRegex).join('|')})`, 'u')
      : null;
  }

  /** The id of a special token; throws if the tokenizer does not have it. */
  special(name: string): number {
    const id = this.specialIds.get(name);
    if (id === undefined) throw new Error(`tokenizer has no special token ${name}`);
    return id;
  }

  isSpecial(id: number): boolean {
    return id >= 256 && id < 256 + this.data.specials.length;
  }

  encode(text: string): number[] {
    const out: number[] = [];
    const parts = this.specialSplit ? text.split(this.specialSplit) : [text];
    for (const part of parts) {
      if (!part) continue;
      const sid = this.specialIds.get(part);
      if (sid !== undefined) {
        out.push(sid);
        continue;
      }
      for (const m of part.matchAll(PRETOKEN)) for (const id of this.encodeWord(m[0])) out.push(id);
    }
    return out;
  }

  decode(ids: ArrayLike<number>): string {
    const chunks: Uint8Array[] = [];
    let len = 0;
    for (let i = 0; i < ids.length; i++) {
      const b = this.bytesOf[ids[i]!];
      if (!b) throw new Error(`token id ${ids[i]} is outside the vocabulary of ${this.vocabSize}`);
      chunks.push(b);
      len += b.length;
    }
    const all = new Uint8Array(len);
    let off = 0;
    for (const c of chunks) {
      all.set(c, off);
      off += c.length;
    }
    return this.decoder.decode(all);
  }

  private encodeWord(word: string): number[] {
    const hit = this.cache.get(word);
    if (hit) return hit;
    let ids = Array.from(utf8.encode(word));
    // Repeatedly apply the lowest-ranked merge present, as it was learned.
    while (ids.length > 1) {
      let best = -1, bestRank = Infinity;
      for (let i = 0; i + 1 < ids.length; i++) {
        const r = this.ranks.get(pairKey(ids[i]!, ids[i + 1]!));
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) break;
      const [a, b] = this.data.merges[bestRank]!;
      ids = mergePair(ids, a, b, 256 + this.data.specials.length + bestRank);
    }
    if (this.cache.size < 100_000) this.cache.set(word, ids);
    return ids;
  }
}

/**
 * Learn merges until the vocabulary reaches `vocabSize`. Deterministic: pair counts ties go to the
 * smaller pair of ids. Special-token strings in the texts are skipped, not learned from.
 */
export function trainBpe(texts: Iterable<string>, vocabSize: number, specials: string[]): BpeTokenizer {
  const base = 256 + specials.length;
  if (vocabSize < base) throw new Error(`vocabulary of ${vocabSize} is smaller than the ${base} byte and special tokens`);
  const splitter = specials.length ? new RegExp(specials.map(escapeRegex).join('|'), 'gu') : null;
  const wordCounts = new Map<string, number>();
  for (const text of texts) {
    const clean = splitter ? text.replace(splitter, ' ') : text;
    for (const m of clean.matchAll(PRETOKEN)) wordCounts.set(m[0], (wordCounts.get(m[0]) ?? 0) + 1);
  }
  // Sorted so that word indices (and so every tie) do not depend on Map insertion order.
  const entries = [...wordCounts].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const words = entries.map(([w]) => Array.from(utf8.encode(w)));
  const counts = entries.map(([, c]) => c);
  const pairCounts = new Map<number, number>();
  const pairWords = new Map<number, Set<number>>();
  // Candidates for the most frequent pair: a max-heap with stale entries skipped when popped.
  const heap = new PairHeap();
  const touched = new Set<number>();
  const addPairs = (wi: number, sign: number) => {
    const w = words[wi]!, c = counts[wi]! * sign;
    for (let i = 0; i + 1 < w.length; i++) {
      const key = pairKey(w[i]!, w[i + 1]!);
      const n = (pairCounts.get(key) ?? 0) + c;
      if (n === 0) pairCounts.delete(key);
      else pairCounts.set(key, n);
      touched.add(key);
      if (sign > 0) {
        let set = pairWords.get(key);
        if (!set) pairWords.set(key, (set = new Set()));
        set.add(wi);
      }
    }
  };
  const flush = () => {
    for (const key of touched) {
      const n = pairCounts.get(key);
      if (n !== undefined && n > 1) heap.push(n, key);
    }
    touched.clear();
  };
  for (let wi = 0; wi < words.length; wi++) addPairs(wi, 1);
  flush();
  const merges: [number, number][] = [];
  while (base + merges.length < vocabSize) {
    let bestKey = -1;
    while (heap.size) {
      const [n, key] = heap.pop();
      if (pairCounts.get(key) === n) {
        bestKey = key;
        break;
      }
    }
    if (bestKey < 0) break; // nothing occurs twice: more merges would only memorise.
    const a = Math.floor(bestKey / 65536), b = bestKey % 65536;
    const id = base + merges.length;
    merges.push([a, b]);
    for (const wi of pairWords.get(bestKey) ?? []) {
      const w = words[wi]!;
      let found = false;
      for (let i = 0; i + 1 < w.length; i++) if (w[i] === a && w[i + 1] === b) found = true;
      if (!found) continue;
      addPairs(wi, -1);
      words[wi] = mergePair(w, a, b, id);
      addPairs(wi, 1);
    }
    pairWords.delete(bestKey);
    flush();
  }
  return new BpeTokenizer({ version: 1, specials, merges });
}

/** Max-heap of (count, pair key); ties go to the smaller key, so training is deterministic. */
class PairHeap {
  private readonly n: number[] = [];
  private readonly k: number[] = [];
  get size(): number {
    return this.n.length;
  }
  private above(i: number, j: number): boolean {
    return this.n[i]! > this.n[j]! || (this.n[i] === this.n[j] && this.k[i]! < this.k[j]!);
  }
  private swap(i: number, j: number): void {
    [this.n[i], this.n[j]] = [this.n[j]!, this.n[i]!];
    [this.k[i], this.k[j]] = [this.k[j]!, this.k[i]!];
  }
  push(count: number, key: number): void {
    this.n.push(count);
    this.k.push(key);
    for (let i = this.n.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (!this.above(i, up)) break;
      this.swap(i, up);
      i = up;
    }
  }
  pop(): [number, number] {
    const top: [number, number] = [this.n[0]!, this.k[0]!];
    const last = this.n.length - 1;
    this.swap(0, last);
    this.n.pop();
    this.k.pop();
    for (let i = 0; ; ) {
      const l = 2 * i + 1, r = l + 1;
      let best = i;
      if (l < this.n.length && this.above(l, best)) best = l;
      if (r < this.n.length && this.above(r, best)) best = r;
      if (best === i) break;
      this.swap(i, best);
      i = best;
    }
    return top;
  }
}
