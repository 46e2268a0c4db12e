import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InputError } from '../../src/errors.js';
import { closeServer, listen } from '../../src/http/lifecycle.js';
import { MAX_JSON_DEPTH } from '../../src/corpus/json-depth.js';
import { asHttpError, checkBody, HttpError, jsonObject, readJson } from '../../src/http/request.js';
import { sendJson } from '../../src/http/response.js';

/**
 * The request toolkit every server reads with, behind a real server on 127.0.0.1: POST /echo
 * answers the JSON body it read (limit 4 KiB), POST /point checks it against a schema, and every
 * refusal is answered as the servers answer it: the error's status and {error}.
 */
const LIMIT = 4096;
const Point = z.object({ x: z.number(), y: z.number() });

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const body = await readJson(req, { maxBytes: LIMIT });
    if (req.url === '/point') return sendJson(res, 200, checkBody(Point, jsonObject(body), 'point'));
    sendJson(res, 200, { echo: body });
  } catch (err) {
    const e = asHttpError(err);
    sendJson(res, e.status, { error: e.message }, e.headers);
  }
}

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  port = await listen(server, 0);
});
afterAll(() => closeServer(server));

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** POST `body` with node:http (fetch would not let a test send a declared gzip body as it is). */
function post(path: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        expect(Buffer.byteLength(text)).toBe(Number(res.headers['content-length']));
        ok({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> });
      });
    });
    req.on('error', fail);
    req.end(body);
  });
}

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('reading a request body', () => {
  it('answers JSON it read, with its Content-Length', async () => {
    const r = await post('/echo', JSON.stringify({ q: 'capital of France', k: 3 }));
    expect(r).toMatchObject({ status: 200, body: { echo: { q: 'capital of France', k: 3 } } });
  });

  it('refuses a body over the limit with 413, read to its end so the client sees the answer, and closes the connection', async () => {
    const r = await post('/echo', JSON.stringify({ text: 'x'.repeat(4 * LIMIT) }));
    expect(r.status).toBe(413);
    expect(r.body['error']).toMatch(/^request body of \d+ bytes is over the limit of 4096 bytes$/);
    expect(r.headers['connection']).toBe('close');
    expect((await post('/echo', '{"after": true}')).body).toEqual({ echo: { after: true } });
  });

  it('refuses malformed JSON with 400 saying so', async () => {
    const r = await post('/echo', '{"q": "unterminated');
    expect(r.status).toBe(400);
    expect(r.body['error']).toMatch(/^request body is not valid JSON \(/);
  });

  it('inflates a gzip body, and refuses a gzip bomb (small as sent, huge inflated) with 413', async () => {
    const small = await post('/echo', gzipSync('{"zipped": [1, 2, 3]}'), { 'content-encoding': 'gzip' });
    expect(small).toMatchObject({ status: 200, body: { echo: { zipped: [1, 2, 3] } } });
    // 2 MiB of spaces is about 2 KiB of gzip: within the limit as sent, 512 times past it inflated.
    const bomb = gzipSync(Buffer.alloc(2 << 20, 0x20), { level: 9 });
    expect(bomb.length).toBeLessThan(LIMIT);
    const r = await post('/echo', bomb, { 'content-encoding': 'gzip' });
    expect(r.status).toBe(413);
    expect(r.body['error']).toBe('request body over 4096 bytes once decompressed');
  });

  it('refuses a body that is not the gzip it claims (400) and an encoding it does not take (415)', async () => {
    const notGzip = await post('/echo', '{"plain": true}', { 'content-encoding': 'gzip' });
    expect(notGzip.status).toBe(400);
    expect(notGzip.body['error']).toMatch(/^request body is not valid gzip \(/);
    const br = await post('/echo', '{"plain": true}', { 'content-encoding': 'br' });
    expect(br).toMatchObject({ status: 415, body: { error: "Content-Encoding 'br' is not accepted (identity, zstd or gzip)" } });
  });

  it(`takes JSON nested ${MAX_JSON_DEPTH} levels deep, refuses one level more with 400, and does not count brackets inside strings`, async () => {
    expect((await post('/echo', nested(MAX_JSON_DEPTH))).status).toBe(200);
    const deep = await post('/echo', nested(MAX_JSON_DEPTH + 1));
    expect(deep).toMatchObject({ status: 400, body: { error: `request body: JSON nested more than ${MAX_JSON_DEPTH} levels deep` } });
    // In a string, brackets are text.
    const quoted = JSON.stringify({ text: `[{"${nested(MAX_JSON_DEPTH + 10)}` });
    expect(await post('/echo', quoted)).toMatchObject({ status: 200, body: { echo: JSON.parse(quoted) } });
  });

  it('checks a body against its schema: 422 naming every field that is wrong; not an object is 400', async () => {
    expect((await post('/point', '{"x": 1, "y": 2}')).body).toEqual({ x: 1, y: 2 });
    const wrong = await post('/point', '{"x": "one"}');
    expect(wrong.status).toBe(422);
    expect(wrong.body['error']).toMatch(/^point: x: .*; y: /);
    expect(await post('/point', '[1, 2]')).toMatchObject({ status: 400, body: { error: 'request body is not a JSON object' } });
  });
});

describe('errors as answers', () => {
  it('keeps an HttpError, makes bad input a 400 and anything else a 500', () => {
    const allowed = new HttpError(405, 'use POST', { allow: 'POST' });
    expect(asHttpError(allowed)).toBe(allowed);
    expect(asHttpError(new InputError('k must be >= 1'))).toMatchObject({ status: 400, message: 'k must be >= 1' });
    expect(asHttpError(new Error('index lists chunk c1 but cannot read it'))).toMatchObject({ status: 500, message: 'index lists chunk c1 but cannot read it' });
  });
});
