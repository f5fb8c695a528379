/**
 * Keeps every monitored path watched, whatever happens to it. A directory is watched as a tree
 * by the backend. A file, or a path that does not exist yet, is watched through a plain watch of
 * its parent directory (non-recursive), filtered to that name: editors save by renaming a new
 * file over the old one, and a directory created later must be noticed. A watch dies with its
 * directory, so a directory deleted and re-created, or replaced, is watched again: an event on
 * the path itself, or the identity check of every path each `checkIntervalMs`, re-plans the
 * watches, and a backend that no longer covers its tree (stale) is reopened. Changes made while
 * a path was not watched were never reported, so every watch opened after start calls
 * `onReopened` (the request watcher then reconciles). A watch that cannot be opened (ENOSPC, a
 * backend error) is said once through `onError` and retried with a backoff, bounded by
 * `retry.maxMs`, until it opens, which `onRestored` says.
 */
import { watch as watchDirectory } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import type { BigIntStats } from 'node:fs';
import { SerialTask } from './serial-task.js';
import { IGNORE_RULES, type IgnoreRules } from '../tags/walk-markdown.js';
import type { Subscription, WatchBackend, WatchEventType } from './watch-backend.js';

export interface WatchedRootsOptions {
  paths: string[];
  backend: WatchBackend;
  /** What the trees' watches skip; IGNORE_RULES unless given. */
  ignore?: IgnoreRules;
  onChange: (path: string) => void;
  onError: (error: Error) => void;
  /** A watch was opened after start: changes made before it opened were not reported. */
  onReopened: () => void;
  /** A watch found stale (missing part of its tree, or dead): its events may be lost until reopened. */
  onLost?: () => void;
  /** A watch that had failed to open is open again (one line for humans). */
  onRestored?: (message: string) => void;
  /** What sees a path's changes while its watch cannot open, for the warning (the fallback). */
  meanwhile?: string;
  checkIntervalMs?: number;
  /** Retries of a watch that failed to open: after `firstMs`, then twice as long, at most `maxMs`. */
  retry?: { firstMs: number; maxMs: number };
}

interface Target {
  /** The directory and its identity; a new key means a new watch. */
  key: string;
  dir: string;
  /** null: the whole tree below `dir`; else only these entries of `dir`. */
  names: ReadonlySet<string> | null;
}

interface OpenWatch {
  target: Target;
  watch: Subscription;
}

/**
 * A watch that failed to open is retried after 1 s, 2 s, 4 s, ... and then every minute: soon
 * after a passing failure, without trying every second against a lasting one (ENOSPC).
 */
const RETRY = { firstMs: 1000, maxMs: 60_000 };

export class WatchedRoots {
  private readonly options: WatchedRootsOptions;
  private readonly roots: Set<string>;
  private readonly open = new Map<string, OpenWatch>();
  /** Open watches an event says may be dead: closed and opened again by the next sync. */
  private readonly stale = new Set<string>();
  /** Watches that failed to open: when they were last tried, and how long until the next try. */
  private readonly failed = new Map<string, { at: number; delayMs: number }>();
  private timer: NodeJS.Timeout | null = null;
  private readonly syncs = new SerialTask(
    () => this.syncOnce().catch((error: unknown) => this.options.onError(asError(error))),
    () => this.closed,
  );
  private started = false;
  private closed = false;

  constructor(options: WatchedRootsOptions) {
    this.options = options;
    this.roots = new Set(options.paths);
  }

  /** Resolves once every path that exists is watched. */
  async start(): Promise<void> {
    await this.sync();
    this.started = true;
    if (!this.closed)
      this.timer = setInterval(() => void this.sync(), this.options.checkIntervalMs ?? 1000);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.syncs.current;
    const open = [...this.open.values()];
    this.open.clear();
    await Promise.all(open.map((o) => this.closeWatch(o)));
  }

  /** Every path that exists is watched: none failed to open, none is waiting to be reopened. */
  allOpen(): boolean {
    return this.started && this.failed.size === 0 && this.stale.size === 0;
  }

  /** Brings the open watches in line with the paths as they are now; runs one at a time. */
  private sync(): Promise<void> {
    return this.syncs.run();
  }

  private async syncOnce(): Promise<void> {
    const targets = await this.plan();
    for (const [key, open] of [...this.open]) {
      if (targets.has(key) && !this.stale.has(key)) continue;
      this.open.delete(key);
      this.stale.delete(key);
      await this.closeWatch(open);
    }
    for (const key of this.failed.keys()) if (!targets.has(key)) this.failed.delete(key);
    let opened = false;
    for (const [key, target] of targets) {
      if (this.closed) return;
      if (this.open.has(key)) continue;
      const watch = await this.tryOpen(target);
      if (watch === null) continue;
      if (this.closed) {
        await watch.close();
        return;
      }
      this.open.set(key, { target, watch });
      opened = true;
    }
    if (opened) {
      // A path may have changed while its watch was being opened, unseen by the new watch.
      const now = await this.plan();
      if (now.size !== targets.size || [...now.keys()].some((key) => !targets.has(key)))
        void this.syncs.run();
    }
    if (opened && this.started) this.options.onReopened();
  }

  /**
   * Opens the watch of `target` unless it failed too recently to try again; null when not open.
   * The first failure is said once, and the watch opening again after failures is said too.
   */
  private async tryOpen(target: Target): Promise<Subscription | null> {
    const { firstMs, maxMs } = this.options.retry ?? RETRY;
    const failure = this.failed.get(target.key);
    if (failure && Date.now() - failure.at < failure.delayMs) return null;
    let watch: Subscription;
    try {
      watch = await this.openWatch(target);
    } catch (error) {
      if (!failure) {
        const meanwhile = this.options.meanwhile ? `; ${this.options.meanwhile}` : '';
        this.options.onError(
          new Error(
            `cannot watch ${target.dir}: ${asError(error).message}; trying again until it opens${meanwhile}`,
          ),
        );
      }
      const delayMs = failure ? Math.min(failure.delayMs * 2, maxMs) : firstMs;
      this.failed.set(target.key, { at: Date.now(), delayMs });
      return null;
    }
    if (failure) {
      this.failed.delete(target.key);
      this.options.onRestored?.(`watching ${target.dir} again`);
    }
    return watch;
  }

  /** What should be watched now: each path as a tree, or as an entry of its parent. */
  private async plan(): Promise<Map<string, Target>> {
    const trees = new Map<string, string>();
    const parents = new Map<string, { id: string; names: Set<string> }>();
    for (const root of this.roots) {
      const info = await statOrNull(root);
      if (info?.isDirectory()) {
        trees.set(root, identity(info));
        continue;
      }
      const parent = dirname(root);
      const parentInfo = await statOrNull(parent);
      if (!parentInfo?.isDirectory()) continue;
      const entry = parents.get(parent) ?? { id: identity(parentInfo), names: new Set<string>() };
      entry.names.add(basename(root));
      parents.set(parent, entry);
    }
    const underTree = (path: string, self: string | null): boolean =>
      [...trees.keys()].some((dir) => dir !== self && (path === dir || isBelow(path, dir)));
    const targets = new Map<string, Target>();
    for (const [dir, id] of trees) {
      if (underTree(dir, dir)) continue;
      const key = `tree\0${dir}\0${id}`;
      targets.set(key, { key, dir, names: null });
    }
    for (const [dir, { id, names }] of parents) {
      if (underTree(dir, null)) continue;
      const key = `entries\0${dir}\0${id}\0${[...names].sort().join('\0')}`;
      targets.set(key, { key, dir, names });
    }
    return targets;
  }

  private async openWatch(target: Target): Promise<Subscription> {
    const onEvent = (type: WatchEventType, path: string): void => this.changed(type, path);
    // A watch that misses part of its tree, or died, is closed and opened again by the next sync.
    const onStale = (): void => {
      this.stale.add(target.key);
      this.options.onLost?.();
      void this.sync();
    };
    const onError = (error: Error): void => this.options.onError(error);
    if (target.names === null) {
      // A symlinked root: its target is watched, and paths are reported under the root as given.
      const real = await realpath(target.dir);
      return this.options.backend.subscribe(real, this.options.ignore ?? IGNORE_RULES, {
        onEvent: (type, path) => onEvent(type, target.dir + path.slice(real.length)),
        onError,
        onStale,
      });
    }
    return watchEntries(target.dir, target.names, {
      onEvent,
      onError: (error) => {
        onError(error);
        onStale();
      },
    });
  }

  private async closeWatch(open: OpenWatch): Promise<void> {
    await open.watch.close().catch((error: unknown) => this.options.onError(asError(error)));
  }

  /**
   * An event on a monitored path re-plans the watches now. A watched directory itself removed (or
   * moved away: it may come back with the same identity) means its watch died: it is reopened.
   */
  private changed(type: WatchEventType, path: string): void {
    if (this.closed) return;
    let check = this.roots.has(path);
    if (type === 'unlink') {
      for (const [key, open] of this.open) {
        if (open.target.dir !== path) continue;
        this.stale.add(key);
        this.options.onLost?.();
        check = true;
      }
    }
    if (check) void this.sync();
    this.options.onChange(path);
  }
}

/** A non-recursive watch of `dir` that reports only the entries named in `names`. */
function watchEntries(
  dir: string,
  names: ReadonlySet<string>,
  handlers: {
    onEvent: (type: WatchEventType, path: string) => void;
    onError: (error: Error) => void;
  },
): Subscription {
  const watcher = watchDirectory(dir, (_event, name) => {
    // No name: dir itself changed (removed, moved): its watch may be dead.
    if (name === null) handlers.onEvent('unlink', dir);
    else if (names.has(name)) handlers.onEvent('change', join(dir, name));
  });
  watcher.on('error', (error) => handlers.onError(error));
  return { close: async () => watcher.close() };
}

function statOrNull(path: string): Promise<BigIntStats | null> {
  return stat(path, { bigint: true }).catch(() => null);
}

/** Device, inode and birth time: a directory re-created with a recycled inode is still new. */
function identity(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.birthtimeNs}`;
}

function isBelow(path: string, dir: string): boolean {
  return path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
