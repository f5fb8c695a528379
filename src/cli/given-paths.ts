/**
 * Paths a command was given to read. One that is not there (or that the kernel cannot reach as
 * written, such as `a.md/`) is an error: an empty answer over a misspelled path would read as
 * "nothing found".
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
