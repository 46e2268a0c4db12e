import { availableParallelism } from 'node:os';
import { SearchWorkers } from '../../suites/search/search-workers.js';
import { InputError } from '../../errors.js';
import { createRetrievalServer } from '../../retrieval/server.js';
import { defaultIndexDir, openIndex } from '../../search/index.js';
import { readSharedBytes } from '../../search/open.js';
import { intFlag, parseFlags, type Command } from '../command.js';
import { closeServer, listen, pidFileFlag, serveUntilStopped } from '../../http/lifecycle.js';

const usage = `usage: sleuth serve-search [--index DIR] [--port N] [--host ADDR] [--workers N] [--topk N] [--max-k N] [--pid-file PATH]

sleuth's BM25 and grep over HTTP, for RL trainers and other programs:
  POST /retrieve   Search-R1's retrieval API, as verl's and SkyRL's search tools call it:
                   {"queries": [...], "topk": 3, "return_scores": true}
                   -> {"result": [[{"document": {"id", "contents": "\\"Title\\"\\ntext"}, "score"}]]}
  POST /search     {"query": "...", "k": 10} or {"queries": [...]} -> sleuth search --json's shape
  POST /grep       {"pattern": "...", "k": 10, "time_limit_ms": 1000} -> sleuth grep --json's shape
  GET  /health     {"ok": true, "chunks": N}

  --index DIR   index directory (default ${defaultIndexDir()})
  --port N      port (default 8000, as Search-R1's server; 0 picks a free one)
  --host ADDR   address to bind (default 127.0.0.1)
  --workers N   search worker threads, each answering one query at a time (default: the cores, ${availableParallelism()})
  --topk N      hits per query when /retrieve gives no topk (default 3, as Search-R1's --topk)
  --max-k N     most hits one query may ask for (default 1000)
  --pid-file PATH  write the server's process id here (removed when it stops)

Prints "listening on http://HOST:PORT" when ready, its PID on stderr; stops cleanly on
Ctrl-C, kill PID (SIGTERM) or SIGHUP, saying so.`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      index: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      workers: { type: 'string' },
      topk: { type: 'string' },
      'max-k': { type: 'string' },
      'pid-file': { type: 'string' },
    }, 'serve-search');
    if (positionals.length) throw new InputError(`unexpected argument '${positionals[0]}'`);
    const port = intFlag(values.port, 'port', 8000, 0, 65535);
    const host = values.host ?? '127.0.0.1';
    const workers = intFlag(values.workers, 'workers', availableParallelism(), 1, 256);
    const maxK = intFlag(values['max-k'], 'max-k', 1000, 1, 100_000);
    const defaultTopk = intFlag(values.topk, 'topk', 3, 1, maxK);
    const indexDir = values.index ?? defaultIndexDir();
    const pidFile = pidFileFlag(values['pid-file']);
    // The chunk texts and the grep prefilter are read once into memory that every worker and this
    // thread's index view: /retrieve returns whole texts, read here, and a lazily read text costs a
    // disk read inside a request.
    const shared = readSharedBytes(indexDir);
    const index = await openIndex(indexDir, { shared });
    process.stderr.write(`loading ${index.size} chunks into ${workers} search workers ...\n`);
    const pool = await SearchWorkers.open(indexDir, index, { workers, shared });
    index.store.loadAll();
    const server = createRetrievalServer({ backend: pool, chunks: index.size, defaultTopk, maxK });
    let bound: number;
    try {
      bound = await listen(server, port, host);
    } catch (err) {
      await pool.close();
      throw err;
    }
    console.log(`listening on http://${host}:${bound}`);
    await serveUntilStopped('sleuth serve-search', async () => {
      await closeServer(server);
      await pool.close();
    }, pidFile);
    return 0;
  },
};
