/**
 * Paths a command was given to read, and whether all of their files were read. One that is not
 * there (or that the kernel cannot reach as written, such as `a.md/`) is an error, and so is a
 * file skipped: an empty answer over a misspelled path, or over a file that could not be read,
 * would read as "nothing found".
 */
import { statSync } from 'node:fs';
import { EngineError } from '../errors.js';

/** Throws for the first path that cannot be read as written; `what` says what it should be. */
export function requireGivenPaths(paths: string[], what: 'file or directory' | 'directory'): void {
  for (const path of paths) {
    // A name that is not UTF-8 arrives with U+FFFD in it: the walk names it as skipped.
    if (path.includes('\uFFFD')) continue;
    let isDirectory: boolean;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOTDIR'
          ? 'not a directory'
          : code === 'ENOENT'
            ? 'no such file or directory'
            : String(code ?? error);
      throw new EngineError(`${path}: ${why}: nothing searched`);
    }
    if (what === 'directory' && !isDirectory)
      throw new EngineError(`${path}: not a directory: give the directories of requests`);
  }
}

/**
 * A file that may carry a tag and could not be read (unreadable, too large, too slow to parse)
 * makes the answer printed incomplete: exit 2, as grep and rg do (docs/CLI.md).
 */
export function requireComplete(skipped: number): void {
  if (skipped === 0) return;
  throw new EngineError(`incomplete answer: ${skipped} skipped (named above)`, { exitCode: 2 });
}
