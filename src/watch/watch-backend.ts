/**
 * The file-watch backends behind the request watcher. A backend subscribes to one directory tree
 * and reports what changed in it; what it reports is only a hint (the reconcile pass is the
 * truth). No backend reports an inotify queue overflow (@parcel/watcher skips IN_Q_OVERFLOW,
 * Node's fs.watch never sees it): the request watcher's full passes after a burst or a flood of
 * events, and its periodic passes, cover that loss. `node` (node-backend) is the default: Node's
 * fs.watch on each directory, its events reported in inotify's order. @parcel/watcher: one
 * inotify watch per directory, read by its own thread, a record of every file, from a prebuilt
 * binary. chokidar is the portable fallback: one inotify watch per markdown file and directory,
 * and a stat record per file, which costs hundreds of MB on large trees.
 * This module is the interface only: the backends import it, and load-watch-backend picks one.
 */
import type { IgnoreRules } from '../tags/walk-markdown.js';

/** The first is the default. */
export const WATCHER_KINDS = ['node', 'parcel', 'chokidar'] as const;
export type WatcherKind = (typeof WATCHER_KINDS)[number];
export const DEFAULT_WATCHER: WatcherKind = WATCHER_KINDS[0];

export type WatchEventType = 'add' | 'change' | 'unlink';

export interface WatchHandlers {
  /** A file or directory below the tree was added, changed or removed. */
  onEvent: (type: WatchEventType, path: string) => void;
  /** Events may have been lost: worth a log line and a reconcile. */
  onError: (error: Error) => void;
  /**
   * The subscription no longer covers the whole tree (a directory arrived with subdirectories
   * the backend will never watch, or the backend failed): it must be opened again.
   */
  onStale: () => void;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface WatchBackend {
  kind: WatcherKind;
  /**
   * Watches the tree at `dir` (a real path: no backend subscribes through a symlinked root).
   * Resolves once changes made from then on are reported; rejects if the tree cannot be watched.
   */
  subscribe(dir: string, ignore: IgnoreRules, handlers: WatchHandlers): Promise<Subscription>;
}

export function isWatcherKind(value: unknown): value is WatcherKind {
  return WATCHER_KINDS.includes(value as WatcherKind);
}
