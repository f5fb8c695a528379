/** Validation of command-line values shared by several commands. */
import { EngineError } from '../errors.js';
import { expectedNumber, numberIn, type NumberRange } from '../settings/setting-table.js';

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

/**
 * A number option of a command, checked as the settings' numbers are (setting-table.ts): a bad
 * value is refused with what was typed (`Invalid --port 'x': expected ...`), never made NaN.
 */
export function numberOption(
  flag: string,
  options: { range: NumberRange; unit?: string; default: number; describe: string },
): {
  type: 'string';
  default: number;
  describe: string;
  coerce: (value: unknown) => number;
} {
  return {
    type: 'string',
    default: options.default,
    describe: options.describe,
    coerce: (value) => {
      // Given twice, the last one wins, as for --root.
      const typed: unknown = Array.isArray(value) ? value.at(-1) : value;
      const n = numberIn(typed, options.range);
      if (n === null) {
        const expected = expectedNumber(options.range, options.unit);
        throw new EngineError(`Invalid --${flag} '${String(typed)}': expected ${expected}`);
      }
      return n;
    },
  };
}
