import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * A benchmark's flags: `--help` prints the usage and exits 0; an unknown flag, a flag without its
 * value or a stray argument prints what is wrong and the usage, and exits 2, as the CLI does.
 */
export function benchArgs<O extends Options>(options: O, usage: string, argv = process.argv.slice(2)) {
  // Every bench that guards the load (load.ts) takes --allow-loaded; its usage says so once, here.
  if ('allow-loaded' in options) usage = `${usage.trimEnd()}\n  --allow-loaded  run on a busy machine (1-minute load average above half the cores); the results are marked "loaded": true\n`;
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage.trim()}\n`);
    process.exit(0);
  }
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${usage.trim()}\n`);
    process.exit(2);
  }
}

/** An error in a flag's value: the message and exit status 2. */
export function badFlag(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

/** A flag's value as a whole number >= min, or exit 2 naming the flag. */
export function wholeFlag(values: Record<string, unknown>, flag: string, min: number): number {
  const n = Number(values[flag]);
  if (!Number.isInteger(n) || n < min) badFlag(`--${flag} must be a whole number >= ${min}, got '${String(values[flag])}'`);
  return n;
}
