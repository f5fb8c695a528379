/**
 * Warns when the inotify watch limit leaves too little room. @parcel/watcher uses one watch per
 * directory; chokidar 5 one per directory and per markdown file (it ignores the other files).
 * Watches past the limit fail (ENOSPC) or silently miss changes.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openDescriptors, type OpenDescriptor } from '../process/open-files.js';
import { isIgnoredDirectoryName, isMarkdownPath } from '../tags/walk-markdown.js';
import type { WatcherKind } from './watch-backend.js';

export interface HeadroomOptions {
  watcher: WatcherKind;
  limitFile?: string;
}

export async function watchHeadroom(
  paths: string[],
  { watcher, limitFile = '/proc/sys/fs/inotify/max_user_watches' }: HeadroomOptions,
): Promise<string | null> {
  const limit = Number((await readFile(limitFile, 'utf8').catch(() => '')).trim());
  if (!Number.isFinite(limit) || limit <= 0) return null;
  const perFile = watcher === 'chokidar';
  let needed = 0;
  const count = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    needed++;
    for (const entry of entries) {
      if (entry.isDirectory()) {
        if (!isIgnoredDirectoryName(entry.name)) await count(join(dir, entry.name));
      } else if (perFile && isMarkdownPath(entry.name)) needed++;
    }
  };
  for (const path of paths) await count(path);
  if (needed * 2 <= limit) return null;
  return (
    `the tree needs about ${needed} inotify watches with ${watcher} and the limit (fs.inotify.max_user_watches) is ${limit}, ` +
    'shared with every other watcher of this user: changes may be missed between reconcile passes. ' +
    'Raise it, e.g. sysctl fs.inotify.max_user_watches=524288'
  );
}

/**
 * Free watches under which a watch counts as not open: a directory created now may get no watch,
 * and parcel does not say so. The larger of 1,024 and a twentieth of the limit.
 */
const LOW_FREE = 1024;
const LOW_SHARE = 20;

/**
 * Whether this user's inotify watches (every process we may inspect: the limit is per user) leave
 * too little room. Synchronous: a few milliseconds of /proc reads, once per reconcile interval.
 */
export function watchHeadroomLow(limitFile = '/proc/sys/fs/inotify/max_user_watches'): boolean {
  let limit: number;
  try {
    limit = Number(readFileSync(limitFile, 'utf8').trim());
  } catch {
    return false;
  }
  if (!Number.isFinite(limit) || limit <= 0) return false;
  let used = 0;
  for (const descriptor of openDescriptors()) used += watchesOf(descriptor);
  return limit - used < Math.max(LOW_FREE, limit / LOW_SHARE);
}

/** The inotify watches one descriptor holds; 0 for any other descriptor. */
function watchesOf({ path, info }: OpenDescriptor): number {
  try {
    if (readlinkSync(path) !== 'anon_inode:inotify') return 0;
    let count = 0;
    for (const line of readFileSync(info, 'utf8').split('\n')) {
      if (line.startsWith('inotify wd:')) count++;
    }
    return count;
  } catch {
    return 0; // Closed meanwhile.
  }
}
