import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { SearchEnvironment } from '../../suites/search/env.js';
import { searchBackend } from '../../suites/search/search-workers.js';
import { InputError } from '../../errors.js';
import { closeServer, listen, serveUntilStopped } from '../../http/lifecycle.js';
import { SearchMcp } from '../../mcp/server.js';
import { defaultRubric, resolveRubric } from '../../suites/registry.js';
import { searchSuite } from '../../suites/search/suite.js';
import { defaultIndexDir, openIndex } from '../../search/index.js';
import { loadTaskSet } from '../../tasks/registry.js';
import { packageRoot } from '../../tasks/store.js';
import type { Task } from '../../tasks/task.js';
import { intFlag, parseFlags, type Command } from '../command.js';

const usage = `usage: sleuth mcp [--index DIR] [--tasks SET [--split S] [--task ID] [--rubric NAME]]
                 [--http [--port N]] [--max-turns N] [--workers N]

The search harness as an MCP server: the tools bm25_search, grep_corpus, read_document, curate,
drop_curated and finish, with the JSON Schemas models are trained with. One MCP session is one
episode: its own seen, read and curated sets, the turn budget and the error messages of training.
  --index DIR     index directory (default: the task set's, else ${defaultIndexDir()})
  --tasks SET     give each session a task of SET (in order, cycling; the task is in the server's
                  instructions and its 'search_task' prompt), and let finish return the reward
  --split S       the split of SET (default eval)
  --task ID       every session gets this task
  --rubric NAME   the reward finish reports (default ${searchSuite.defaultRubric}, as in training)
  --http          serve streamable HTTP on http://127.0.0.1:PORT/mcp (many sessions) instead of stdio
  --port N        port for --http (default 8765; 0 picks a free one)
  --max-turns N   tool calls per episode (default 40, the search environment's turn budget)
  --workers N     search worker threads (default 0: searches run in the server's thread)

With stdio the protocol owns stdout; messages go to stderr. Claude Code:
  claude mcp add sleuth -- npx sleuth mcp --index DIR`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      index: { type: 'string' },
      tasks: { type: 'string' },
      split: { type: 'string' },
      task: { type: 'string' },
      rubric: { type: 'string' },
      http: { type: 'boolean' },
      port: { type: 'string' },
      'max-turns': { type: 'string' },
      workers: { type: 'string' },
    }, 'mcp');
    if (positionals.length) throw new InputError(`unexpected argument '${positionals[0]}'`);
    for (const flag of ['split', 'task', 'rubric'] as const) if (values[flag] !== undefined && values.tasks === undefined) throw new InputError(`--${flag} goes with --tasks SET`);
    if (values.port !== undefined && !values.http) throw new InputError('--port goes with --http');
    const port = intFlag(values.port, 'port', 8765, 0, 65535);
    const maxTurns = intFlag(values['max-turns'], 'max-turns', 40, 1, 10_000);
    const workers = intFlag(values.workers, 'workers', 0, 0, 256);
    const rubric = values.rubric ? resolveRubric(values.rubric) : defaultRubric(searchSuite.kind);
    if (rubric.kind !== searchSuite.kind) throw new InputError(`--rubric ${rubric.name} scores ${rubric.kind} rollouts; the MCP server runs the search environment`);

    let tasks: Task[] | undefined;
    let indexDir = values.index;
    if (values.tasks !== undefined) {
      const set = await loadTaskSet(values.tasks);
      tasks = set.tasks(values.split ?? 'eval');
      if (values.task !== undefined) {
        const one = tasks.find((t) => t.id === values.task);
        if (!one) throw new InputError(`--task '${values.task}': no such task in ${set.name}/${values.split ?? 'eval'}`);
        tasks = [one];
      }
      if (tasks.length === 0) throw new InputError(`--tasks ${values.tasks} --split ${values.split ?? 'eval'}: no tasks`);
      indexDir ??= set.indexDir;
    }
    indexDir ??= defaultIndexDir();
    const index = await openIndex(indexDir);
    const { backend, close } = await searchBackend(indexDir, index, workers);
    const env = new SearchEnvironment(backend);
    const version = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
    const mcp = new SearchMcp({ env, budgets: { ...env.defaultBudgets, maxTurns }, ...(tasks ? { tasks, rubric } : {}), version });
    const what = `${index.size} chunks${tasks ? `, ${tasks.length} tasks (${rubric.name} reward)` : ''}`;

    if (values.http) {
      const server = mcp.httpServer();
      let bound: number;
      try {
        bound = await listen(server, port, '127.0.0.1');
      } catch (err) {
        await close();
        throw err;
      }
      console.log(`MCP (streamable HTTP) on http://127.0.0.1:${bound}/mcp over ${what}`);
      // A session's stream (GET /mcp) stays open as long as its client: cut it rather than wait.
      await serveUntilStopped('sleuth mcp', () => closeServer(server, { cut: true }));
    } else {
      const { server } = mcp.session();
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
      await server.connect(transport);
      process.stderr.write(`sleuth mcp: serving on stdio over ${what}\n`);
      // The client closes stdin when it is done.
      await Promise.race([closed, new Promise<void>((resolve) => process.stdin.once('end', resolve))]);
    }
    await close();
    return 0;
  },
};
