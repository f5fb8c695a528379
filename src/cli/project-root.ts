/**
 * The one root resolver of the commands that work on a project (docs/CLI.md, "The project
 * root"). As git finds its repository: `--root` names the root itself, and must be a project;
 * without it, the nearest project at or above the request file (when the command was given one),
 * then at or above the current directory. A project root holds `directives/TAGS.md` or
 * `directives/engine.json`, the files `engine init` writes; `sessions/` alone is no mark, so a
 * command run in `sessions/` finds the project above it, not `sessions/sessions`.
 */
// Sync stats: a few small ones at a command's start, each without a thread-pool round trip
// (about 3 ms of `engine status` here).
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { EngineError, isErrnoException, messageOf } from '../errors.js';

export const PROJECT_MARKERS = ['directives/TAGS.md', 'directives/engine.json'] as const;

const MARKS = PROJECT_MARKERS.join(' or ');

async function isProjectRoot(dir: string): Promise<boolean> {
  for (const marker of PROJECT_MARKERS) {
    try {
      if (statSync(join(dir, marker), { throwIfNoEntry: false })?.isFile()) return true;
    } catch {
      // Missing, or below a file, or not ours to read: not this marker.
    }
  }
  return false;
}

/** The nearest project root at or above `start`; null when there is none up to `/`. */
export async function findProjectRoot(start: string): Promise<string | null> {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    if (await isProjectRoot(dir)) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/**
 * The project root of a command: `given` (its `--root`) when there is one, else the nearest
 * project above `near` (the directory of the request file or session it was given), else above
 * the current directory; an error that says what was looked for when there is none.
 */
export async function projectRoot(given: string | undefined, near?: string): Promise<string> {
  if (given !== undefined) return checkedRoot(given);
  const found = near === undefined ? null : await findProjectRoot(near);
  if (found !== null) return found;
  const cwd = process.cwd();
  const fromCwd = await findProjectRoot(cwd);
  if (fromCwd !== null) return fromCwd;
  const where = near === undefined || resolve(near) === cwd ? cwd : `${resolve(near)} or ${cwd}`;
  throw new EngineError(
    `Not in an engine project: no ${MARKS} in ${where} or any directory above; run engine init to make one, or give --root`,
  );
}

/** `--root` as given: an existing directory that is a project, never looked for above it. */
async function checkedRoot(given: string): Promise<string> {
  if (given === '') throw new EngineError('--root needs a directory');
  const root = resolve(given);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(root).isDirectory();
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT')
      throw new EngineError(`--root ${given}: no such directory`);
    if (isErrnoException(error) && error.code === 'ENOTDIR')
      throw new EngineError(`--root ${given} is not a directory`);
    throw new EngineError(`--root ${given}: ${messageOf(error)}`);
  }
  if (!isDirectory) throw new EngineError(`--root ${given} is not a directory`);
  if (!(await isProjectRoot(root))) {
    throw new EngineError(
      `--root ${given} is not an engine project: it has no ${MARKS} (engine init makes one)`,
    );
  }
  return root;
}
