/**
 * Wakes a waiter when one of the files it names changes: a request file (the agent swapped its
 * tag) or a session's `.exit` (the agent exited). One `fs.watch` per directory, shared and closed
 * with its last waiter. Events are hints (inotify drops them under load; a watch may fail for
 * lack of inotify watches): every waiter also looks again after its own timeout.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/** A waiter on some files, from `ChangeSignals.subscribe` until `close()`. */
export interface ChangeSubscription {
  /**
   * Resolves at the first change since the previous call (or since subscribing) — at once if one
   * happened meanwhile — or after `timeoutMs`, or when the signals are closed.
   */
  next(timeoutMs: number): Promise<void>;
  close(): void;
}

interface Waiter {
  changed: boolean;
  wake: (() => void) | null;
}

interface WatchedDir {
  watcher: FSWatcher | null;
  /** File name → waiters on it. */
  names: Map<string, Set<Waiter>>;
}

export class ChangeSignals {
  private readonly dirs = new Map<string, WatchedDir>();
  private closed = false;

  constructor(private readonly onError: (error: Error) => void) {}

  subscribe(paths: string[]): ChangeSubscription {
    const waiter: Waiter = { changed: false, wake: null };
    const names = paths.map((path) => [dirname(path), basename(path)] as const);
    for (const [dir, name] of names) this.add(dir, name, waiter);
    return {
      next: (timeoutMs) => this.next(waiter, timeoutMs),
      close: () => {
        for (const [dir, name] of names) this.remove(dir, name, waiter);
        waiter.wake?.();
      },
    };
  }

  /** Wakes every waiter and watches nothing more. */
  close(): void {
    this.closed = true;
    for (const entry of this.dirs.values()) {
      entry.watcher?.close();
      for (const waiters of entry.names.values()) for (const waiter of waiters) notify(waiter);
    }
    this.dirs.clear();
  }

  private next(waiter: Waiter, timeoutMs: number): Promise<void> {
    if (waiter.changed || this.closed) {
      waiter.changed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => waiter.wake?.(), timeoutMs);
      waiter.wake = () => {
        clearTimeout(timer);
        waiter.wake = null;
        waiter.changed = false;
        resolve();
      };
    });
  }

  private add(dir: string, name: string, waiter: Waiter): void {
    if (this.closed) return;
    let entry = this.dirs.get(dir);
    if (!entry) {
      entry = { watcher: null, names: new Map() };
      this.dirs.set(dir, entry);
      entry.watcher = this.watchDir(dir, entry);
    }
    let waiters = entry.names.get(name);
    if (!waiters) entry.names.set(name, (waiters = new Set()));
    waiters.add(waiter);
  }

  private remove(dir: string, name: string, waiter: Waiter): void {
    const entry = this.dirs.get(dir);
    const waiters = entry?.names.get(name);
    if (!entry || !waiters) return;
    waiters.delete(waiter);
    if (waiters.size === 0) entry.names.delete(name);
    if (entry.names.size === 0) {
      entry.watcher?.close();
      this.dirs.delete(dir);
    }
  }

  private watchDir(dir: string, entry: WatchedDir): FSWatcher | null {
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false });
    } catch (error) {
      this.onError(new Error(`cannot watch ${dir}: ${(error as Error).message}`));
      return null;
    }
    watcher.on('change', (_event, filename) => {
      // Without a name (the kernel may leave it out), any of the directory's files may have changed.
      const changed =
        filename === null || filename === undefined
          ? [...entry.names.values()]
          : [entry.names.get(String(filename))];
      for (const waiters of changed) for (const waiter of waiters ?? []) notify(waiter);
    });
    watcher.on('error', (error) => {
      // The directory went away or the watch broke: wake everyone; timeouts carry on from here.
      watcher.close();
      entry.watcher = null;
      for (const waiters of entry.names.values()) for (const waiter of waiters) notify(waiter);
      this.onError(new Error(`watching ${dir}: ${error.message}`));
    });
    return watcher;
  }
}

function notify(waiter: Waiter): void {
  waiter.changed = true;
  waiter.wake?.();
}
