/**
 * Warns when the inotify watch limit leaves too little room. @parcel/watcher uses one watch per
 * directory; chokidar 5 one per directory and per markdown file (it ignores the other files).
 * Watches past the limit fail (ENOSPC) or silently miss changes.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
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
