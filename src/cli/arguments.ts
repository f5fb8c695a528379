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

/**
 * `--root DIR` of the commands that work on a project: no default, so that `projectRoot` can tell
 * a root given from one to look for; given twice, the last one wins.
 */
export function rootOption(
  describe: string,
  from = 'the current directory',
): {
  type: 'string';
  describe: string;
  coerce: (value: unknown) => unknown;
} {
  return {
    type: 'string',
    describe: `${describe}; it must hold directives/TAGS.md or directives/engine.json (default: the nearest such directory at or above ${from})`,
    coerce: (value) => (Array.isArray(value) ? value.at(-1) : value),
  };
}
