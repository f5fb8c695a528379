/** Validation of command-line values shared by several commands. */
import { EngineError } from '../errors.js';

/** `--inline N`: a 1-based line number. */
export function parseLineNumber(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const line = Number(value);
  if (!Number.isInteger(line) || line < 1) {
    throw new EngineError(
      `Invalid line number '${String(value)}': expected a whole number from 1 up`,
    );
  }
  return line;
}
