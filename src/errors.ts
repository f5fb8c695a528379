/** Marks an EngineError, whichever copy of this module made it (Symbol.for: one for all). */
const ENGINE_ERROR = Symbol.for('@mdtags/engine:EngineError');

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
    // Not enumerable: a spread copy of an error is no EngineError, and inspect does not show it.
    Object.defineProperty(this, ENGINE_ERROR, { value: true });
  }

  /**
   * `instanceof EngineError` holds for one made by any copy of this module: the CLI's CommonJS
   * entry bundles a copy (scripts/bundle-lean.mjs), and the ES modules it loads throw their own.
   * A subclass is checked as usual.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== EngineError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && ENGINE_ERROR in value;
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
