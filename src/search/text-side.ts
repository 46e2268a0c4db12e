import { basename, join } from 'node:path';
import { Grow, Utf8Sink } from './buffers.js';
import { writeWhole } from './format.js';
import { GrepIndexBuilder } from './grep/builder.js';

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

  constructor(private readonly dir: string, shardBytes: number) {
    this.sink = new Utf8Sink((k) => join(dir, `text.${k}.bin`), shardBytes);
    this.offsets.push(0);
  }

  /** Add document `doc`'s text; documents come in order 0, 1, 2, ... */
  add(doc: number, text: string): void {
    this.sink.write(text);
    this.offsets.push(this.sink.position);
    this.grep.add(doc, text);
  }

  /** Write the remaining files; returns the text shards for the manifest. */
  finish(): ShardInfo[] {
    this.sink.close();
    writeWhole(join(this.dir, 'text.off'), this.offsets.view());
    this.grep.write(this.dir);
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
