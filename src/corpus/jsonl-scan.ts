import { WA, WASM_MAX_BYTES, WASM_PAGE, compiledWasm, type WasmMemory } from '../wasm.js';

/**
 * The JSONL reader's fast path (./assembly/jsonl.ts, WebAssembly): a batch of lines scanned at
 * once, each plain chunk record `{"id", "title"?, "text"}` unescaped to UTF-8 without a string or
 * a JSON.parse per line. Lines it cannot take come back as FALLBACK, for JSON.parse.
 */
interface JsonlExports {
  inputPointer(bytes: number): number;
  arenaPointer(): number;
  recordsPointer(): number;
  arenaLength(): number;
  scanLines(len: number): number;
}

/** Line statuses (as the module numbers them); any other status (2) is a line the scanner leaves to JSON.parse. */
export const LINE_OK = 0;
export const LINE_BLANK = 1;
/** u32s per line record: status, id offset and length, title offset and length, text offset and length, text UTF-16 length, line start and end, fingerprint. */
const RECORD = 11;
/** A title length meaning: the record has no title. */
export const NO_TITLE = 0xffffffff;

export interface ScannedBatch {
  lines: number;
  /** RECORD u32s per line (see the fields' accessors). */
  records: Uint32Array;
  /** The unescaped strings of the OK lines (offsets in records). */
  arena: Uint8Array;
}

/** Accessors of one line's record in ScannedBatch.records. */
export const line = {
  status: (r: Uint32Array, i: number) => r[i * RECORD]!,
  id: (r: Uint32Array, i: number): [number, number] => [r[i * RECORD + 1]!, r[i * RECORD + 2]!],
  title: (r: Uint32Array, i: number): [number, number] => [r[i * RECORD + 3]!, r[i * RECORD + 4]!],
  text: (r: Uint32Array, i: number): [number, number] => [r[i * RECORD + 5]!, r[i * RECORD + 6]!],
  units: (r: Uint32Array, i: number) => r[i * RECORD + 7]!,
  span: (r: Uint32Array, i: number): [number, number] => [r[i * RECORD + 8]!, r[i * RECORD + 9]!],
  /** ../read.ts's fingerprint of the chunk (a line with a title). */
  fingerprint: (r: Uint32Array, i: number) => r[i * RECORD + 10]!,
};

export class JsonlScanner {
  private readonly x: JsonlExports;
  private readonly memory: WasmMemory;

  /** A scanner, or undefined when the module is not built (`npm run build`). */
  static create(): JsonlScanner | undefined {
    const mod = compiledWasm('jsonl.wasm');
    return mod ? new JsonlScanner(mod) : undefined;
  }

  private constructor(mod: object) {
    this.memory = new WA.Memory({ initial: 16, maximum: WASM_MAX_BYTES / WASM_PAGE });
    const env = {
      memory: this.memory,
      abort: (_message: number, _file: number, line: number, column: number) => {
        throw new Error(`JSONL scanner (jsonl.wasm) aborted at ${line}:${column}`);
      },
    };
    this.x = new WA.Instance(mod, { env }).exports as unknown as JsonlExports;
  }

  /** Scan `bytes`: whole lines, each ended by '\n' but perhaps the last. The result is the caller's. */
  scan(bytes: Uint8Array): ScannedBatch {
    const at = this.x.inputPointer(bytes.length);
    new Uint8Array(this.memory.buffer, at, bytes.length).set(bytes);
    const lines = this.x.scanLines(bytes.length);
    const buffer = this.memory.buffer;
    const records = new Uint32Array(buffer, this.x.recordsPointer(), lines * RECORD).slice();
    const arena = new Uint8Array(buffer, this.x.arenaPointer(), this.x.arenaLength()).slice();
    return { lines, records, arena };
  }
}
