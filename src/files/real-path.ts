/**
 * A path's real path for the passes that take one per file: libc's realpath (the promise API's
 * too), synchronous, since a thread-pool round trip per file cost more than the call.
 */
import { realpathSync } from 'node:fs';

/** The real path of `path`, or `path` itself when it cannot be resolved (gone, ELOOP, EACCES). */
export function realPathOrSelf(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}
