/**
 * The file-watch backends behind the request watcher. A backend subscribes to one directory tree
 * and reports what changed in it; what it reports is only a hint (the reconcile pass is the
 * truth). Neither backend reports an inotify queue overflow (@parcel/watcher skips
 * IN_Q_OVERFLOW, Node's fs.watch under chokidar never sees it): the request watcher's burst and
 * periodic reconciles cover that loss.
 * @parcel/watcher is the default: one inotify watch per directory, read by its own thread, from a
 * prebuilt binary shipped in its npm packages. chokidar is the portable fallback: one inotify
 * watch per markdown file and directory, and a stat record per file, which costs hundreds of MB
 * on large trees.
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';

export const WATCHER_KINDS = ['parcel', 'chokidar'] as const;
export type WatcherKind = (typeof WATCHER_KINDS)[number];

export type WatchEventType = 'add' | 'change' | 'unlink';

export interface IgnoreRules {
  /** Directory names never descended into. */
  directoryNames: readonly string[];
  /** Endings of directory names never descended into. */
  directorySuffixes: readonly string[];
}

/** The directories the reconcile walk (walkMarkdownFiles) skips: our lock directories too. */
export const IGNORE_RULES: IgnoreRules = {
  directoryNames: ['node_modules', '.git'],
  directorySuffixes: ['.engine-lock'],
};

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

export function isIgnoredDirectoryName(name: string, rules: IgnoreRules = IGNORE_RULES): boolean {
  return (
    rules.directoryNames.includes(name) ||
    rules.directorySuffixes.some((suffix) => name.endsWith(suffix))
  );
}

export function isIgnoredDirectory(path: string, rules: IgnoreRules = IGNORE_RULES): boolean {
  return isIgnoredDirectoryName(basename(path), rules);
}

type Loader = (kind: WatcherKind) => Promise<WatchBackend>;

const importBackend: Loader = async (kind) =>
  kind === 'parcel'
    ? (await import('./parcel-backend.js')).parcelBackend
    : (await import('./chokidar-backend.js')).chokidarBackend;

/**
 * The backend to watch with. @parcel/watcher needs a prebuilt binary for this platform: when it
 * cannot load, chokidar is used. When it loads but cannot subscribe to a tree that still exists
 * (twice: a file removed during its initial walk fails it once; an unreadable directory fails it
 * always), that tree is watched with chokidar. Either fallback is told to `onFallback` in one line.
 */
export async function loadWatchBackend(
  kind: WatcherKind,
  onFallback: (message: string) => void,
  load: Loader = importBackend,
): Promise<WatchBackend> {
  if (kind === 'chokidar') return load('chokidar');
  let parcel: WatchBackend;
  try {
    parcel = await load('parcel');
  } catch (error) {
    onFallback(
      `@parcel/watcher cannot be loaded here (${firstLine(error)}); watching with chokidar, which uses one inotify watch per file`,
    );
    return load('chokidar');
  }
  return {
    kind: 'parcel',
    async subscribe(dir, ignore, handlers) {
      let lastError: unknown;
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          return await parcel.subscribe(dir, ignore, handlers);
        } catch (error) {
          lastError = error;
        }
      }
      // Gone meanwhile: nothing to watch here; the caller plans again.
      if (!(await isDirectory(dir))) throw asError(lastError);
      const chokidar = await load('chokidar');
      onFallback(
        `@parcel/watcher cannot watch ${dir} (${firstLine(lastError)}); watching it with chokidar, which uses one inotify watch per file`,
      );
      return chokidar.subscribe(dir, ignore, handlers);
    },
  };
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
