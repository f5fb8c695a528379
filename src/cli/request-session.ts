/** From a request file's Session line to its session directory (`engine attach`, `engine logs`). */
import { stat } from 'node:fs/promises';
import { EngineError } from '../errors.js';
import { resolveSessionRef } from '../sessions/session-dir.js';

/**
 * The directory that `ref`, the value of `file`'s `line` (Session, Prior Session), names under
 * `root`; an error when it is not under the root's sessions/, or does not exist there.
 */
export async function namedSessionDir(
  root: string,
  ref: string,
  { file, line }: { file: string; line: string },
): Promise<string> {
  const dir = resolveSessionRef(root, ref);
  if (!dir) throw new EngineError(`${file}: ${line} '${ref}' is not under ${root}/sessions`);
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) {
    throw new EngineError(
      `${file}: its ${line} line names ${dir}, which does not exist (project root ${root})`,
    );
  }
  return dir;
}
