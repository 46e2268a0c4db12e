import { STUB_HEAP_MAX_PAGES, WA, compiledWasm, unsignedResults, type WasmMemory } from '../wasm.js';

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
  status: (records: Uint32Array, at: number) => records[at * RECORD]!,
  id: (records: Uint32Array, at: number): [number, number] => [records[at * RECORD + 1]!, records[at * RECORD + 2]!],
  title: (records: Uint32Array, at: number): [number, number] => [records[at * RECORD + 3]!, records[at * RECORD + 4]!],
  text: (records: Uint32Array, at: number): [number, number] => [records[at * RECORD + 5]!, records[at * RECORD + 6]!],
  units: (records: Uint32Array, at: number) => records[at * RECORD + 7]!,
  span: (records: Uint32Array, at: number): [number, number] => [records[at * RECORD + 8]!, records[at * RECORD + 9]!],
  /** ../read.ts's fingerprint of the chunk (a line with a title). */
  fingerprint: (records: Uint32Array, at: number) => records[at * RECORD + 10]!,
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
    this.memory = new WA.Memory({ initial: 16, maximum: STUB_HEAP_MAX_PAGES });
    const env = {
      memory: this.memory,
      abort: (_message: number, _file: number, line: number, column: number) => {
        throw new Error(`JSONL scanner (jsonl.wasm) aborted at ${line}:${column}`);
      },
    };
    this.x = unsignedResults(new WA.Instance(mod, { env }).exports as unknown as JsonlExports, ['inputPointer', 'arenaPointer', 'recordsPointer']);
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
