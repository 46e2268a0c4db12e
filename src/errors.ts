/**
 * An error caused by what the user (or a file, or a model) gave us, not by a bug.
 * The CLI prints its message and exits with status 2; the environment turns it into a
 * short tool-result error for the model. The message must name the input and what is wrong.
 */
export class InputError extends Error {
  override readonly name = 'InputError';
  constructor(message: string) {
    super(message);
  }
}

export function isInputError(err: unknown): err is InputError {
  return err instanceof InputError;
}

/**
 * A computation produced a number it cannot go on from (a NaN or infinite loss, gradient or
 * weight), so the run stopped instead of training on garbage. Not a bug and not bad input: the
 * CLI prints the message in one line (it names the step and the last good checkpoint) and exits 1.
 */
export class NumericalError extends Error {
  override readonly name = 'NumericalError';
  constructor(message: string) {
    super(message);
  }
}

/**
 * A file of a search index (or a segmented index's manifest) holds bytes other than those it was
 * written with: its checksum does not match. Deliberately not an InputError: an InputError from a
 * tool becomes a tool result the model reads (and a 400 from a server), which would let an
 * evaluation or a training run go on over a damaged index. This one stops the episode, the run
 * and the request: exit 2 from the CLI, a 5xx from a server.
 */
export class DamagedIndexError extends Error {
  override readonly name = 'DamagedIndexError';
  constructor(
    /** The index directory. */
    readonly dir: string,
    /** The damaged file, relative to dir. */
    readonly file: string,
    /** What is wrong, and where (bytes). */
    readonly what: string,
  ) {
    super(`index ${dir}: ${file} is damaged (${what}); rebuild the index with \`sleuth index\` (\`sleuth index verify --index ${dir}\` lists all the damage)`);
  }
}
