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
