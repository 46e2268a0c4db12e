import { isInputError, NumericalError } from '../errors.js';
import { describeFsError } from '../files/fs-error.js';
import type { Command } from './command.js';

/** Subcommands, loaded lazily so that `sleuth read` does not pay for the trainer's imports. */
const COMMANDS: Record<string, string> = {
  index: 'index-cmd',
  search: 'search',
  grep: 'grep',
  'ir-eval': 'ir-eval',
  read: 'read',
  tasks: 'tasks',
  play: 'play',
  eval: 'eval',
  compare: 'compare',
  headroom: 'headroom',
  sft: 'sft',
  train: 'train',
  demo: 'demo',
  explore: 'explore',
  curves: 'curves',
  serve: 'serve',
  'serve-tinker': 'serve-tinker',
  'serve-search': 'serve-search',
  mcp: 'mcp',
};

async function loadCommand(name: string): Promise<Command | undefined> {
  const file = COMMANDS[name];
  if (!file) return undefined;
  try {
    const mod = (await import(`./commands/${file}.js`)) as { command: Command };
    return mod.command;
  } catch (err) {
    // A command whose module is not part of this build is reported as unavailable, not as a crash.
    if ((err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes(`/commands/`)) return undefined;
    throw err;
  }
}

async function overview(): Promise<string> {
  const lines = ['sleuth: train small language models to be search agents with GRPO', '', 'usage: sleuth COMMAND [options]   (sleuth COMMAND --help for more)', ''];
  for (const name of Object.keys(COMMANDS)) {
    const cmd = await loadCommand(name);
    if (cmd) lines.push(`  ${name.padEnd(14)} ${cmd.summary}`);
  }
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(await overview());
    return name ? 0 : 2;
  }
  const cmd = await loadCommand(name);
  if (!cmd) {
    console.error(`sleuth: unknown command '${name}'\n\n${await overview()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(cmd.usage);
    return 0;
  }
  try {
    return await cmd.run(rest);
  } catch (err) {
    if (isInputError(err)) {
      console.error(`sleuth ${name}: ${err.message}`);
      return 2;
    }
    if (err instanceof NumericalError) {
      console.error(`sleuth ${name}: ${err.message}`);
      return 1;
    }
    const fsProblem = describeFsError(err);
    if (fsProblem !== undefined) {
      console.error(`sleuth ${name}: ${fsProblem}`);
      return 2;
    }
    throw err;
  }
}
