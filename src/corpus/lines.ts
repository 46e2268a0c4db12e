import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { InvalidUtf8Tally } from './utf8.js';

export interface Line {
  /** 1-based line number in the file. */
  number: number;
  text: string;
}

/** Decode one line's bytes, without a trailing \r (CRLF files) or a leading byte-order mark (`first`: the file's first line). */
export function decodeLine(buf: Buffer, start: number, end: number, first: boolean): string {
  if (end > start && buf[end - 1] === 13) end--;
  const text = buf.toString('utf8', start, end);
  return first && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The lines of a UTF-8 file, streamed: memory holds one read buffer plus the current line, never
 * the file; `.gz` files are decompressed on the fly. Lines are split on the bytes, and each line
 * is decoded once. onBytes reports how many bytes of the file (as on disk) have been consumed.
 */
export async function* readLines(path: string, onBytes?: (bytes: number) => void): AsyncGenerator<Line> {
  for await (const batch of readLineBatches(path, onBytes)) yield* batch;
}

/** Whole lines of a file, as bytes: each ended by '\n' but perhaps the file's last. */
export interface LineBytes {
  bytes: Buffer;
  /** 1-based number of the first line. */
  firstLine: number;
  /** The numbers of its lines that are not valid UTF-8 (usually none). */
  invalid: number[];
}

/**
 * The lines of a file a read buffer at a time (64 KiB of lines per batch), as bytes: an indexer
 * reading millions of lines pays one asynchronous step per batch instead of one per line. Not
 * more: a batch's strings live until its last line is used, and a megabyte's worth outlived the
 * young generation, so that at a million chunks the old generation filled with them (400 MB of
 * heap instead of 100, measured). `.gz` files are decompressed on the fly; onBytes reports how
 * many bytes of the file (as on disk) have been consumed. Lines that are not valid UTF-8 are named
 * in each batch, and counted in one warning on stderr once the file is read (./utf8.ts).
 */
export async function* readLineBytes(path: string, onBytes?: (bytes: number) => void): AsyncGenerator<LineBytes> {
  const file = createReadStream(path, { highWaterMark: 1 << 16 });
  let source: AsyncIterable<Buffer> = file;
  if (path.endsWith('.gz')) {
    const gunzip = createGunzip();
    file.on('error', (err) => gunzip.destroy(err));
    source = file.pipe(gunzip);
  }
  let number = 0;
  // The unfinished last line of the previous reads, if any, in pieces: joined once its end comes,
  // so that a line of many reads is copied once, not once per read.
  let carry: Buffer[] = [];
  const tally = new InvalidUtf8Tally(path);
  for await (const chunk of source) {
    const last = chunk.lastIndexOf(10);
    if (last === -1) {
      carry.push(Buffer.from(chunk));
      continue;
    }
    const bytes = carry.length > 0 ? Buffer.concat([...carry, chunk.subarray(0, last + 1)]) : chunk.subarray(0, last + 1);
    carry = last + 1 < chunk.length ? [Buffer.from(chunk.subarray(last + 1))] : [];
    const firstLine = number + 1;
    for (let nl = bytes.indexOf(10); nl !== -1; nl = bytes.indexOf(10, nl + 1)) number++;
    onBytes?.(file.bytesRead);
    yield { bytes, firstLine, invalid: tally.add(bytes, firstLine) };
  }
  const rest = Buffer.concat(carry);
  if (rest.length > 0) yield { bytes: rest, firstLine: number + 1, invalid: tally.add(rest, number + 1) };
  tally.report();
}

/** readLines a batch of lines at a time (readLineBytes' batches, decoded). */
export async function* readLineBatches(path: string, onBytes?: (bytes: number) => void): AsyncGenerator<Line[]> {
  for await (const { bytes, firstLine } of readLineBytes(path, onBytes)) {
    const batch: Line[] = [];
    let number = firstLine;
    let start = 0;
    while (start < bytes.length) {
      let nl = bytes.indexOf(10, start);
      if (nl === -1) nl = bytes.length;
      batch.push({ number, text: decodeLine(bytes, start, nl, number === 1) });
      number++;
      start = nl + 1;
    }
    yield batch;
  }
}
