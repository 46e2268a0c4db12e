import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { jsonDepth, MAX_JSON_DEPTH } from '../corpus/json-depth.js';
import { isInputError } from '../errors.js';
import { decompressCapped, OverCap } from './decompress.js';

/**
 * Reading a request, the same way in every sleuth server: the body under a byte limit (before and
 * after decompression), its Content-Encoding, and JSON under a nesting limit, each refused with a
 * 4xx that says what is wrong.
 */

/**
 * A request that cannot be answered as asked: its HTTP status, a one-line reason, the headers its
 * answer carries (allow, retry-after, ...) and, for APIs that have one, a machine-readable code.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Any error as the answer it gets: an HttpError as it is, bad input (InputError) 400, anything else 500. */
export function asHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  return new HttpError(isInputError(err) ? 400 : 500, err instanceof Error ? err.message : String(err));
}

/** The default largest body, before and after decompression. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface BodyLimits {
  /** Largest body in bytes, as sent and once decompressed (default MAX_BODY_BYTES). */
  maxBytes?: number;
  /**
   * Deepest nesting of arrays and objects (default MAX_JSON_DEPTH, as for a corpus record): the
   * recursive code that walks a body next (zod, JSON.stringify) must not overflow its stack.
   */
  maxDepth?: number;
}

/**
 * The whole body, up to `maxBytes`. A larger body is read to its end but not kept, then refused
 * with 413: a client still sending would otherwise see a reset rather than the answer.
 */
export function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size <= maxBytes) parts.push(b);
      else parts.length = 0;
    });
    req.on('end', () => (size > maxBytes ? fail(new HttpError(413, `request body of ${size} bytes is over the limit of ${maxBytes} bytes`)) : ok(Buffer.concat(parts))));
    req.on('error', fail);
  });
}

/** The body as sent, inflated per its Content-Encoding (identity, gzip or zstd) with the same cap. */
export async function readDecodedBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<Uint8Array> {
  const raw = await readBody(req, maxBytes);
  const encoding = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') return raw;
  if (encoding !== 'gzip' && encoding !== 'zstd') throw new HttpError(415, `Content-Encoding '${encoding}' is not accepted (identity, zstd or gzip)`);
  try {
    return await decompressCapped(raw, encoding, maxBytes);
  } catch (err) {
    if (err instanceof OverCap) throw new HttpError(413, `request body over ${maxBytes} bytes once decompressed`);
    throw new HttpError(400, `request body is not valid ${encoding} (${(err as Error).message})`);
  }
}

/** The request's media type, lower case and without parameters; application/json when none is given. */
export function mediaType(req: IncomingMessage): string {
  return String(req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
}

/** JSON text as a value: 400 when it is not JSON, or nests deeper than `maxDepth`. */
export function parseJson(bytes: Uint8Array, maxDepth = MAX_JSON_DEPTH): unknown {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (err) {
    throw new HttpError(400, `request body is not valid JSON (${(err as Error).message})`);
  }
  if (jsonDepth(value, maxDepth) > maxDepth) throw new HttpError(400, `request body: JSON nested more than ${maxDepth} levels deep`);
  return value;
}

/** The body as JSON: read under the byte limit, decompressed, parsed under the depth limit. */
export async function readJson(req: IncomingMessage, limits: BodyLimits = {}): Promise<unknown> {
  return parseJson(await readDecodedBody(req, limits.maxBytes), limits.maxDepth);
}

/** A parsed body that must be a JSON object (400 otherwise). */
export function jsonObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'request body is not a JSON object');
  return value as Record<string, unknown>;
}

/**
 * A parsed body checked against its schema: `status` (422 by default, as FastAPI answers) naming
 * each field that is wrong, as `WHAT: field.path: what is wrong; ...`.
 */
export function checkBody<S extends z.ZodType>(schema: S, value: unknown, what = 'request body', status = 422): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw new HttpError(status, `${what}: ${r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`);
  return r.data;
}
