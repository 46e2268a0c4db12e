import { loadSampler } from '../../backend/local/backend.js';
import { verifyRecordedCheckpoint } from '../../runs/checkpoints.js';
import { createOpenAIServer } from '../../openai-server/server.js';
import { InputError } from '../../errors.js';
import { intFlag, parseFlags, type Command } from '../command.js';
import { closeServer, listen, pidFileFlag, serveUntilStopped } from '../../http/lifecycle.js';

const usage = `usage: sleuth serve --checkpoint PATH [--port N] [--host ADDR] [--pid-file PATH]

An OpenAI-compatible endpoint over a local checkpoint (a *.sampler.ckpt or *.state.ckpt file):
  GET  /v1/models, /v1/models/ID
  POST /v1/chat/completions   messages and tools (compact format), tool calls in OpenAI's shape,
                              tool_choice none|auto|required|{function}, logprobs + top_logprobs
  POST /v1/completions        text or token-id prompts (or a batch), logprobs with top alternatives
Both: stop strings, n, seed, stream (server-sent events; stream_options.include_usage). Parameters
it does not implement (response_format, penalties, echo, ...) get a 400 naming them.

  --checkpoint PATH   the local model checkpoint
  --port N            port (default 8000; 0 picks a free one)
  --host ADDR         address to bind (default 127.0.0.1)
  --pid-file PATH     write the server's process id here (removed when it stops)

Prints "listening on http://HOST:PORT/v1" when ready, its PID on stderr; stops cleanly on
Ctrl-C, SIGTERM (kill PID) or SIGHUP.`;

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { checkpoint: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'pid-file': { type: 'string' } }, 'serve');
    if (positionals.length) throw new InputError(`unexpected argument '${positionals[0]}'`);
    if (!values.checkpoint) throw new InputError('--checkpoint PATH is required');
    const port = intFlag(values.port, 'port', 8000, 0, 65535);
    const host = values.host ?? '127.0.0.1';
    const pidFile = pidFileFlag(values['pid-file']);
    // A checkpoint of a run is checked against the checksum its run recorded (checkpoints.jsonl).
    verifyRecordedCheckpoint(values.checkpoint);
    const sampler = loadSampler(values.checkpoint);
    const server = createOpenAIServer({ sampler });
    const bound = await listen(server, port, host);
    console.log(`listening on http://${host}:${bound}/v1`);
    await serveUntilStopped('sleuth serve', () => closeServer(server), pidFile);
    return 0;
  },
};
