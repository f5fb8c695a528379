/**
 * chokidar: the portable backend (plain fs.watch underneath). It holds one inotify watch and one
 * stat record per markdown file, so large trees cost memory, watches and start-up time.
 * chokidar lists a new directory before it watches it, and loses what is created in between
 * (after `mkdir -p a/b/c` it never watches b or c). So each new directory is listed again here
 * once chokidar's watch on it is in place: its files are reported, its subdirectories checked the
 * same way, and a directory chokidar does not watch in time makes the subscription stale.
 */
import type { Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import {
  isIgnoredDirectory,
  isIgnoredDirectoryName,
  isMarkdownPath,
  type IgnoreRules,
} from '../tags/walk-markdown.js';
import type { WatchBackend, WatchEventType, WatchHandlers } from './watch-backend.js';

const TYPES: Record<string, WatchEventType> = {
  add: 'add',
  addDir: 'add',
  change: 'change',
  unlink: 'unlink',
  unlinkDir: 'unlink',
};

/** How long chokidar may take to watch a new directory before the subscription is reopened. */
const WATCH_DEADLINE_MS = 3000;
const POLL_MS = 20;

export const chokidarBackend: WatchBackend = {
  kind: 'chokidar',
  async subscribe(dir, ignore, handlers) {
    const watcher = chokidar.watch(dir, {
      ignoreInitial: true,
      // Like the reconcile walk: symlinked directories are not followed, so loops cannot occur.
      followSymlinks: false,
      ignored: (path, stats) => path !== dir && isIgnored(path, stats, ignore),
    });
    watcher.on('all', (event, path) => {
      const type = TYPES[event];
      if (type) handlers.onEvent(type, path);
      if (event === 'addDir') void followNewDirectory(watcher, path, ignore, handlers);
    });
    watcher.on('error', (error) => handlers.onError(error as Error));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
    return { close: () => watcher.close() };
  },
};

/**
 * Waits until chokidar watches `dir` (chokidar 5.0.0 records a closer for a directory right after
 * its fs.watch starts), then lists it: what was created before is reported here, what comes after
 * is chokidar's.
 */
async function followNewDirectory(
  watcher: FSWatcher,
  dir: string,
  ignore: IgnoreRules,
  handlers: WatchHandlers,
): Promise<void> {
  const deadline = Date.now() + WATCH_DEADLINE_MS;
  while (!watcher._closers.has(dir)) {
    if (watcher.closed || !(await lstat(dir).catch(() => null))?.isDirectory()) return;
    if (Date.now() > deadline) {
      handlers.onStale();
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (!entry.isDirectory()) handlers.onEvent('add', path);
    else if (!isIgnoredDirectoryName(entry.name, ignore))
      void followNewDirectory(watcher, path, ignore, handlers);
  }
}

function isIgnored(path: string, stats: Stats | undefined, rules: IgnoreRules): boolean {
  if (isIgnoredDirectory(path, rules)) return true;
  if (!stats) return false;
  // Pipes, sockets and devices named *.md would block a reader: never touch them.
  if (!stats.isFile() && !stats.isDirectory()) return true;
  return stats.isFile() && !isMarkdownPath(path) && !rules.fileNames?.includes(basename(path));
}
