import { describe, expect, it } from 'vitest';
import { WordKernel } from '../../src/search/word-loops.js';
import { STUB_HEAP_MAX_PAGES, WASM_PAGE, type WasmMemory } from '../../src/wasm.js';

/**
 * A build of millions of chunks takes the word loops' memory to gigabytes (the fitted corpus passes
 * 2 GiB at 4.6 million chunks). These tests put the loops there without the chunks: the memory is
 * grown from outside, as the runtime grows it, and the heap moved past 2 GiB by one allocation.
 * They reach into the kernel for its memory and exports, which it never hands out.
 */
describe('the index word loops high in their memory', () => {
  const newKernel = () => {
    const seen = new Map<string, number>();
    const kernel = WordKernel.create((w) => {
      if (!seen.has(w)) seen.set(w, seen.size);
      return seen.get(w)!;
    });
    if (!kernel) throw new Error('words.wasm is not built: run npm run build');
    const inside = kernel as unknown as { memory: WasmMemory; x: { allocate(bytes: number): number } };
    return { kernel, memory: inside.memory, allocate: (bytes: number) => inside.x.allocate(bytes) };
  };
  const words = Array.from({ length: 40_000 }, (_, i) => `w${i.toString(36)}`);

  it('still allocate once their memory has grown as far as it may (the stub runtime wraps at 4 GiB)', () => {
    const { kernel, memory } = newKernel();
    memory.grow(STUB_HEAP_MAX_PAGES - memory.buffer.byteLength / WASM_PAGE);
    expect(kernel.memoryBytes()).toBe(STUB_HEAP_MAX_PAGES * WASM_PAGE);
    expect(() => memory.grow(1)).toThrow(RangeError);
    // A text long enough that its input and pairs need fresh allocations.
    kernel.encode('title', `${words.join(' ')} ${words[7]}`);
    expect(kernel.countTerms()).toBe(40_001);
    expect(kernel.documentLength()).toBe(40_002);
    expect(kernel.pairs().length).toBe(40_001);
  });

  it('hand out pointers past 2 GiB as the unsigned offsets they are', () => {
    const { kernel, allocate } = newKernel();
    // 2 GiB of heap below what follows, in the largest blocks the runtime allocates (zero-filled
    // by the kernel: about a second).
    expect(allocate(2 ** 30 - 4096)).toBeLessThan(2 ** 24);
    expect(allocate(2 ** 30 - 4096)).toBeLessThan(2 ** 31);
    const text = `${words.slice(0, 300).join(' ')} w0 w1`;
    kernel.encode('title', text);
    expect(kernel.countTerms()).toBe(301);
    expect(kernel.encode('w5', 'w6 w5')).toEqual(new TextEncoder().encode('w5\nw6 w5'));
    expect(kernel.countTerms()).toBe(2);
    const df = kernel.documentFrequencies(302);
    // Term 0 is 'title', term 1 'w0', ..., term 300 'w299'; the second document holds w5 twice and w6.
    expect([df[0], df[1], df[6], df[7], df[300], df[301]]).toEqual([1, 1, 2, 2, 1, 0]);
    // The layout's buffers come from the heap above 2 GiB too: every posting comes back.
    const pairs = kernel.pairs();
    const T = 301;
    const counts = Array.from({ length: T }, (_, t) => df[t]!);
    const postOff = new Uint32Array(T + 1);
    for (let t = 0; t < T; t++) postOff[t + 1] = postOff[t]! + counts[t]!;
    const seen: number[] = [];
    pairs.layout(postOff, new Float64Array([1, 1]), new Float64Array(T), (docs, tfs) => {
      for (let i = 0; i < docs.length; i++) seen.push(docs[i]! * 10 + tfs[i]!);
    });
    expect(seen).toHaveLength(303);
    // As doc * 10 + tf: 'title' once and 'w0' twice in document 0; 'w5' once there, twice in document 1.
    expect(seen.slice(0, 2)).toEqual([1, 2]);
    expect(seen.slice(postOff[6], postOff[6]! + 2)).toEqual([1, 12]);
  });
});
