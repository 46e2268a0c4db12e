import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { InputError } from '../../errors.js';
import { defaultWebDir, startExplorer } from '../../explorer/server.js';
import { intFlag, parseFlags, type Command } from '../command.js';
import { pidFileFlag, serveUntilStopped } from '../../http/lifecycle.js';

const USAGE = `usage: sleuth explore [RUNS_DIR] [--port N] [--host H] [--pid-file PATH]

A local, read-only web app over run directories (default RUNS_DIR: ./runs): the runs, their
charts against step, every rollout turn by turn and token by token, groups and a reward-shape lab.
Runs still going are followed as they grow.

  --port N     port to listen on (default 8520; 0 picks a free one)
  --host H     address to listen on (default 127.0.0.1: this machine only)
  --pid-file PATH  write the server's process id here (removed when it stops)

Stops cleanly on Ctrl-C, SIGTERM (kill PID) or SIGHUP; the PID is printed on stderr.`;

export const command: Command = {
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { port: { type: 'string' }, host: { type: 'string' }, 'pid-file': { type: 'string' } }, 'explore');
    if (positionals.length > 1) throw new InputError(`sleuth explore takes one RUNS_DIR, got ${positionals.length}: ${positionals.join(' ')}`);
    const runsDir = resolve(positionals[0] ?? 'runs');
    if (!existsSync(runsDir)) throw new InputError(`RUNS_DIR ${runsDir} does not exist`);
    if (!statSync(runsDir).isDirectory()) throw new InputError(`RUNS_DIR ${runsDir} is not a directory`);
    const port = intFlag(values.port, 'port', 8520, 0, 65535);
    const host = values.host ?? '127.0.0.1';
    const pidFile = pidFileFlag(values['pid-file']);
    const webDir = defaultWebDir();
    if (!existsSync(webDir)) throw new InputError(`the explorer's front end is not built (${webDir} is missing): run npm run build`);
    const explorer = await startExplorer({ runsDir, port, host, webDir });
    console.log(`sleuth explore: ${runsDir}\nlistening on ${explorer.url} (read-only; Ctrl-C to stop)`);
    if (!['127.0.0.1', 'localhost', '::1'].includes(host)) console.error(`sleuth explore: --host ${host} makes every run in ${runsDir} readable by anyone who can reach this address (there is no login)`);
    await serveUntilStopped('sleuth explore', () => explorer.close(), pidFile);
    return 0;
  },
};
