import { createInterface } from 'node:readline';
import { runEpisode } from '../../agent/episode.js';
import type { TurnRecord } from '../../agent/rollout.js';
import type { Agent, AgentCall, AgentContext, AgentSession, AgentTurn } from '../../agent/types.js';
import { toolShorthand } from '../../env/tool-spec.js';
import type { ToolSpec } from '../../env/types.js';
import { InputError } from '../../errors.js';
import { DEFAULT_SUITE, defaultRubric, scoreRollout, suiteOf, SUITE_KINDS } from '../../suites/registry.js';
import type { Task } from '../../tasks/task.js';
import { IdAliases, mapIdArguments } from '../../protocol/compact/index.js';
import { intFlag, parseFlags, type Command } from '../command.js';
import { terminalSafe } from '../safe-text.js';

/** Everything play prints holds corpus, task or typed text: shown with its control characters visible. */
const say = (text: string): void => console.log(terminalSafe(text, { multiline: true }));
import { fit, formatHits, outputWidth, wrap } from '../../text/width.js';

/** The call syntax, shown by `help` at the prompt. */
const SYNTAX = `  {"name":"bm25_search","arguments":{"query":"Corliss Archer film","k":5}}
  bm25_search Corliss Archer film      grep_corpus (?i)kiss\\s+and\\s+tell
  read_document N|ID                   curate N|ID [N|ID...]
  drop_curated N|ID [N|ID...]          finish
  (qa env: search QUERY, answer TEXT)   help    quit (= finish)`;

const USAGE = `usage: sleuth play [--tasks NAME] [--split S] [--task ID] [--env ${SUITE_KINDS.join('|')}] [-k N]

Play the search environment yourself: pick a task, call tools, build the curated set, finish,
and see the reward breakdown. Every chunk shown gets a list number for the episode (1, 2, 3, ...,
as the compact format numbers them for the small model); type the number or the id. Ctrl-C
abandons the episode without scoring it. Type a tool call as JSON or in short form:

${SYNTAX}

options:
  --tasks NAME   task set (default: default)
  --split S      split to pick from (default: eval)
  --task ID      play this task instead of choosing one
  --env E        the environment (default ${DEFAULT_SUITE}): ${SUITE_KINDS.map((k) => `${k}, ${suiteOf(k).summary}`).join('; ')}
  -k N           hits per search when not given (default 10)`;

/**
 * A line typed by the player as a tool call: JSON `{"name", "arguments"}`, or `NAME rest of line`,
 * the rest read as the tool's schema says (toolShorthand: a list of ids, or its one string).
 * Returns undefined for a blank line; throws InputError naming what is wrong.
 */
export function parsePlayInput(line: string, tools: readonly ToolSpec[]): AgentCall | undefined {
  const text = line.trim();
  if (text === '') return undefined;
  if (text.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new InputError(`not valid JSON: ${(err as Error).message}`);
    }
    const obj = value as { name?: unknown; arguments?: unknown };
    if (typeof obj !== 'object' || obj === null || typeof obj.name !== 'string') throw new InputError('a JSON call needs a string "name" (and an "arguments" object)');
    return { name: obj.name, arguments: obj.arguments ?? {}, status: 'ok' };
  }
  const space = text.search(/\s/u);
  const name = space < 0 ? text : text.slice(0, space);
  const rest = space < 0 ? '' : text.slice(space).trim();
  const tool = tools.find((t) => t.name === name);
  const short = tool ? toolShorthand(tool) : undefined;
  if (short?.kind === 'list') return { name, arguments: { [short.key]: rest.split(/[\s,]+/u).filter(Boolean) }, status: 'ok' };
  if (short?.kind === 'string') return { name, arguments: { [short.key]: rest }, status: 'ok' };
  if (short?.kind === 'none') return { name, arguments: {}, status: 'ok' };
  // Anything else goes to the environment as is, so unknown tools get the environment's own answer.
  return { name, arguments: rest ? { text: rest } : {}, status: 'ok' };
}

interface LineReader {
  /** The next line typed, or undefined at the end of input or after Ctrl-C. */
  next(prompt: string): Promise<string | undefined>;
  /** Whether the player pressed Ctrl-C (SIGINT): the episode is abandoned, not scored. */
  readonly abandoned: boolean;
  close(): void;
}

/** Lines from stdin, one at a time, for a terminal or a pipe alike. */
function lineReader(): LineReader {
  const rl = createInterface({ input: process.stdin, terminal: process.stdin.isTTY === true, output: process.stdin.isTTY ? process.stdout : undefined });
  const lines = rl[Symbol.asyncIterator]();
  let abandoned = false;
  // A terminal's Ctrl-C reaches readline ('SIGINT' on rl); a signal sent to the process, the process.
  const abandon = () => {
    abandoned = true;
    rl.close();
  };
  rl.on('SIGINT', abandon);
  process.on('SIGINT', abandon);
  return {
    async next(prompt) {
      if (abandoned) return undefined;
      process.stdout.write(prompt);
      const r = await lines.next();
      if (abandoned) return undefined;
      // A terminal echoes what was typed; from a pipe, echo it so the transcript reads the same.
      if (!process.stdin.isTTY) process.stdout.write((r.done ? '' : r.value) + '\n');
      return r.done ? undefined : r.value;
    },
    get abandoned() {
      return abandoned;
    },
    close: () => {
      process.off('SIGINT', abandon);
      rl.close();
    },
  };
}

/** A chunk id with its list number, when it has one: `3=5af1618060`. */
function labelled(aliases: IdAliases, id: string): string {
  const n = aliases.known(id);
  return n === undefined ? id : `${n}=${id}`;
}

/** A tool result for the terminal: hits and read documents numbered with the episode's list numbers. */
function showResult(content: string, aliases: IdAliases, width: number): string {
  let body: unknown;
  try {
    body = JSON.parse(content);
  } catch {
    return wrap(content, width, '  ');
  }
  const b = body as { hits?: { id: string; title: string; score?: number; snippet: string }[]; seen?: number; curated?: number; text?: string; title?: string; id?: string };
  if (Array.isArray(b.hits)) {
    const hits = formatHits(b.hits, width, { numbers: b.hits.map((h) => aliases.alias(h.id)), indent: '  ' });
    return [b.hits.length ? hits : '  (no hits)', `  seen ${b.seen} · curated ${b.curated}`].join('\n');
  }
  if (typeof b.text === 'string' && typeof b.id === 'string') return `${wrap(`${aliases.alias(b.id)}. ${b.title}  [${b.id}]`, width, '  ')}\n${wrap(b.text, width, '  ')}`;
  return wrap(content, width, '  ');
}

/** The player as a message-level agent: each turn is one call typed at the prompt. */
class HumanAgent implements Agent {
  readonly spec = 'human';
  constructor(
    private readonly input: LineReader,
    private readonly aliases: IdAliases,
  ) {}

  start(ctx: AgentContext): AgentSession {
    return {
      next: async (): Promise<AgentTurn> => {
        for (;;) {
          const line = await this.input.next('\ntool> ');
          if (line === undefined || line.trim() === 'quit') return { text: 'quit', calls: [] };
          if (line.trim() === 'help') {
            say(SYNTAX);
            continue;
          }
          try {
            const call = parsePlayInput(line, ctx.tools);
            const unshown = call ? this.unshownNumbers(call.arguments) : [];
            if (unshown.length) {
              const range = this.aliases.size ? `1–${this.aliases.size}` : 'none yet: search first';
              say(`  ${unshown.join(', ')} ${unshown.length === 1 ? "isn't a number" : "aren't numbers"} shown (${range}); nothing was sent, and no turn was used`);
              continue;
            }
            if (call) return { text: line, calls: [{ ...call, arguments: mapIdArguments(call.arguments, (v) => this.resolve(v)) }] };
          } catch (err) {
            say(`  ${(err as Error).message}`);
          }
        }
      },
    };
  }

  /**
   * The list numbers typed in `id` / `ids` that this episode never showed: refused at the prompt
   * (a number is short, up to 6 digits; a longer run of digits is taken as a chunk id).
   */
  private unshownNumbers(args: unknown): string[] {
    const unshown: string[] = [];
    mapIdArguments(args, (v) => {
      const text = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '';
      if (/^\d{1,6}$/u.test(text) && this.aliases.known(text) === undefined && !(Number(text) >= 1 && Number(text) <= this.aliases.size)) unshown.push(text);
      return v;
    });
    return unshown;
  }

  /** A typed id or list number as the chunk id it names (an id shown this episode wins over a number). */
  private resolve(value: unknown): unknown {
    return typeof value === 'string' && this.aliases.known(value) !== undefined ? value : this.aliases.resolve(value);
  }
}

/** Ctrl-C: the episode is dropped, not scored; 130 is the shell's status for an interrupt. */
function abandonedExit(): number {
  console.log('\nepisode abandoned (Ctrl-C): not scored');
  return 130;
}

export const command: Command = {
  usage: USAGE,
  async run(argv) {
    const { values } = parseFlags(
      argv,
      { tasks: { type: 'string' }, split: { type: 'string' }, task: { type: 'string' }, env: { type: 'string' }, k: { type: 'string', short: 'k' } },
      'play',
    );
    const suite = suiteOf(values.env ?? DEFAULT_SUITE, '--env');
    if (values.tasks !== undefined && !suite.taskSets) throw new InputError(`--tasks ${values.tasks}: --env ${suite.kind} has its own tasks; leave --tasks out`);
    const k = intFlag(values.k, 'k', 10, 1, 50);
    const opened = await suite.open(values.tasks !== undefined ? { tasks: values.tasks } : {});
    const split = values.split ?? 'eval';
    // A task named by id may be in any split.
    const candidates = values.task !== undefined ? opened.tasks() : opened.tasks(split);
    if (candidates.length === 0) throw new InputError(`--split: task set '${opened.tasksName}' has no tasks in split '${split}'`);
    let task: Task | undefined = values.task !== undefined ? candidates.find((t) => t.id === values.task) : undefined;
    if (values.task !== undefined && !task) throw new InputError(`--task: no task '${values.task}' in task set '${opened.tasksName}'`);
    const { env } = await opened.environment({ defaultK: k });
    const input = lineReader();
    const aliases = new IdAliases();
    const width = outputWidth();
    try {
      if (!task) {
        const shown = candidates.slice(0, 10);
        say(`${candidates.length} tasks in ${opened.tasksName}/${split}:`);
        shown.forEach((t, i) => say(fit(`  ${String(i + 1).padStart(2)}. ${t.id}  ${t.query}`, Math.min(width, 120))));
        while (!task) {
          const line = await input.next(`pick a task (1-${shown.length} or an id, Enter = 1): `);
          if (line === undefined) return input.abandoned ? abandonedExit() : 0;
          const choice = line.trim();
          const n = Number(choice || '1');
          task = Number.isInteger(n) && n >= 1 && n <= shown.length ? shown[n - 1] : candidates.find((t) => t.id === choice);
          if (!task) say(`  no task '${choice}'`);
        }
      }
      say(`\ntask ${task.id}\nquery: ${task.query}\n\ntools: ${env.tools.map((t) => t.name).join(', ')}   (type help for the syntax)`);

      const onTurn = (turn: TurnRecord) => {
        for (const c of turn.calls) say(c.result.outcome === 'ok' ? showResult(c.result.content, aliases, width) : wrap(c.result.content, width, '  '));
        // A call the environment refused still used a turn of the budget: say so.
        if (turn.calls.some((c) => c.result.outcome !== 'ok')) say(`  (that call failed, and still used turn ${turn.index + 1} of ${env.defaultBudgets.maxTurns})`);
        if (suite.result === 'curated set') say(wrap(`curated (${turn.curated.length}): ${turn.curated.map((id) => labelled(aliases, id)).join(' ') || '-'}`, width, '    ', '  '));
      };
      const rollout = await runEpisode(new HumanAgent(input, aliases), env, task, env.defaultBudgets, { onTurn });
      if (input.abandoned) return abandonedExit();
      const reward = scoreRollout(task, rollout, defaultRubric(suite.kind));
      say(`\nepisode over: ${rollout.endReason} after ${rollout.turns.length} turns${rollout.answer !== undefined ? `, answer '${rollout.answer}'` : ''}`);
      say(wrap(`curated: ${rollout.curated.map((id) => labelled(aliases, id)).join(' ') || '-'}`, width, '  ', ''));
      say(wrap(`gold: ${task.facts.map((f) => f.chunkIds.map((id) => labelled(aliases, id)).join('|')).join(' ')}${task.answers?.length ? `   answers: ${task.answers.join(' | ')}` : ''}`, width, '  ', ''));
      say(`reward ${reward.total.toFixed(3)}`);
      for (const [part, value] of Object.entries(reward.parts)) say(`  ${part.padEnd(20)} ${value.toFixed(3).padStart(7)}   weight ${reward.weights[part] ?? 0}`);
      return 0;
    } finally {
      input.close();
    }
  },
};
