// Compiles the local backend's AssemblyScript kernels to WebAssembly SIMD: dist/wasm/kernels.wasm.
// Run by `npm run build` after tsc; assemblyscript is a devDependency, so this works on a fresh clone.
import { mkdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import asc from 'assemblyscript/asc';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src/backend/local/assembly/kernels.ts');
const outFile = join(root, 'dist/wasm/kernels.wasm');
mkdirSync(dirname(outFile), { recursive: true });
const tmp = `${outFile}.${process.pid}.tmp`;
const { error, stderr } = await asc.main([
  source,
  '--outFile', tmp,
  '-O3', '--enable', 'simd',
  // Memory comes from the TypeScript side (one heap shared with the model's tensors); no GC runtime.
  '--importMemory', '--initialMemory', '1', '--runtime', 'stub', '--noAssert',
]);
if (error) {
  console.error(stderr.toString());
  console.error(`build-wasm: ${error.message}`);
  process.exit(1);
}
renameSync(tmp, outFile);
console.error(`build-wasm: wrote ${outFile}`);
