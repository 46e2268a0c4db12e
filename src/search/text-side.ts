import { basename, join } from 'node:path';
import { Grow, Utf8Sink } from './buffers.js';
import { Lz4TextSink } from './compressed-texts.js';
import { writeWhole } from './format.js';
import { GrepIndexBuilder, writeGrepFile } from './grep/builder.js';
import { WordKernel, type KernelGrepList } from './word-loops.js';

/** A text shard as the manifest records it. */
export interface ShardInfo {
  file: string;
  firstDoc: number;
  start: number;
  bytes: number;
}

/**
 * The chunk texts as stored: UTF-8 in text.<k>.bin shards, or compressed in text.<k>.lz4 ones
 * (compressed-texts.ts), and their offsets in text.off (of the uncompressed bytes either way).
 */
export class TextShards {
  private readonly sink: Utf8Sink | Lz4TextSink;
  private readonly offsets = new Grow(Float64Array);

  constructor(private readonly dir: string, shardBytes: number, compress = false) {
    this.sink = compress ? new Lz4TextSink((k) => join(dir, `text.${k}.lz4`), shardBytes) : new Utf8Sink((k) => join(dir, `text.${k}.bin`), shardBytes);
    this.offsets.push(0);
  }

  /** Append the next document's text. */
  add(text: string): void {
    this.sink.write(text);
    this.offsets.push(this.sink.position);
  }

  /** Append the next document's text, already encoded (`units`: its length in UTF-16 code units). */
  addUtf8(bytes: Uint8Array, units: number): void {
    this.sink.writeBytes(bytes, units);
    this.offsets.push(this.sink.position);
  }

  /** Write the remaining files; returns the text shards for the manifest. */
  finish(): ShardInfo[] {
    this.sink.close();
    writeWhole(join(this.dir, 'text.off'), this.offsets.view());
    return this.sink.files.map((f) => ({ file: basename(f.file), firstDoc: f.firstItem, start: f.start, bytes: f.bytes }));
  }

  /** Close the text file after a failure (nothing more is written). */
  close(): void {
    this.sink.close();
  }
}

/**
 * What an index build does with each chunk's text apart from BM25: store it (TextShards) and build
 * the grep prefilter (grep.bin). The part of a build the builder hands to a worker thread
 * (grep-worker.ts), or runs in its own thread.
 */
export class TextSide {
  private readonly shards: TextShards;
  /** The WebAssembly forward list (splitting, numbering and marking in one loop over UTF-8), or TypeScript's over the strings. */
  private readonly kernel: WordKernel | undefined;
  private readonly list: KernelGrepList | undefined;
  private readonly builder: GrepIndexBuilder | undefined;

  /** `wasm`: split words with the WebAssembly loop when it is built (the default); `compress`: store the texts compressed. */
  constructor(private readonly dir: string, shardBytes: number, wasm = true, compress = false) {
    this.shards = new TextShards(dir, shardBytes, compress);
    this.kernel = wasm ? WordKernel.create() : undefined;
    if (this.kernel) this.list = this.kernel.grepList();
    else this.builder = new GrepIndexBuilder();
  }

  /** Whether addUtf8 can be used (the WebAssembly loop is running). */
  get takesUtf8(): boolean {
    return this.kernel !== undefined;
  }

  /** Add document `doc`'s text; documents come in order 0, 1, 2, ... */
  addText(doc: number, text: string): void {
    this.shards.add(text);
    if (this.kernel) {
      this.kernel.encode(text);
      this.list!.add(doc);
    } else {
      this.builder!.add(doc, text);
    }
  }

  /** Add document `doc`'s text as UTF-8 (`units`: its length in UTF-16 code units; only when takesUtf8). */
  addUtf8(doc: number, bytes: Uint8Array, units: number): void {
    if (!this.kernel) throw new Error('TextSide.addUtf8 needs the WebAssembly word loop');
    this.shards.addUtf8(bytes, units);
    this.kernel.setInput(bytes);
    this.list!.add(doc);
  }

  /** Write the rest of the text shards, text.off and grep.bin; returns the shards for the manifest. */
  finish(): ShardInfo[] {
    const shards = this.shards.finish();
    if (this.list) writeGrepFile(this.dir, this.list, this.list.words());
    else this.builder!.write(this.dir);
    return shards;
  }

  /** Close the text file after a failure (nothing more is written). */
  close(): void {
    this.shards.close();
  }
}
