import { isInputError, NumericalError } from '../errors.js';
import { describeFsError } from '../files/fs-error.js';
import type { Command } from './command.js';
import { guardConsole } from './safe-text.js';

/**
 * Subcommands: the module under commands/ that runs each, and the line `sleuth --help` shows for it.
 * The lines live here, not in the modules, so that `sleuth --help` imports none of them (loading
 * every command's dependencies took seconds); each module is loaded only when its command runs.
 */
const COMMANDS: Record<string, { file: string; summary: string }> = {
  index: { file: 'index-cmd', summary: 'build a BM25 + grep index over a corpus (default: the embedded corpus)' },
  search: { file: 'search', summary: 'BM25 search: id, title, score, snippet' },
  grep: { file: 'grep', summary: 'Python-syntax regex over the corpus: id, title, snippet' },
  'ir-eval': { file: 'ir-eval', summary: 'nDCG, recall, MAP, MRR of a run against qrels, as trec_eval computes them' },
  read: { file: 'read', summary: 'print one chunk by id' },
  tasks: { file: 'tasks', summary: 'task sets: list, show, subset (cheap ablations), import a dataset' },
  play: { file: 'play', summary: 'play the search environment yourself in the terminal' },
  eval: { file: 'eval', summary: 'run an agent on a task set, score every rollout, write a run directory' },
  compare: { file: 'compare', summary: 'compare run directories: metric table with paired bootstrap 95% intervals against the first run' },
  headroom: { file: 'headroom', summary: 'best-of-N vs best-of-1: how much RL can gain by sharpening the policy' },
  sft: { file: 'sft', summary: 'rejection-sampled SFT from a teacher agent (STaR) into a checkpoint' },
  train: { file: 'train', summary: 'GRPO training of a search agent (local or Tinker backend)' },
  demo: { file: 'demo', summary: 'the main job: index, baseline, SFT, GRPO, eval, comparison on the embedded default' },
  explore: { file: 'explore', summary: 'the local web explorer over run directories' },
  curves: { file: 'curves', summary: "draw a training run's curves (reward, valid, entropy, eval F1, ...) as an SVG" },
  serve: { file: 'serve', summary: 'an OpenAI-compatible endpoint over a local checkpoint' },
  'serve-tinker': { file: 'serve-tinker', summary: 'the Tinker REST API over the local training backend (127.0.0.1)' },
  'serve-search': { file: 'serve-search', summary: 'Search-R1-style retrieval server (POST /retrieve) plus /search and /grep' },
  mcp: { file: 'mcp', summary: 'the search harness as an MCP server (stdio or streamable HTTP), one session = one episode' },
  'new-suite': { file: 'new-suite', summary: 'start a new environment: copy the template suite under a new name' },
};

async function loadCommand(name: string): Promise<Command | undefined> {
  const file = Object.hasOwn(COMMANDS, name) ? COMMANDS[name]!.file : undefined;
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

function overview(): string {
  const lines = ['sleuth: train small language models to be search agents with GRPO', '', 'usage: sleuth COMMAND [options]   (sleuth COMMAND --help for more)', ''];
  for (const [name, { summary }] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(14)} ${summary}`);
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
