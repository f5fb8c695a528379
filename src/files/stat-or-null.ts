/**
 * A path's stat for the passes that take one per file: synchronous, since a stat through a
 * promise costs about four times the CPU.
 */
import { statSync, type Stats } from 'node:fs';

/** The stat of `path` (following a symlink); null when it cannot be statted (gone, EACCES, ELOOP). */
export function statOrNull(path: string): Stats | null {
  try {
    return statSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
