import { isUtf8 } from 'node:buffer';

/**
 * Bytes that are not UTF-8 are decoded as U+FFFD, as every reader must; but never silently. Each
 * file's invalid lines are counted and reported once, with the file and the first such line, so
 * the user knows their corpus or task file is not what they thought (Latin-1 exported as .jsonl).
 */

/** The 1-based numbers of the lines of `bytes` (starting at `firstLine`) that are not valid UTF-8. */
export function invalidUtf8Lines(bytes: Uint8Array, firstLine: number): number[] {
  if (isUtf8(bytes)) return [];
  const out: number[] = [];
  let start = 0;
  for (let line = firstLine; start < bytes.length; line++) {
    let nl = bytes.indexOf(10, start);
    if (nl === -1) nl = bytes.length;
    if (!isUtf8(bytes.subarray(start, nl))) out.push(line);
    start = nl + 1;
  }
  return out;
}

/** Counts one file's invalid lines as they are read, and says so at the end. */
export class InvalidUtf8Tally {
  private count = 0;
  private first: number | undefined;

  constructor(private readonly path: string) {}

  /** Record the invalid lines of a batch; returns them (empty when all are valid). */
  add(bytes: Uint8Array, firstLine: number): number[] {
    const lines = invalidUtf8Lines(bytes, firstLine);
    if (lines.length > 0) {
      this.count += lines.length;
      this.first ??= lines[0];
    }
    return lines;
  }

  /** The warning, or undefined when every line was valid. */
  message(): string | undefined {
    if (this.count === 0) return undefined;
    return `${this.path}: ${this.count.toLocaleString('en-US')} line${this.count === 1 ? '' : 's'} held bytes that are not UTF-8, read as U+FFFD (first: line ${this.first})`;
  }

  /** Print the warning on stderr, if there is one. */
  report(): void {
    const message = this.message();
    if (message !== undefined) process.stderr.write(`sleuth: warning: ${message}\n`);
  }
}

/** A whole file's bytes as text, with its invalid lines reported as readLineBytes does. */
export function decodeWhole(path: string, bytes: Buffer): string {
  const tally = new InvalidUtf8Tally(path);
  tally.add(bytes, 1);
  tally.report();
  return bytes.toString('utf8');
}
