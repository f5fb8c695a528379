/**
 * Warns when the inotify watch limit leaves too little room: chokidar 5 uses one watch per file
 * and per directory, and watches past the limit fail (ENOSPC) or silently miss changes.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function watchHeadroom(
  paths: string[],
  limitFile = '/proc/sys/fs/inotify/max_user_watches',
): Promise<string | null> {
  const limit = Number((await readFile(limitFile, 'utf8').catch(() => '')).trim());
  if (!Number.isFinite(limit) || limit <= 0) return null;
  let needed = 0;
  const count = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    needed++;
    for (const entry of entries) {
      if (entry.isDirectory()) {
        if (entry.name !== '.git' && entry.name !== 'node_modules')
          await count(join(dir, entry.name));
      } else needed++;
    }
  };
  for (const path of paths) await count(path);
  if (needed * 2 <= limit) return null;
  return (
    `the tree needs about ${needed} inotify watches and the limit (fs.inotify.max_user_watches) is ${limit}, ` +
    'shared with every other watcher of this user: changes may be missed between reconcile passes. ' +
    'Raise it, e.g. sysctl fs.inotify.max_user_watches=524288'
  );
}
