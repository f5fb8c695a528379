/**
 * An error a user can act on. The CLI prints `ERROR: <message>` and exits with `exitCode`;
 * nothing else in the code base prints or exits.
 */
export class EngineError extends Error {
  readonly exitCode: number;

  constructor(message: string, options: { exitCode?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'EngineError';
    this.exitCode = options.exitCode ?? 1;
  }
}

/** A compare-and-swap whose precondition did not hold: nothing was written. */
export class PreconditionError extends EngineError {
  constructor(message: string) {
    super(message);
    this.name = 'PreconditionError';
  }
}

export function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string';
}

/** The message of an error, or the thrown value as text, for log lines. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
