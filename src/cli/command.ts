import { parseArgs, type ParseArgsConfig } from 'node:util';
import { InputError } from '../errors.js';

/** Every `sleuth` subcommand is a module under src/cli/commands/ exporting one of these as `command`. */
export interface Command {
  /** One line, shown in `sleuth --help`. */
  summary: string;
  /** Full usage text, shown by `sleuth NAME --help`. */
  usage: string;
  /** Returns the exit status: 0 done, 1 failed while running, 2 bad usage or input (throw InputError for that). */
  run(argv: string[]): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parse flags strictly; an unknown flag or a missing value is a usage error naming the flag.
 * `--help` is always accepted.
 */
export function parseFlags<O extends Options>(argv: string[], options: O, commandName: string) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new InputError(`sleuth ${commandName}: ${(err as Error).message}`);
  }
}

/** A flag that must be a whole number within bounds, named in the error if it is not. */
export function intFlag(value: string | undefined, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new InputError(`--${name} must be a whole number from ${min} to ${max}, got '${value}'`);
  return n;
}

/** A flag that must be a finite number, named in the error if it is not. */
export function numberFlag(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new InputError(`--${name} must be a number, got '${value}'`);
  return n;
}

/** Write one JSON document to stdout (for --json). */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}
