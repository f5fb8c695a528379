/**
 * Node's own fs.watch, one watcher per directory (one inotify watch each, as parcel): no record of
 * any file, no thread and no binary of its own. @parcel/watcher keeps a record of every file and
 * directory of the tree in its thread's memory (12 MB at 50,000 files) and walks the whole tree
 * when it subscribes, beside the reconcile pass's own walk; this backend lists directories only.
 * Each directory is watched before it is listed, so what is created in it after the listing is
 * reported by its watcher. A directory that arrives (mkdir -p, a tree moved in) is watched and
 * looked inside at once, each directory below it too: what it holds is reported as added. A
 * directory that goes (removed, or moved out, where its watch would go on reporting under its old
 * path) has its watchers closed, those below it too. Events are reported in inotify's order, each
 * looked at (and a new directory listed) before the next: the daemon's sync relies on that
 * order. Like the others, it does not follow symlinks, and an inotify queue overflow goes unseen
 * (libuv skips IN_Q_OVERFLOW): the request watcher's full passes cover it.
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { basename, join, sep } from 'node:path';
import {
  isIgnoredDirectory,
  isIgnoredDirectoryName,
  type IgnoreRules,
} from '../tags/walk-markdown.js';
import type { WatchBackend, WatchHandlers } from './watch-backend.js';

/** fs.watch as this backend calls it (tests: one that fails as the kernel can). */
export type WatchDirectory = (
  dir: string,
  listener: (type: string, entry: string | Buffer | null) => void,
) => FSWatcher;

const watchDirectory: WatchDirectory = (dir, listener) =>
  watch(dir, { persistent: false }, listener);

/** The backend over `watchFn` (fs.watch in the one the daemon uses). */
export function createNodeBackend(watchFn: WatchDirectory = watchDirectory): WatchBackend {
  return {
    kind: 'node',
    async subscribe(dir, ignore, handlers) {
      const tree = new DirectoryWatches(dir, ignore, handlers, watchFn);
      await tree.start();
      return { close: () => Promise.resolve(tree.close()) };
    },
  };
}

export const nodeBackend = createNodeBackend();

/** A directory watched, and its inode when its watch opened. */
interface Watched {
  watcher: FSWatcher;
  ino: number;
}

/** Errors that mean a directory is gone, or not one to watch: the reconcile pass covers it. */
const UNWATCHABLE = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'ELOOP']);

class DirectoryWatches {
  private readonly watched = new Map<string, Watched>();
  /**
   * The events, in the order inotify gave them, each handled (a look at the path, a new
   * directory's listing) before the next is reported: the daemon's sync (docs/DAEMON.md) takes
   * its own file's event as proof that every change made before it was reported.
   */
  private queue: Promise<void> = Promise.resolve();
  /**
   * Paths whose change waits in the queue, with its watch's verdict: a burst of writes to one
   * file is one event.
   */
  private readonly changes = new Map<string, Promise<boolean>>();
  private closed = false;
  private starting = true;
  /** The first directory below the root whose watch could not open while start() ran. */
  private startFailure: Error | null = null;

  constructor(
    private readonly root: string,
    private readonly ignore: IgnoreRules,
    private readonly handlers: WatchHandlers,
    private readonly watchFn: WatchDirectory,
  ) {}

  /**
   * Watches the tree; rejects when its root cannot be watched or listed, or a directory below it
   * cannot be watched for a reason other than its going (ENOSPC: out of inotify watches): such a
   * watch would miss that directory's changes, so it is not had at all, and the caller tries
   * again later (watched-roots.ts), the reconcile pass finding the changes meanwhile.
   */
  async start(): Promise<void> {
    const info = await lstat(this.root);
    if (!info.isDirectory()) throw new Error(`${this.root} is not a directory`);
    const { kept, settle } = verdict();
    try {
      this.watched.set(this.root, { watcher: this.watcherOf(this.root, kept), ino: info.ino });
      const same = await isDirectoryAt(this.root, info.ino);
      settle(same);
      if (!same) throw new Error(`${this.root} changed while its watch opened`);
      await this.listed(this.root, false, true);
      if (this.startFailure) throw this.startFailure;
    } catch (error) {
      this.close();
      throw error;
    } finally {
      settle(false);
      this.starting = false;
    }
  }

  close(): void {
    this.closed = true;
    for (const { watcher } of this.watched.values()) watcher.close();
    this.watched.clear();
  }

  /**
   * The watch of `dir`. Its events are handled once `kept` says it watches the directory lstat
   * saw, and dropped if not: fs.watch follows a symlink, and what a directory swapped for one
   * reports comes from outside the tree (looked at through the link, it would be watched too).
   */
  private watcherOf(dir: string, kept: Promise<boolean>): FSWatcher {
    const watcher = this.watchFn(dir, (type, entry) => {
      if (this.closed) return;
      // No name: libuv could not say which entry; the directory stands for it.
      const path = entry === null ? dir : join(dir, entry.toString());
      if (type === 'change' && entry !== null) this.changed(path, kept);
      else
        this.enqueue(async () => {
          if (await kept) await this.renamed(dir, path);
        });
    });
    watcher.on('error', (error) => {
      // The watch failed: events below it may be lost, and a new one might fail the same way.
      this.forget(dir);
      if (this.closed) return;
      this.handlers.onError(error);
      this.handlers.onStale();
    });
    return watcher;
  }

  private changed(path: string, kept: Promise<boolean>): void {
    if (this.changes.get(path) === kept) return;
    this.changes.set(path, kept);
    this.enqueue(async () => {
      if (this.changes.get(path) === kept) this.changes.delete(path);
      if (await kept) this.handlers.onEvent('change', path);
    });
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue
      .then(() => (this.closed ? undefined : task()))
      .catch((error: unknown) => {
        if (!this.closed) this.handlers.onError(error as Error);
      });
  }

  /**
   * Something came or went at `path`, in `dir`: looked at now, since the event says neither which
   * nor what. A directory there is watched afresh, whatever was watched at its path before: one
   * removed and made again (its inode number may be the same) holds a watch the kernel dropped.
   */
  private async renamed(dir: string, path: string): Promise<void> {
    const info = await lstat(path).catch(() => null);
    if (this.closed) return;
    // libuv names a watched directory that went by its own name, inside itself (or by none). A
    // directory below the root is watched again from its parent's event; the root has none.
    if (info === null && (path === dir || basename(path) === basename(dir)))
      if (dir === this.root || !(await this.holds(dir))) await this.rewatch(dir, true);
    if (this.closed) return;
    if (info === null) {
      this.forget(path);
      this.handlers.onEvent('unlink', path);
      return;
    }
    this.handlers.onEvent('add', path);
    if (path === dir) return;
    if (info.isDirectory() && !isIgnoredDirectory(path, this.ignore))
      await this.rewatch(path, true);
    else this.forget(path);
  }

  /** Whether `dir` is the directory its watch was opened on. */
  private holds(dir: string): Promise<boolean> {
    return isDirectoryAt(dir, this.watched.get(dir)?.ino);
  }

  /** `dir` and all below it watched anew (with `report`, what it holds reported); gone: not. */
  private async rewatch(dir: string, report: boolean): Promise<void> {
    const info = await lstat(dir).catch(() => null);
    if (this.closed) return;
    if (info?.isDirectory()) {
      await this.arrived(dir, info.ino, report);
      return;
    }
    this.forget(dir);
    if (dir === this.root) this.handlers.onStale();
  }

  /** A directory to watch, then list: with `report`, what it holds is reported as added. */
  private async arrived(dir: string, ino: number, report: boolean): Promise<void> {
    const { kept, settle } = verdict();
    let watcher: FSWatcher;
    try {
      watcher = this.watcherOf(dir, kept);
    } catch (error) {
      settle(false);
      this.forget(dir);
      // Gone again, unreadable, or a symlink now: the pass covers it. Else (out of watches) the
      // directory's changes would go unseen: the whole watch is given up, to be opened again.
      const lost = !UNWATCHABLE.has((error as NodeJS.ErrnoException).code ?? '');
      if (lost && this.starting) this.startFailure ??= error as Error;
      else if (lost || dir === this.root) {
        if (lost) this.handlers.onError(error as Error);
        this.handlers.onStale();
      }
      return;
    }
    // A directory swapped for a symlink since its lstat: the watch is on the link's target,
    // outside the tree. Let go (only it: its parent's event says what came at `dir`, and closes
    // an older watch of `dir` then).
    const same = (await isDirectoryAt(dir, ino)) && !this.closed;
    settle(same);
    if (!same) {
      watcher.close();
      if (dir === this.root && !this.closed) this.handlers.onStale();
      return;
    }
    // The old watches of this path and below close once the new one is open; its listing
    // watches the directories below again.
    this.forget(dir);
    this.watched.set(dir, { watcher, ino });
    await this.listed(dir, report, false);
  }

  /**
   * Lists `dir` (watched already): with `report`, each entry is reported as added; each directory
   * below is watched in turn. With `strict`, a listing that fails rejects (the root's).
   */
  private async listed(dir: string, report: boolean, strict: boolean): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true }).catch((error: unknown) => {
      if (strict) throw error;
      return [];
    });
    const below: Promise<void>[] = [];
    for (const entry of entries) {
      // A watch that failed as it opened is given up whole: nothing more to watch.
      if (this.closed || this.startFailure) return;
      const path = join(dir, entry.name);
      if (report) this.handlers.onEvent('add', path);
      if (!entry.isDirectory() || isIgnoredDirectoryName(entry.name, this.ignore)) continue;
      if (!this.watched.has(path)) below.push(this.rewatch(path, report));
    }
    await Promise.all(below);
  }

  /** Stops watching `path` and every directory below it. */
  private forget(path: string): void {
    const prefix = path + sep;
    for (const [dir, { watcher }] of this.watched)
      if (dir === path || dir.startsWith(prefix)) {
        watcher.close();
        this.watched.delete(dir);
      }
  }
}

/** Whether a watch is kept (kept), said once (settle); later settles change nothing. */
function verdict(): { kept: Promise<boolean>; settle: (kept: boolean) => void } {
  let settle: (kept: boolean) => void = () => undefined;
  const kept = new Promise<boolean>((resolve) => (settle = resolve));
  return { kept, settle };
}

/** Whether a directory (not a symlink to one) is at `dir` now, with inode `ino`. */
async function isDirectoryAt(dir: string, ino: number | undefined): Promise<boolean> {
  const info = await lstat(dir).catch(() => null);
  return info?.isDirectory() === true && info.ino === ino;
}
