import { parseArgs, type ParseArgsConfig } from 'node:util';
import { InputError } from '../errors.js';

/** Every `sleuth` subcommand is a module under src/cli/commands/ exporting one of these as `command` (its one-line summary is in main.ts). */
export interface Command {
  /** Full usage text, shown by `sleuth NAME --help`. */
  usage: string;
  /** Returns the exit status: 0 done, 1 failed while running, 2 bad usage or input (throw InputError for that). */
  run(argv: string[]): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** A token that is a negative number (`-3`, `-0.5`, `-.5`, `-1e-3`), not a flag. */
const NEGATIVE_NUMBER = /^-(\d|\.\d)/;

/**
 * Rewrite the spellings `parseArgs` misreads into `--name=VALUE`: a value-taking flag followed by
 * a negative number (`--k1 -3`, `-k -1`), which it calls ambiguous, and `-k=VALUE`, where it
 * would keep the `=` as part of the value.
 */
function normaliseArgv(argv: string[], options: Options): string[] {
  const longOf = new Map<string, string>();
  for (const [name, opt] of Object.entries(options)) if (opt.short) longOf.set(opt.short, name);
  const takesValue = (name: string | undefined) => name !== undefined && options[name]?.type === 'string';
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') { out.push(...argv.slice(i)); break; }
    const shortEq = /^-([^-=])=(.*)$/s.exec(arg);
    if (shortEq && takesValue(longOf.get(shortEq[1]!))) { out.push(`--${longOf.get(shortEq[1]!)}=${shortEq[2]}`); continue; }
    const name = arg.startsWith('--') ? arg.slice(2) : /^-[^-]$/.test(arg) ? longOf.get(arg[1]!) : undefined;
    const next = argv[i + 1];
    if (!arg.includes('=') && takesValue(name) && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}

/** One line for a `parseArgs` error, naming the flag and how to get it right. */
function flagErrorMessage(err: Error & { code?: string }, commandName: string): string {
  // Node names the flag as '--k1', '-k', '-k, --k <value>' or '--k1 <value>': keep the long name.
  const flag = /option '(?:-[^-], )?(--?[^' ,]+)/i.exec(err.message)?.[1];
  const help = `(sleuth ${commandName} --help lists the options)`;
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag) return `unknown option '${flag}' ${help}`;
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag) {
    if (err.message.includes('does not take an argument')) return `option ${flag} takes no value`;
    if (err.message.includes('ambiguous')) return `option ${flag} needs a value, and the next argument is a flag; to pass a value starting with '-', write ${flag.startsWith('--') ? flag : '-' + flag}=VALUE`;
    return `option ${flag} needs a value`;
  }
  return `${err.message.split('\n')[0]} ${help}`;
}

/**
 * Parse flags strictly; an unknown flag or a missing value is a usage error naming the flag.
 * `--help` is always accepted, and so is a negative number as a flag's value (`--k1 -3`).
 * The message does not name the command: `main` prefixes every InputError with it.
 */
export function parseFlags<O extends Options>(argv: string[], options: O, commandName: string) {
  const all = { ...options, help: { type: 'boolean', short: 'h' } } as O & { help: { type: 'boolean'; short: string } };
  let parsed;
  try {
    parsed = parseArgs({ args: normaliseArgv(argv, all), options: all, allowPositionals: true, strict: true });
  } catch (err) {
    throw new InputError(flagErrorMessage(err as Error & { code?: string }, commandName));
  }
  for (const name of PATH_FLAGS) {
    const given = (parsed.values as Record<string, unknown>)[name];
    for (const v of Array.isArray(given) ? given : [given]) if (typeof v === 'string' && v.trim() === '') throw new InputError(`--${name} is empty: give a path`);
  }
  return parsed;
}

/**
 * Flags that name a file or directory. An empty one (`--out ""`, an unset shell variable) would
 * mean the current directory to some calls and fail obscurely in others: it is refused by name.
 */
const PATH_FLAGS = ['out', 'index', 'corpus', 'tasks', 'queries', 'qrels', 'run', 'config', 'resume', 'checkpoint', 'dir', 'pid-file'];

/** Parse a flag's text as a number; an empty or non-numeric text is `NaN`, never 0. */
function toNumber(value: string): number {
  return value.trim() === '' ? Number.NaN : Number(value);
}

/** A flag that must be a whole number within bounds, named in the error if it is not. */
export function intFlag(value: string | undefined, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  const n = toNumber(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`;
    throw new InputError(`--${name} must be a whole number ${range}, got '${value}'`);
  }
  return n;
}

/** A flag that must be a finite number, within bounds where given, named in the error if it is not. */
export function numberFlag(value: string | undefined, name: string, fallback: number, min = -Infinity, max = Infinity): number {
  if (value === undefined) return fallback;
  const n = toNumber(value);
  if (!Number.isFinite(n)) throw new InputError(`--${name} must be a number, got '${value}'`);
  if (n < min || n > max) {
    const range = max === Infinity ? `at least ${min}` : min === -Infinity ? `at most ${max}` : `from ${min} to ${max}`;
    throw new InputError(`--${name} must be ${range}, got '${value}'`);
  }
  return n;
}

/** Write one JSON document to stdout (for --json). */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}
