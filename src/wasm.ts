import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The slice of the WebAssembly JS API sleuth uses (the project's lib settings do not declare it). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
export interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (d: { initial: number; maximum: number }) => WasmMemory;
  Instance: new (m: object, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
}
export const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** Bytes per WebAssembly memory page. */
export const WASM_PAGE = 65536;
/** The most a (32-bit) WebAssembly memory can hold: 65,536 pages, 4 GiB. */
export const WASM_MAX_BYTES = 65536 * WASM_PAGE;
/**
 * The most pages a memory may grow to under AssemblyScript's stub runtime (the modules that
 * allocate with `heap.alloc`): one page short of 4 GiB. At 65,536 pages the runtime's end of
 * memory, pages << 16 in 32 bits, wraps to 0, so its next allocation finds no room and traps
 * (`unreachable`) though memory is free; and as it doubles memory when it grows, that happened as
 * soon as its heap passed 2 GiB (an index build at 4.6 million fitted chunks).
 */
export const STUB_HEAP_MAX_PAGES = 65535;

/**
 * Where `npm run build` puts a compiled module (scripts/build-wasm.mjs): dist/wasm/NAME under the
 * package root, found from this file whether it runs from src/ (tests) or dist/src/; null if not built.
 */
export function wasmPath(name: string): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'dist', 'wasm', name);
    if (existsSync(candidate)) return candidate;
    if (existsSync(join(dir, 'package.json'))) return null;
    dir = dirname(dir);
  }
  return null;
}

const compiledModules = new Map<string, object | null>();

/** The compiled module dist/wasm/NAME, compiled once per thread; null if it is not built. */
export function compiledWasm(name: string): object | null {
  let mod = compiledModules.get(name);
  if (mod === undefined) {
    const path = wasmPath(name);
    mod = path ? new WA.Module(readFileSync(path)) : null;
    compiledModules.set(name, mod);
  }
  return mod;
}

/**
 * The exports with the named functions' results read as unsigned: WebAssembly hands a 32-bit
 * pointer (AssemblyScript's usize) to JavaScript as a signed i32, so one past 2 GiB arrives
 * negative, and a view at a negative offset throws or, through subarray, counts from the end.
 */
export function unsignedResults<T extends object>(exports: T, names: readonly (keyof T)[]): T {
  const out = { ...exports };
  for (const name of names) {
    const f = exports[name] as unknown as (...args: number[]) => number;
    (out as Record<keyof T, unknown>)[name] = (...args: number[]) => f(...args) >>> 0;
  }
  return out;
}
