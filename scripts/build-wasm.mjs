// Compiles the AssemblyScript kernels to WebAssembly: the local backend's (SIMD) to
// dist/wasm/kernels.wasm, BM25 scoring's (SIMD block decoding) to dist/wasm/bm25.wasm, the index builder's word loops to
// dist/wasm/words.wasm, the LZ4 decoder of compressed texts to dist/wasm/lz4.wasm and the JSONL reader's fast path to dist/wasm/jsonl.wasm.
// Run by `npm run build` before tsc; assemblyscript is a devDependency, so this works on a fresh clone.
import { mkdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import asc from 'assemblyscript/asc';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const modules = [
  { source: 'src/backend/local/assembly/kernels.ts', out: 'dist/wasm/kernels.wasm', flags: ['--enable', 'simd'] },
  { source: 'src/search/assembly/bm25.ts', out: 'dist/wasm/bm25.wasm', flags: ['--enable', 'simd'] },
  { source: 'src/search/assembly/words.ts', out: 'dist/wasm/words.wasm', flags: ['--enable', 'simd'] },
  { source: 'src/search/assembly/lz4.ts', out: 'dist/wasm/lz4.wasm', flags: [] },
  { source: 'src/corpus/assembly/jsonl.ts', out: 'dist/wasm/jsonl.wasm', flags: ['--enable', 'simd'] },
];
for (const m of modules) {
  const outFile = join(root, m.out);
  mkdirSync(dirname(outFile), { recursive: true });
  const tmp = `${outFile}.${process.pid}.tmp`;
  const { error, stderr } = await asc.main([
    join(root, m.source),
    '--outFile', tmp,
    '-O3', ...m.flags,
    // Memory comes from the TypeScript side (which lays out every array in it); no GC runtime.
    '--importMemory', '--initialMemory', '1', '--runtime', 'stub', '--noAssert',
  ]);
  if (error) {
    console.error(stderr.toString());
    console.error(`build-wasm: ${error.message}`);
    process.exit(1);
  }
  renameSync(tmp, outFile);
  console.error(`build-wasm: wrote ${outFile}`);
}
