import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';

export interface Line {
  /** 1-based line number in the file. */
  number: number;
  text: string;
}

/**
 * The lines of a UTF-8 file, streamed: memory holds one read buffer plus the current line, never
 * the file; `.gz` files are decompressed on the fly. onBytes reports how many bytes have been consumed so far (for progress bars).
 */
export async function* readLines(path: string, onBytes?: (bytes: number) => void): AsyncGenerator<Line> {
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let number = 0;
  const file = createReadStream(path, { highWaterMark: 1 << 20 });
  let source: AsyncIterable<Buffer> = file;
  if (path.endsWith('.gz')) {
    const gunzip = createGunzip();
    file.on('error', (err) => gunzip.destroy(err));
    source = file.pipe(gunzip);
  }
  for await (const buf of source) {
    const s = carry + decoder.write(buf);
    let start = 0;
    let nl: number;
    while ((nl = s.indexOf('\n', start)) !== -1) {
      number++;
      yield { number, text: s.charCodeAt(nl - 1) === 13 ? s.slice(start, nl - 1) : s.slice(start, nl) };
      start = nl + 1;
    }
    carry = s.slice(start);
    // Progress counts bytes of the file on disk, compressed or not.
    onBytes?.(file.bytesRead);
  }
  const rest = carry + decoder.end();
  if (rest.length > 0) yield { number: number + 1, text: rest.endsWith('\r') ? rest.slice(0, -1) : rest };
}
