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
