import { basename, join } from 'node:path';
import { Grow, Utf8Sink } from './buffers.js';
import { writeWhole } from './format.js';
import { GrepIndexBuilder } from './grep/builder.js';
import { GrepWords } from './grep/words.js';
import { WordKernel } from './word-kernel.js';

/** A text shard as the manifest records it. */
export interface ShardInfo {
  file: string;
  firstDoc: number;
  start: number;
  bytes: number;
}

/**
 * The part of an index build that needs only the chunk texts: the text shards with their offsets
 * (text.<k>.bin, text.off) and the grep prefilter (grep.bin). The builder runs it in a worker
 * thread (grep-worker.ts) beside the postings, or in its own thread.
 */
export class TextSide {
  private readonly sink: Utf8Sink;
  private readonly offsets = new Grow(Float64Array);
  private readonly grep = new GrepIndexBuilder();
  /** The grep words: the WebAssembly loop over the text's UTF-8 (also what is written), or TypeScript's. */
  private readonly kernel: WordKernel | undefined;
  private readonly words: GrepWords | undefined;

  /** `wasm`: split words with the WebAssembly loop when it is built (the default). */
  constructor(private readonly dir: string, shardBytes: number, wasm = true) {
    this.sink = new Utf8Sink((k) => join(dir, `text.${k}.bin`), shardBytes);
    this.offsets.push(0);
    this.kernel = wasm ? WordKernel.create() : undefined;
    if (!this.kernel) this.words = new GrepWords();
  }

  /** Add document `doc`'s text; documents come in order 0, 1, 2, ... */
  add(doc: number, text: string): void {
    if (this.kernel) {
      this.sink.writeBytes(this.kernel.encode(text), text.length);
      this.grep.addWords(doc, this.kernel.grepWords(doc));
    } else {
      this.sink.write(text);
      this.grep.addWords(doc, this.words!.wordsOf(doc, text));
    }
    this.offsets.push(this.sink.position);
  }

  /** Write the remaining files; returns the text shards for the manifest. */
  finish(): ShardInfo[] {
    this.sink.close();
    writeWhole(join(this.dir, 'text.off'), this.offsets.view());
    this.grep.write(this.dir, this.kernel ? this.kernel.grepVocabulary() : this.words!.words());
    return this.shards();
  }

  /** Close the text file after a failure (nothing more is written). */
  close(): void {
    this.sink.close();
  }

  private shards(): ShardInfo[] {
    return this.sink.files.map((f) => ({ file: basename(f.file), firstDoc: f.firstItem, start: f.start, bytes: f.bytes }));
  }
}
