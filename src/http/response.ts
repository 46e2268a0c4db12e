import type { ServerResponse } from 'node:http';

/**
 * Sending an answer, the same way in every sleuth server: a whole body with its Content-Length
 * (so a keep-alive client knows where it ends), `headers` over the defaults.
 */

export type Headers = Record<string, string | number>;

/** A whole body. A 413 also closes the connection: the client sent more than the server will read. */
export function send(res: ServerResponse, status: number, body: string | Uint8Array, headers: Headers = {}): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { 'content-length': bytes.byteLength, ...(status === 413 ? { connection: 'close' } : {}), ...headers });
  res.end(bytes);
}

/** A JSON body (content-type application/json unless `headers` names another). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Headers = {}): void {
  send(res, status, JSON.stringify(body), { 'content-type': 'application/json', ...headers });
}
