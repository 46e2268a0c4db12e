import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { Decompress } from 'fzstd';

/**
 * A compressed request body inflated with a cap on its output, without holding the event loop.
 * A bomb (99 KB of zstd that inflates to 3 GiB) must cost no more than `cap` bytes of memory and
 * must be refused as soon as it passes the cap, while other requests (healthz) are answered.
 *  - gzip: zlib's own cap (maxOutputLength), inflated on libuv's thread pool.
 *  - zstd: Node 20's zlib has no zstd, and fzstd decodes on this thread; it is fed a few hundred
 *    bytes at a time, counting its output block by block (a block is at most 128 KiB) and giving
 *    the event loop a turn between feeds. A few bytes of input can be a whole block of a repeated
 *    byte, so the feed is small: at most 64 blocks (8 MiB) of work between turns.
 */
export class OverCap extends Error {
  constructor(readonly cap: number) {
    super(`over ${cap} bytes once decompressed`);
  }
}

const gunzipAsync = promisify(gunzip);
/** Compressed bytes per zstd feed: 256 bytes are at most 64 blocks of 3-byte header + 1 byte. */
const ZSTD_FEED = 256;

/** `raw` inflated from `encoding` ('gzip' or 'zstd'); OverCap past `cap` bytes; other errors as the decoder throws them. */
export async function decompressCapped(raw: Uint8Array, encoding: 'gzip' | 'zstd', cap: number): Promise<Uint8Array> {
  if (encoding === 'gzip') {
    try {
      return await gunzipAsync(raw, { maxOutputLength: cap + 1 }).then((b) => {
        if (b.length > cap) throw new OverCap(cap);
        return b;
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new OverCap(cap);
      throw err;
    }
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  const stream = new Decompress((chunk) => {
    size += chunk.length;
    // Thrown from inside push(): decoding stops at the block that passed the cap.
    if (size > cap) throw new OverCap(cap);
    // fzstd may reuse its window buffer for the next block: keep a copy.
    parts.push(chunk.slice());
  });
  for (let at = 0; at < raw.length; at += ZSTD_FEED) {
    const end = Math.min(at + ZSTD_FEED, raw.length);
    stream.push(raw.subarray(at, end), end === raw.length);
    await new Promise((r) => setImmediate(r));
  }
  if (raw.length === 0) stream.push(raw, true);
  return Buffer.concat(parts);
}
