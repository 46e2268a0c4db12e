import { resolve } from 'node:path';
import type { Flavor } from '../../backend/tinker/index.js';
import { parseFaults, TinkerServer } from '../../tinker-server/index.js';
import { InputError } from '../../errors.js';
import { intFlag, parseFlags, type Command } from '../command.js';
import { pidFileFlag, serveUntilStopped } from '../../http/lifecycle.js';

const usage = `usage: sleuth serve-tinker [--port N] [--checkpoint PATH] [--model NAME] [--flavor tinker|skyrl]
                          [--dir DIR] [--faults SCRIPT] [--poll-timeout-ms N] [--host ADDR] [--pid-file PATH]

The Tinker REST API (/api/v1/...) over sleuth's local CPU backend, so the Tinker client and
\`sleuth train --backend tinker --base-url http://127.0.0.1:PORT\` run end to end on this machine,
and so does the official Tinker Python SDK (0.25.0 with protobuf and zstd, or JSON): sessions,
create_model, forward, forward_backward, optim_step, save_weights(_for_sampler), load_weights,
weights_info, asample (string or token-id stops), retrieve_future, training_runs and checkpoints
(list, delete, TTL), client/config, with real futures, seq_id ordering (a seq_id rejected with a
4xx is skipped) and idempotency keys. Bodies over 256 MiB get 413.

  --port N            port (default 8000; 0 picks a free one)
  --host ADDR         address to bind (default 127.0.0.1)
  --checkpoint PATH   the local model every training model starts from (default: the shipped
                      pretrained base, served as 'shipped'; without it, a base built on first use)
  --model NAME        the base model name clients ask for (default 'shipped', or 'base' for a
                      --checkpoint or a built base)
  --flavor F          the dialect: tinker (hosted Tinker, default) or skyrl (SkyRL's tx server:
                      400 {detail} errors, 408 polls, per-sequence mean loss)
  --dir DIR           where saved weights go (default .sleuth/tinker-server)
  --faults SCRIPT     inject faults (also $SLEUTH_TINKER_FAULTS): comma-separated rules
                      ENDPOINT:NTH=FAULT[@SECONDS|@NNNms] on the NTH request to ENDPOINT, FAULT one of
                      429 402 408 410 500 502 503 400 try_again lose drop; e.g.
                      forward_backward:1=429@0.5,optim_step:1=lose,retrieve_future:2=try_again
  --poll-timeout-ms N how long retrieve_future waits before answering "pending" (default 5000)
  --pid-file PATH     write the server's process id here (removed when it stops)

Any non-empty X-API-Key is accepted. Prints "listening on http://HOST:PORT" when ready, its PID on
stderr; stops cleanly on Ctrl-C, SIGTERM (kill PID) or SIGHUP.`;

/** The trainer's base-model builder, loaded only when no --checkpoint is given. */
interface BaseModelModule {
  baseSpecOf(partial: Record<string, number | undefined>): unknown;
  ensureBaseModel(spec: unknown, opts?: { log?: (line: string) => void }): Promise<string>;
  shippedBasePath(): string | undefined;
}
const BASE_MODEL_MODULE = '../../backend/local/base-model.js';

export const command: Command = {
  usage,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        port: { type: 'string' },
        host: { type: 'string' },
        checkpoint: { type: 'string' },
        model: { type: 'string' },
        flavor: { type: 'string' },
        dir: { type: 'string' },
        faults: { type: 'string' },
        'poll-timeout-ms': { type: 'string' },
        'pid-file': { type: 'string' },
      },
      'serve-tinker',
    );
    if (positionals.length) throw new InputError(`unexpected argument '${positionals[0]}'`);
    const port = intFlag(values.port, 'port', 8000, 0, 65535);
    const host = values.host ?? '127.0.0.1';
    const flavor = values.flavor ?? 'tinker';
    if (flavor !== 'tinker' && flavor !== 'skyrl') throw new InputError(`--flavor must be tinker or skyrl, got '${flavor}'`);
    const pidFile = pidFileFlag(values['pid-file']);
    const pollTimeoutMs = intFlag(values['poll-timeout-ms'], 'poll-timeout-ms', 5000, 1, 600_000);
    const script = values.faults ?? process.env['SLEUTH_TINKER_FAULTS'] ?? '';
    const faults = parseFaults(script, values.faults !== undefined ? '--faults' : 'SLEUTH_TINKER_FAULTS');
    const log = (line: string) => process.stderr.write(`serve-tinker: ${line}\n`);
    let checkpoint = values.checkpoint;
    // With no --checkpoint, serve what `sleuth train` starts from: the shipped pretrained base
    // (model name 'shipped', as in configs/local-demo.json), else a fresh base built on first use.
    let defaultModelName: string | undefined;
    if (!checkpoint) {
      const mod = (await import(BASE_MODEL_MODULE)) as BaseModelModule;
      const shipped = mod.shippedBasePath();
      if (shipped) [checkpoint, defaultModelName] = [shipped, 'shipped'];
      else [checkpoint, defaultModelName] = [await mod.ensureBaseModel(mod.baseSpecOf({}), { log }), 'base'];
    }
    const modelName = values.model ?? defaultModelName;
    const server = new TinkerServer({
      checkpoint,
      dir: resolve(values.dir ?? '.sleuth/tinker-server'),
      flavor: flavor as Flavor,
      pollTimeoutMs,
      faults,
      log,
      ...(modelName ? { modelName } : {}),
    });
    const bound = await server.listen(port, host);
    if (faults.length) log(`injecting ${faults.length} fault(s): ${script}`);
    console.log(`listening on http://${host}:${bound} (Tinker API, ${flavor} dialect, model '${server.modelName}' from ${checkpoint})`);
    await serveUntilStopped('sleuth serve-tinker', () => server.close(), pidFile);
    return 0;
  },
};
