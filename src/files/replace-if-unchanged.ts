/**
 * Puts a new file in place of a request file only if the request file is still the inode that
 * was read. A plain rename cannot: an editor that saves by its own rename just after the last
 * check would be replaced unseen. POSIX has no conditional rename and Node has no
 * renameat2(RENAME_EXCHANGE), so this moves the file aside (atomic), checks that what it moved
 * is the inode that was read, and hard-links the new file into the free name: the link fails if
 * anything is there, which means an editor saved in that instant, and that save stands.
 *
 * The name is absent between the move and the link. The calls are synchronous, so nothing else
 * in this process runs in between; readers that find the file missing wait for the writer's lock
 * (waitForWriter in update-request-file.ts). A writer killed in between leaves the original under
 * the aside name, where the next holder of the lock, or the daemon's walk, puts it back.
 * Everything here runs under the request file's lock.
 */
import { linkSync, lstatSync, renameSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isErrnoException } from '../errors.js';
import { failpoint } from '../failpoint.js';

export type ReplaceOutcome = 'replaced' | 'conflict';

export interface Inode {
  ino: bigint;
  dev: bigint;
}

const ASIDE_SUFFIX = '.engine-aside';

/** Where the writer keeps the original while it links the new file in: hidden, beside it. */
export function asidePathFor(realPath: string): string {
  return join(dirname(realPath), `.${basename(realPath)}${ASIDE_SUFFIX}`);
}

/** The request file an aside name belongs to, or null when `name` is not one. */
export function requestNameOfAside(name: string): string | null {
  return name.startsWith('.') && name.endsWith(ASIDE_SUFFIX)
    ? name.slice(1, -ASIDE_SUFFIX.length) || null
    : null;
}

/**
 * Replaces `real` with `temp` if `real` is still `read`. 'conflict': it was not (or something
 * took its name meanwhile); `real` then holds whatever was saved last, and `temp` is left for the
 * caller to remove. On a filesystem without hard links, a plain rename (no such guarantee).
 */
export function replaceIfUnchanged(real: string, temp: string, read: Inode): ReplaceOutcome {
  if (!canHardLink(temp)) {
    renameSync(temp, real);
    return 'replaced';
  }
  const aside = asidePathFor(real);
  try {
    renameSync(real, aside);
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT') return 'conflict';
    throw error;
  }
  failpoint('writer-set-aside');
  const moved = lstatSync(aside, { bigint: true });
  if (moved.ino !== read.ino || moved.dev !== read.dev) {
    // An editor saved after the last check: its file goes back, unless a newer save is there.
    putBack(aside, real);
    return 'conflict';
  }
  try {
    linkSync(temp, real);
  } catch (error) {
    if (isErrnoException(error) && error.code === 'EEXIST') {
      // An editor saved while the name was free; its file replaced the one read, as saves do.
      unlinkSync(aside);
      return 'conflict';
    }
    putBack(aside, real);
    throw error;
  }
  unlinkSync(aside);
  unlinkSync(temp);
  return 'replaced';
}

/**
 * Puts back an original that a killed writer left aside; drops it when the name has been taken
 * since (the writer's new file, or a later save, which replaced it). True when it was put back.
 */
export function restoreSetAside(real: string): boolean {
  const aside = asidePathFor(real);
  try {
    linkSync(aside, real);
  } catch (error) {
    if (!isErrnoException(error)) throw error;
    if (error.code === 'ENOENT') return false;
    if (error.code !== 'EEXIST') throw error;
    unlinkSync(aside);
    return false;
  }
  unlinkSync(aside);
  return true;
}

function putBack(aside: string, real: string): void {
  try {
    linkSync(aside, real);
  } catch (error) {
    if (!isErrnoException(error) || error.code !== 'EEXIST') throw error;
  }
  unlinkSync(aside);
}

/** Codes of a filesystem without hard links (FAT, some network filesystems). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);

/**
 * Whether `temp` can be hard-linked: tried each time (two calls, against the fsync before them),
 * since a request file may be on any filesystem.
 */
function canHardLink(temp: string): boolean {
  const probe = `${temp}.link`;
  try {
    linkSync(temp, probe);
  } catch (error) {
    if (isErrnoException(error) && NO_HARD_LINKS.has(error.code ?? '')) return false;
    throw error;
  }
  unlinkSync(probe);
  return true;
}
