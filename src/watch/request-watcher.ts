/**
 * Notices request files that changed. Watch events are hints: inotify drops events under
 * bursts without telling anyone (no backend reports a queue overflow), so a full reconcile
 * pass (stat every markdown file, compare size, mtime and inode with the last pass) runs at
 * start, after every burst of markdown events, after a flood of events on any path, after a watch
 * error, after a watch had to be opened again, and periodically. While every watch is open, the
 * periodic pass is a directory pass (tree-state.ts), and only every FULL_PASS_EVERY-th a full
 * one: an overflow needs a flood, which is seen, and a full pass every interval was most of the
 * daemon's idle CPU. Low inotify headroom (checked each interval) counts as a watch not open: a
 * new directory's watch may fail unseen, so each pass is a full one, and events count as
 * incomplete until the full pass after the headroom is back. Each changed file is handed on only after it has been quiet for the
 * debounce period.
 */
import type { Stats } from 'node:fs';
import { isMarkdownPath } from '../tags/walk-markdown.js';
import { loadWatchBackend } from './load-watch-backend.js';
import { DEFAULT_WATCHER, type WatchBackend, type WatcherKind } from './watch-backend.js';
import { SerialTask } from './serial-task.js';
import { TreeState, type StatFile } from './tree-state.js';
import { WatchedRoots } from './watched-roots.js';
import { watchHeadroomLow } from './watch-headroom.js';

/** While every watch is open, one periodic pass in this many is a full one. */
export const FULL_PASS_EVERY = 5;

/**
 * Events on any path within one second that make a flood, followed by a full pass once quiet:
 * the kernel's queue (16,384 events) may have overflowed, losing markdown events with the rest.
 * Far above what running agents write (their logs and heartbeats), far below an overflow.
 */
export const FLOOD_EVENTS = 1000;

export interface RequestWatcherOptions {
  paths: string[];
  debounceMs: number;
  rescanIntervalMs: number;
  /** Called once per settled file (quiet for debounceMs), with the path as discovered. */
  onSettled: (path: string) => void;
  onError: (error: Error) => void;
  /** A watch that had failed to open (said through `onError`) is open again. */
  onRestored?: (message: string) => void;
  /** Markdown events since the last full pass that make a burst, followed by a full pass. */
  burstSize?: number;
  /**
   * Every path a watch event names (markdown or not, before the quiet period) and every file a
   * reconcile pass finds changed or gone: the daemon's live tag index and its sync files.
   */
  onEvent?: (path: string) => void;
  /** false: no file watch at all, reconcile passes only (network filesystems without inotify). */
  watch?: boolean;
  /** The watch backend (default node); chokidar is used where parcel cannot load or watch. */
  watcher?: WatcherKind;
  /** Tests: whether the inotify watches leave too little room (default watchHeadroomLow). */
  headroomLow?: () => boolean;
  /** Tests: the backend itself (one whose subscription is held open), in place of `watcher`'s. */
  backend?: WatchBackend;
}

/** Reads a file found by the first pass; true when it should settle (be handed on). */
type Inspect = (path: string) => Promise<boolean>;

export class RequestWatcher {
  private readonly options: RequestWatcherOptions;
  private roots: WatchedRoots | null = null;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly tree = new TreeState((path) => {
    if (this.passed) this.options.onEvent?.(path);
  });
  private rescanTimer: NodeJS.Timeout | null = null;
  private eventsSinceReconcile = 0;
  private floodSince = 0;
  private floodCount = 0;
  private floodTimer: NodeJS.Timeout | null = null;
  /** The next pass is a full one (asked for, or due); else a directory pass. */
  private fullPassDue = true;
  private periodicPasses = 0;
  /** The inotify headroom was low at the last periodic check. */
  private lowHeadroom = false;
  private readonly passes = new SerialTask(
    () => this.runReconcile(),
    () => this.closed,
  );
  /** The first pass's inspector, until a pass has run with it. */
  private inspect: Inspect | null = null;
  /** The first pass's stat of each file, with its inspector. */
  private firstStat: StatFile | undefined;
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
   * Watches and runs the first reconcile side by side: every existing file is considered once.
   * `inspect`, when given, sees every file of that pass (after its stat is recorded) and says
   * whether it should settle; without it every file does. The daemon reads each file there once,
   * instead of once for its claims and again when every file settles. `statFile`, with `inspect`,
   * stats each file of that pass: the daemon's opens the file and keeps the read that `inspect`
   * then uses. Resolves once both are done, with a catch-up pass under way (catchUp).
   */
  async start(inspect?: Inspect, statFile?: StatFile): Promise<void> {
    this.inspect = inspect ?? null;
    this.firstStat = inspect && statFile;
    if (this.options.watch === false) await this.reconcile();
    else {
      // Counted before the first pass begins: until the catch-up pass, events are incomplete.
      const seen = ++this.losses;
      await Promise.all([this.watch(), this.reconcile()]);
      this.catchUp(seen);
    }
    this.scheduleRescan();
  }

  /**
   * The watch opened while the first pass ran (at 50,000 files @parcel/watcher crawls the tree
   * for 0.5 to 1 s on its own thread, which the first pass no longer waits for): a change made
   * in a directory before its watch was added, after the first pass had listed or read it, was
   * reported by nobody. A full pass now (stats only: nothing is read unless it changed since the
   * first pass's stat) finds every such change; until it has run, events count as incomplete, so
   * the tag index does not answer.
   */
  private catchUp(seen: number): void {
    void this.reconcile().then(() => {
      this.caughtUp = Math.max(this.caughtUp, seen);
    });
  }

  private async watch(): Promise<void> {
    const backend =
      this.options.backend ??
      (await loadWatchBackend(this.options.watcher ?? DEFAULT_WATCHER, (message) =>
        this.options.onError(new Error(message)),
      ));
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
   * watch error or a stale watch until a reconcile pass made after its watch opened again, and
   * from a flood (an overflow parcel does not report) until the full pass after it.
   */
  get eventsComplete(): boolean {
    return this.caughtUp === this.losses;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    if (this.floodTimer) clearTimeout(this.floodTimer);
    await this.roots?.close();
    await this.passes.current;
  }

  /** Restarts the quiet period of `path`; every event on any path counts towards a flood. */
  touch(path: string): void {
    if (this.closed) return;
    this.options.onEvent?.(path);
    this.countFlood();
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

  /** A flood (FLOOD_EVENTS within a second) ends in a full pass once quiet for the debounce. */
  private countFlood(): void {
    const now = Date.now();
    if (now - this.floodSince >= 1000) {
      this.floodSince = now;
      this.floodCount = 0;
    }
    if (++this.floodCount < FLOOD_EVENTS) return;
    // parcel hides an inotify overflow (and a failed watch add): a flood may have lost events.
    if (this.floodTimer) clearTimeout(this.floodTimer);
    else this.losses++;
    this.floodTimer = setTimeout(() => {
      this.floodTimer = null;
      const seen = this.losses;
      void this.reconcile().then(() => {
        this.caughtUp = Math.max(this.caughtUp, seen);
      });
    }, this.options.debounceMs);
  }

  /**
   * A full pass: stats every markdown file; new or changed ones are touched. Asked for while a
   * pass runs, one more pass follows it: the running one may have passed the change already.
   */
  reconcile(): Promise<void> {
    this.fullPassDue = true;
    return this.passes.run();
  }

  private async runReconcile(): Promise<void> {
    const inspect = this.inspect;
    const statFile = this.firstStat;
    this.inspect = null;
    this.firstStat = undefined;
    const kind = this.fullPassDue ? 'full' : 'directories';
    this.fullPassDue = false;
    if (kind === 'full') this.eventsSinceReconcile = 0;
    // An inspected pass looks at every file: a pass that ran before it recorded them all.
    const visit = async (path: string, info: Stats, changed: boolean): Promise<void> => {
      // The first pass finds every file: the index builds itself from its own walk.
      if (changed && this.passed) this.options.onEvent?.(path);
      const settle = inspect ? await inspect(path) : changed;
      if (settle) this.settleAt(path, info.mtimeMs + this.options.debounceMs);
    };
    for (const root of this.options.paths) {
      if (this.closed) return;
      await this.tree.pass(root, kind, visit, () => this.closed, statFile);
    }
    this.passed = true;
  }

  /**
   * Hands `path` on at `at` (ms since the epoch), unless it is due to settle already: a file found
   * by a pass once it has been quiet debounceMs since its last write, or one read too early.
   */
  settleAt(path: string, at: number): void {
    if (this.closed || this.timers.has(path)) return;
    // Rounded up: a timer of a fractional delay fires on the millisecond below it.
    const wait = Math.max(0, Math.ceil(at - Date.now()));
    this.timers.set(
      path,
      setTimeout(() => {
        this.timers.delete(path);
        this.options.onSettled(path);
      }, wait),
    );
  }

  /**
   * The periodic pass: a full one every FULL_PASS_EVERY-th time, and every time while a watch is
   * not open (or with no watch at all, or low headroom, and once after it); a directory pass
   * otherwise.
   */
  private scheduleRescan(): void {
    if (this.closed) return;
    this.rescanTimer = setTimeout(() => {
      this.periodicPasses++;
      const wasLow = this.lowHeadroom;
      const low = this.checkHeadroom();
      const watching = (this.roots?.allOpen() ?? false) && !low;
      if (!watching || wasLow || this.periodicPasses % FULL_PASS_EVERY === 0)
        this.fullPassDue = true;
      const seen = this.losses;
      void this.passes
        .run()
        .then(() => {
          if (wasLow && watching) this.caughtUp = Math.max(this.caughtUp, seen);
        })
        .finally(() => this.scheduleRescan());
    }, this.options.rescanIntervalMs);
  }

  /** Whether the headroom is low now; entering it counts as a loss, said once. */
  private checkHeadroom(): boolean {
    if (!this.roots) return false;
    const low = (this.options.headroomLow ?? watchHeadroomLow)();
    if (low && !this.lowHeadroom) {
      this.losses++;
      this.options.onError(
        new Error(
          'few inotify watches are left (fs.inotify.max_user_watches): a new directory may go unwatched, so every reconcile pass is a full one and engine status and find read the files',
        ),
      );
    } else if (!low && this.lowHeadroom)
      this.options.onRestored?.('inotify watches are free again: directory passes resume');
    this.lowHeadroom = low;
    return low;
  }
}

/** A period for humans: `60 s`, `0.5 s`. */
function seconds(ms: number): string {
  return `${ms / 1000} s`;
}
