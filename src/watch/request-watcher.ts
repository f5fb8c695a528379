/**
 * Notices request files that changed. Watch events are hints: inotify drops events under
 * bursts without telling anyone, so a reconcile pass (stat every markdown file, compare size and
 * mtime with the last pass) runs periodically, after every burst, after a watch error, and after
 * a watch had to be opened again. Each changed file is handed on only after it has been quiet
 * for the debounce period.
 */
import { statSync, type Stats } from 'node:fs';
import { isMarkdownPath, walkMarkdownFiles } from '../tags/walk-markdown.js';
import { loadWatchBackend } from './load-watch-backend.js';
import type { WatcherKind } from './watch-backend.js';
import { SerialTask } from './serial-task.js';
import { WatchedRoots } from './watched-roots.js';

export interface RequestWatcherOptions {
  paths: string[];
  debounceMs: number;
  rescanIntervalMs: number;
  /** Called once per settled file (quiet for debounceMs), with the path as discovered. */
  onSettled: (path: string) => void;
  onError: (error: Error) => void;
  /** A watch that had failed to open (said through `onError`) is open again. */
  onRestored?: (message: string) => void;
  /** Events within one debounce window that count as a burst and trigger a reconcile. */
  burstSize?: number;
  /**
   * Every path a watch event names (markdown or not, before the quiet period) and every file a
   * reconcile pass finds changed or gone: the daemon's live tag index and its sync files.
   */
  onEvent?: (path: string) => void;
  /** false: no file watch at all, reconcile passes only (network filesystems without inotify). */
  watch?: boolean;
  /** The watch backend (default parcel); chokidar is used where parcel cannot load or watch. */
  watcher?: WatcherKind;
}

/** Reads a file found by the first pass; true when it should settle (be handed on). */
type Inspect = (path: string) => Promise<boolean>;

/**
 * What a pass compares. Numbers, not bigints: a pass stats every file, and bigint stats cost a
 * fifth more CPU. mtimeMs keeps about a microsecond; a new inode (a save by rename) counts too.
 */
interface Seen {
  size: number;
  mtimeMs: number;
  ino: number;
}

export class RequestWatcher {
  private readonly options: RequestWatcherOptions;
  private roots: WatchedRoots | null = null;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly seen = new Map<string, Seen>();
  private rescanTimer: NodeJS.Timeout | null = null;
  private eventsSinceReconcile = 0;
  private readonly passes = new SerialTask(
    () => this.runReconcile(),
    () => this.closed,
  );
  /** The first pass's inspector, until a pass has run with it. */
  private inspect: Inspect | null = null;
  private closed = false;
  /** Whether a reconcile pass has run to its end. */
  private passed = false;
  /** Times events may have been lost (a watch error, a stale watch), and those a pass has found since. */
  private losses = 0;
  private caughtUp = 0;

  constructor(options: RequestWatcherOptions) {
    this.options = options;
  }

  /**
   * Watches, then runs the first reconcile: every existing file is considered once. `inspect`,
   * when given, sees every file of that pass (after its stat is recorded) and says whether it
   * should settle; without it every file does. The daemon reads each file there once, instead of
   * once for its claims and again when every file settles.
   */
  async start(inspect?: Inspect): Promise<void> {
    if (this.options.watch !== false) await this.watch();
    this.inspect = inspect ?? null;
    await this.reconcile();
    this.scheduleRescan();
  }

  private async watch(): Promise<void> {
    const backend = await loadWatchBackend(this.options.watcher ?? 'parcel', (message) =>
      this.options.onError(new Error(message)),
    );
    if (this.closed) return;
    this.roots = new WatchedRoots({
      paths: this.options.paths,
      backend,
      onChange: (path) => this.touch(path),
      // A watch that failed may have lost events.
      onError: (error) => {
        this.losses++;
        this.options.onError(error);
        void this.reconcile();
      },
      onLost: () => this.losses++,
      onReopened: () => {
        const seen = this.losses;
        void this.reconcile().then(() => {
          this.caughtUp = Math.max(this.caughtUp, seen);
        });
      },
      onRestored: this.options.onRestored,
      meanwhile: `until then the reconcile pass every ${seconds(this.options.rescanIntervalMs)} finds its changes`,
    });
    await this.roots.start();
  }

  /**
   * Whether every change made so far has been reported (or soon will be) by an event: false from a
   * watch error or a stale watch until a reconcile pass made after its watch opened again.
   */
  get eventsComplete(): boolean {
    return this.caughtUp === this.losses;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    await this.roots?.close();
    await this.passes.current;
  }

  /** Restarts the quiet period of `path`. */
  touch(path: string): void {
    if (this.closed) return;
    this.options.onEvent?.(path);
    if (!isMarkdownPath(path)) return;
    this.eventsSinceReconcile++;
    const previous = this.timers.get(path);
    if (previous) clearTimeout(previous);
    this.timers.set(
      path,
      setTimeout(() => {
        this.timers.delete(path);
        this.options.onSettled(path);
        if (
          this.timers.size === 0 &&
          this.eventsSinceReconcile >= (this.options.burstSize ?? 200)
        ) {
          void this.reconcile();
        }
      }, this.options.debounceMs),
    );
  }

  /**
   * Stats every markdown file; new or changed ones (size or mtime) are touched. Asked for while a
   * pass runs, one more pass follows it: the running one may have passed the change already.
   */
  reconcile(): Promise<void> {
    return this.passes.run();
  }

  private async runReconcile(): Promise<void> {
    const inspect = this.inspect;
    this.inspect = null;
    this.eventsSinceReconcile = 0;
    const present = new Set<string>();
    for (const root of this.options.paths) {
      for await (const path of walkMarkdownFiles(root)) {
        if (this.closed) return;
        present.add(path);
        const info = statOrUndefined(path);
        if (!info) continue;
        const before = this.seen.get(path);
        const changed =
          !before ||
          before.size !== info.size ||
          before.mtimeMs !== info.mtimeMs ||
          before.ino !== info.ino;
        if (changed) {
          this.seen.set(path, { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino });
          // The first pass finds every file: the index builds itself from its own walk.
          if (before || this.passed) this.options.onEvent?.(path);
        }
        // An inspected pass looks at every file: a pass that ran before it recorded them all.
        const settle = inspect ? await inspect(path) : changed;
        if (settle) this.settleAt(path, info.mtimeMs + this.options.debounceMs);
      }
    }
    for (const path of this.seen.keys()) {
      if (present.has(path)) continue;
      this.seen.delete(path);
      this.options.onEvent?.(path);
    }
    this.passed = true;
  }

  /**
   * Hands `path` on at `at` (ms since the epoch), unless it is due to settle already: a file found
   * by a pass once it has been quiet debounceMs since its last write, or one read too early.
   */
  settleAt(path: string, at: number): void {
    if (this.closed || this.timers.has(path)) return;
    const wait = Math.max(0, at - Date.now());
    this.timers.set(
      path,
      setTimeout(() => {
        this.timers.delete(path);
        this.options.onSettled(path);
      }, wait),
    );
  }

  private scheduleRescan(): void {
    if (this.closed) return;
    this.rescanTimer = setTimeout(() => {
      void this.reconcile().finally(() => this.scheduleRescan());
    }, this.options.rescanIntervalMs);
  }
}

/** A period for humans: `60 s`, `0.5 s`. */
function seconds(ms: number): string {
  return `${ms / 1000} s`;
}

/**
 * Synchronous on purpose: the pass stats every markdown file every rescan interval, and a stat
 * through a promise costs about four times the CPU (measured at 50,000 files: 1.9 s against
 * 0.46 s a pass, walk included). The walk awaits each directory listing, so the loop is held for
 * one directory's stats at a time.
 */
function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
