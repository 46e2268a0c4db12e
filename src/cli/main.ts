import { DamagedIndexError, isInputError, NumericalError } from '../errors.js';
import { describeFsError } from '../files/fs-error.js';
import type { Command } from './command.js';
import { guardConsole } from './safe-text.js';

/**
 * Subcommands and the line `sleuth --help` shows for each. Each runs from the module under
 * commands/ named after it (or MODULE_FILE's). The lines live here, not in the modules, so that
 * `sleuth --help` imports none of them (loading every command's dependencies took seconds); each
 * module is loaded only when its command runs.
 */
const COMMANDS: Record<string, string> = {
  index: 'build a BM25 + grep index over a corpus (default: the embedded corpus)',
  search: 'BM25 search: id, title, score, snippet',
  grep: 'Python-syntax regex over the corpus: id, title, snippet',
  'ir-eval': 'nDCG, recall, MAP, MRR of a run against qrels, as trec_eval computes them',
  read: 'print one chunk by id',
  tasks: 'task sets: list, show, subset (cheap ablations), import a dataset, synthesize from an index',
  play: 'play the search environment yourself in the terminal',
  eval: 'run an agent on a task set, score every rollout, write a run directory',
  compare: 'compare run directories: metric table with paired bootstrap 95% intervals against the first run',
  headroom: 'best-of-N vs best-of-1: how much RL can gain by sharpening the policy',
  sft: 'rejection-sampled SFT from a teacher agent (STaR) into a checkpoint',
  train: 'GRPO training of a search agent (local or Tinker backend)',
  demo: 'the main job: index, baseline, SFT, GRPO, eval, comparison on the embedded default',
  explore: 'the local web explorer over run directories',
  curves: "draw a training run's curves (reward, valid, entropy, eval F1, ...) as an SVG",
  serve: 'an OpenAI-compatible endpoint over a local checkpoint',
  'serve-tinker': 'the Tinker REST API over the local training backend (127.0.0.1)',
  'serve-search': 'Search-R1-style retrieval server (POST /retrieve) plus /search and /grep',
  mcp: 'the search harness as an MCP server (stdio or streamable HTTP), one session = one episode',
  'new-suite': 'start a new environment: copy the template suite under a new name',
};

/** Commands whose module is not named after them (commands/index.ts would read as the folder's own index). */
const MODULE_FILE: Record<string, string> = { index: 'index-cmd' };

async function loadCommand(name: string): Promise<Command | undefined> {
  if (!Object.hasOwn(COMMANDS, name)) return undefined;
  const file = Object.hasOwn(MODULE_FILE, name) ? MODULE_FILE[name]! : name;
  try {
    const mod = (await import(`./commands/${file}.js`)) as { command: Command };
    return mod.command;
  } catch (err) {
    // A command whose module is not part of this build is reported as unavailable, not as a crash.
    if ((err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes(`/commands/`)) return undefined;
    throw err;
  }
}

function overview(): string {
  const lines = ['sleuth: train small language models to be search agents with GRPO', '', 'usage: sleuth COMMAND [options]   (sleuth COMMAND --help for more)', ''];
  for (const [name, summary] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(14)} ${summary}`);
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  guardConsole();
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(overview());
    return name ? 0 : 2;
  }
  const cmd = await loadCommand(name);
  if (!cmd) {
    console.error(`sleuth: unknown command '${name}'\n\n${overview()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(cmd.usage);
    return 0;
  }
  try {
    return await cmd.run(rest);
  } catch (err) {
    // A damaged index is the user's to fix (rebuild it), as bad input is.
    if (isInputError(err) || err instanceof DamagedIndexError) {
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
