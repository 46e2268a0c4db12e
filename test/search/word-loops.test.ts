import { describe, expect, it } from 'vitest';
import { WordKernel } from '../../src/search/word-loops.js';
import { STUB_HEAP_MAX_PAGES, WASM_PAGE, type WasmMemory } from '../../src/wasm.js';

describe('the index word loops near the top of their memory', () => {
  it('still allocate once their memory has grown as far as it may (the stub runtime wraps at 4 GiB)', () => {
    const seen = new Map<string, number>();
    const kernel = WordKernel.create((w) => {
      if (!seen.has(w)) seen.set(w, seen.size);
      return seen.get(w)!;
    });
    if (!kernel) throw new Error('words.wasm is not built: run npm run build');
    // Grow the memory to its maximum as a long build does (untouched pages cost no RAM); the test
    // reaches into the kernel for its memory, which it never hands out.
    const memory = (kernel as unknown as { memory: WasmMemory }).memory;
    memory.grow(STUB_HEAP_MAX_PAGES - memory.buffer.byteLength / WASM_PAGE);
    expect(memory.buffer.byteLength).toBe(STUB_HEAP_MAX_PAGES * WASM_PAGE);
    expect(() => memory.grow(1)).toThrow(RangeError);
    expect(kernel.memoryBytes()).toBe(STUB_HEAP_MAX_PAGES * WASM_PAGE);
    // A text long enough that its input and pairs need fresh allocations.
    const words = Array.from({ length: 40_000 }, (_, i) => `w${i.toString(36)}`);
    kernel.encode('title', `${words.join(' ')} ${words[7]}`);
    expect(kernel.countTerms()).toBe(40_001);
    expect(kernel.documentLength()).toBe(40_002);
    const pairs = kernel.pairs();
    expect(pairs.length).toBe(40_001);
  });
});
