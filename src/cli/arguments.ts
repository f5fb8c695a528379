/** Validation of command-line values shared by several commands. */
import { EngineError } from '../errors.js';

/** `--inline N`: a 1-based line number, written as plain decimal digits. */
export function parseLineNumber(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  // Number() would also accept '0x4', '4e0', ' 4' and '': only digits are a line number.
  const text = String(value);
  const line = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(line) || line < 1) {
    throw new EngineError(`Invalid line number '${text}': expected a whole number from 1 up`);
  }
  return line;
}
