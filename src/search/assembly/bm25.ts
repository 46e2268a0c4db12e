// BM25's two hot loops, in AssemblyScript compiled to WebAssembly (scripts/build-wasm.mjs). Every
// pointer is a byte offset into the one imported memory, laid out by ../scoring-memory.ts; src/search/bm25.ts
// holds the same loops in plain TypeScript, and the tests check that both give the same bits.
//
// The arithmetic is the TypeScript loop's, operation for operation (f64 throughout, the same order),
// so a document's score does not depend on which loop summed it.

/**
 * Add one term's weights into a segment's accumulators: for its postings [at, end) while the
 * document is below `limit`, acc[doc - base] += idf * (tf / (tf + norm[doc])). Returns the first
 * posting not taken (the term's position for the next segment).
 */
export function accumulate(docs: usize, tfs: usize, at: u32, end: u32, base: u32, limit: u32, idf: f64, norm: usize, acc: usize): u32 {
  for (; at < end; at++) {
    const d = load<u32>(docs + (<usize>at << 2));
    if (d >= limit) break;
    const tf = <f64>load<u16>(tfs + (<usize>at << 1));
    const slot = acc + (<usize>(d - base) << 3);
    store<f64>(slot, load<f64>(slot) + idf * (tf / (tf + load<f64>(norm + (<usize>d << 3)))));
  }
  return at;
}

/**
 * Every accumulator of [0, len) above `min`, in order: its offset to outDocs (u32) and its score to
 * outScores (f64); then all of [0, len) set back to zero. Returns how many were written (at most len).
 */
export function collect(acc: usize, len: u32, min: f64, outDocs: usize, outScores: usize): u32 {
  let n: u32 = 0;
  for (let o: u32 = 0; o < len; o++) {
    const score = load<f64>(acc + (<usize>o << 3));
    if (score > min) {
      store<u32>(outDocs + (<usize>n << 2), o);
      store<f64>(outScores + (<usize>n << 3), score);
      n++;
    }
  }
  memory.fill(acc, 0, <usize>len << 3);
  return n;
}
