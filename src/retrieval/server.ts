/**
 * sleuth's index behind the HTTP APIs RL trainers already call.
 *
 * POST /retrieve is Search-R1's retrieval server (search_r1/search/retrieval_server.py in
 * github.com/PeterGriffinJin/Search-R1, `retrieve_endpoint`): request {"queries": [...], "topk": k,
 * "return_scores": bool}; a missing or 0 topk falls back to the server's default; the answer is
 * {"result": [one list per query]}, each entry {"document": {"id", "contents"}, "score"} with
 * return_scores, else the document alone. `contents` is the wiki-18 corpus layout those servers
 * load, `"Title"\ntext`: the title line in double quotes, then the text. The trainers split it
 * there: Search-R1's `_passages2string` (search_r1/llm_agent/generation.py) and verl's
 * (verl/tools/utils/search_r1_like_utils.py) take `contents.split("\n")[0]` as the title and the
 * rest as the text; SkyRL's (skyrl-gym/skyrl_gym/tools/search.py) shows `contents` whole.
 * Search-R1 and verl post {"queries": [...], "topk", "return_scores": true}; SkyRL's SearchToolGroup
 * has posted one query as a string, {"query": "...", "topk", "return_scores": true}, since July
 * 2025 (commit afbf88bcd), and its own server (examples/train/search/retriever/retrieval_server.py)
 * answers that with the same {"result": [one list]}: both shapes are taken, each answered as its
 * own server answers it. A query without searchable words (only stopwords) has no hits: its list
 * is empty, as Search-R1's BM25 server answers it (pyserini finds nothing; `_search` returns []).
 *
 * POST /search and POST /grep answer in sleuth's own JSON, as `sleuth search --json` and
 * `sleuth grep --json` print it. GET /health says the server is up. Every search and grep goes
 * through the SearchBackend it is given: a SearchWorkers's worker threads answer a batch in parallel.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Chunk } from '../corpus/chunk.js';
import type { SearchBackend } from '../suites/search/env.js';
import { isInputError } from '../errors.js';
import { asHttpError, checkBody, HttpError, readJson } from '../http/request.js';
import { sendJson } from '../http/response.js';
import type { SearchHit } from '../search/types.js';

export interface RetrievalServerOptions {
  backend: SearchBackend;
  /** Chunks in the index, for /health. */
  chunks: number;
  /** Hits per query when a /retrieve request gives no topk (Search-R1's --topk, default 3). */
  defaultTopk?: number;
  /** Most hits one query may ask for. */
  maxK?: number;
}

/**
 * Search-R1's QueryRequest (pydantic: queries, a list) or SkyRL's (query, one string); topk
 * optional, return_scores default false.
 */
const RetrieveRequest = z
  .object({
    queries: z.array(z.string()).optional(),
    query: z.string().optional(),
    topk: z.number().int().min(0).nullable().optional(),
    return_scores: z.boolean().default(false),
  })
  .refine((r) => (r.query === undefined) !== (r.queries === undefined), { message: 'give "queries" (a list of strings, Search-R1\'s request) or "query" (one string, SkyRL\'s), one of them', path: ['queries'] });

const k = z.number().int().min(1).optional();
const SearchRequest = z
  .object({ query: z.string().optional(), queries: z.array(z.string()).optional(), k })
  .refine((r) => (r.query === undefined) !== (r.queries === undefined), { message: 'give "query" (a string) or "queries" (a list of strings), one of them' });
const GrepRequest = z.object({ pattern: z.string(), k, time_limit_ms: z.number().int().min(1).max(600_000).optional() });

/** Search-R1's document: the chunk's id and `"Title"\ntext` (a title never holds a line break, so the split finds it). */
export function searchR1Document(chunk: Chunk): { id: string; contents: string } {
  return { id: chunk.id, contents: `"${chunk.title.replace(/\s*\n\s*/gu, ' ')}"\n${chunk.text}` };
}

export function createRetrievalServer(options: RetrievalServerOptions): Server {
  const { backend } = options;
  const defaultTopk = options.defaultTopk ?? 3;
  const maxK = options.maxK ?? 1000;

  const checkK = (value: number | undefined, field: string) => {
    if (value !== undefined && value > maxK) throw new HttpError(422, `${field} ${value} is over this server's limit of ${maxK} (--max-k)`);
  };

  /** BM25 hits of one query; a query without searchable words has none (Search-R1's BM25 answers [] then). */
  const hitsOrNone = async (query: string, topk: number): Promise<SearchHit[]> => {
    try {
      return await backend.search(query, topk);
    } catch (err) {
      if (isInputError(err)) return [];
      throw err;
    }
  };

  const documentOf = (id: string) => {
    const chunk = backend.read(id);
    if (!chunk) throw new Error(`index lists chunk '${id}' but cannot read it`);
    return searchR1Document(chunk);
  };

  async function retrieve(body: unknown) {
    const req = checkBody(RetrieveRequest, body);
    const topk = req.topk ? req.topk : defaultTopk;
    checkK(topk, 'topk');
    // SkyRL's server answers its one query as a list of one list, as Search-R1's answers a batch of one.
    const queries = req.queries ?? [req.query!];
    const lists = await Promise.all(queries.map((q) => hitsOrNone(q, topk)));
    return {
      result: lists.map((hits) => hits.map((h) => (req.return_scores ? { document: documentOf(h.id), score: h.score } : documentOf(h.id)))),
    };
  }

  async function search(body: unknown) {
    const req = checkBody(SearchRequest, body);
    const hitsK = req.k ?? 10;
    checkK(hitsK, 'k');
    const one = async (query: string, at: string) => {
      try {
        return { query, k: hitsK, hits: await backend.search(query, hitsK) };
      } catch (err) {
        if (isInputError(err)) throw new HttpError(400, `${at}: ${err.message}`);
        throw err;
      }
    };
    if (req.query !== undefined) return one(req.query, 'query');
    return { results: await Promise.all(req.queries!.map((q, i) => one(q, `queries[${i}]`))) };
  }

  async function grep(body: unknown) {
    const req = checkBody(GrepRequest, body);
    const hitsK = req.k ?? 10;
    checkK(hitsK, 'k');
    try {
      const found = await backend.grep(req.pattern, { k: hitsK, timeLimitMs: req.time_limit_ms ?? 1000 });
      return { pattern: req.pattern, k: hitsK, ...found };
    } catch (err) {
      if (isInputError(err)) throw new HttpError(400, `pattern: ${err.message}`);
      throw err;
    }
  }

  const routes: Record<string, (body: unknown) => Promise<unknown>> = { '/retrieve': retrieve, '/search': search, '/grep': grep };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/u, '') || '/';
    try {
      if (req.method === 'GET' && path === '/health') return sendJson(res, 200, { ok: true, chunks: options.chunks });
      const route = routes[path];
      if (!route) throw new HttpError(404, `no route ${req.method} ${path} (POST /retrieve, /search, /grep; GET /health)`);
      if (req.method !== 'POST') throw new HttpError(405, `${path} takes POST`, { allow: 'POST' });
      sendJson(res, 200, await route(await readJson(req)));
    } catch (err) {
      const e = asHttpError(err);
      // FastAPI's shape for a request it cannot take ({"detail": ...}), which Search-R1's clients log.
      sendJson(res, e.status, path === '/retrieve' && e.status < 500 ? { detail: e.message } : { error: e.message }, e.headers);
    }
  }

  return createServer((req, res) => void handle(req, res));
}
