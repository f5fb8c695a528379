/**
 * The dispatch daemon, wired as a pipeline of stages around one item table:
 *
 *   event (watch/) → settle (RequestWatcher) → read (RequestReader) → the item table and
 *     admission (Dispatcher) → launch (Launcher) → follow (SessionFollower) → reap (Reaper, on a
 *     timer)
 *
 * It keeps no state the files do not hold: killed at any point and restarted, it reads
 * everything back from request files and `.state.json`.
 */
import { hostname } from 'node:os';
import { isOpen } from '../sessions/session-status.js';
import { RequestWatcher } from '../watch/request-watcher.js';
import type { DaemonContext } from './daemon-context.js';
import { DaemonShared } from './daemon-shared.js';
import { Dispatcher, UNLAUNCHED } from './dispatcher.js';
import { SessionFollower } from './follow-session.js';
import { Governor } from './governor.js';
import { Launcher } from './launch.js';
import { Reaper } from './reaper.js';
import { RequestReader } from './read-requests.js';
import type { PlannedItem } from './request-snapshot.js';
import { settleDone } from './record-done.js';

export class Daemon {
  private readonly ctx: DaemonContext;
  private readonly shared: DaemonShared;
  private readonly watcher: RequestWatcher;
  private readonly reader: RequestReader;
  private readonly follower: SessionFollower;
  private readonly reaper: Reaper;
  private readonly governor: Governor;
  private readonly dispatcher: Dispatcher;
  private reapTimer: NodeJS.Timeout | null = null;
  /** Whether start() ran: --dry-run and --once record no start or stop. */
  private started = false;

  constructor(ctx: DaemonContext) {
    this.ctx = ctx;
    this.shared = new DaemonShared(ctx, (file) => void this.shared.track(this.evaluate(file)));
    this.watcher = new RequestWatcher({
      paths: ctx.options.paths,
      debounceMs: ctx.options.debounceMs,
      rescanIntervalMs: ctx.options.rescanIntervalMs,
      watch: ctx.options.watch,
      watcher: ctx.options.watcher,
      onSettled: (path) => this.shared.track(this.evaluate(path)),
      onError: (error) => ctx.log('warn', `watcher: ${error.message}`),
      onEvent: ctx.observer && ((path) => ctx.observer?.onEvent(path)),
      onRestored: (message) => ctx.log('info', `watcher: ${message}`),
    });
    this.reader = new RequestReader(this.shared);
    this.follower = new SessionFollower(this.shared, () => this.watcher.reconcile());
    this.governor = new Governor(this.shared, () => void this.dispatcher.admit());
    this.dispatcher = new Dispatcher(this.shared, {
      launcher: new Launcher(this.shared, this.reader),
      follower: this.follower,
      governor: this.governor,
      settleAt: (file, at) => this.watcher.settleAt(file, at),
    });
    this.reaper = new Reaper(this.shared, this.follower, (file, noun, session) =>
      this.dispatcher.adopt(file, noun, session),
    );
  }

  /** Reaps, then watches. Resolves once the first pass over the tree has been made. */
  async start(): Promise<void> {
    const { shared } = this;
    const [unended] = await Promise.all([shared.sessions.load(), this.reader.startFirstPass()]);
    this.reaper.watchStarted(unended);
    this.started = true;
    await this.ctx.recordEvent({ event: 'daemon-started', pid: process.pid, host: hostname() });
    // The first pass reads each file once: its claims wait for the first reap, its ready items
    // for admission, which opens after that reap, so all of them go in dispatch order.
    // Its stat of each file is the fstat of that read (statAndRead), made before the read.
    await this.watcher.start(
      (path) => this.inspectAtStart(path),
      (path) => this.reader.statAndRead(path),
    );
    // The items finished while no daemon ran: after the first pass, which remembered the claims
    // of those still running (so a done after it is the reap's), before anything can record one.
    await settleDone(this.ctx, unended);
    await this.reap();
    void this.dispatcher.start(true);
    this.governor.start();
    // A new table may route items that had no row, raise a Max, or take a waiting item's row
    // away: every item not yet launched is read again, under the new table.
    this.ctx.routes.watch(() => {
      for (const row of shared.table.list(...UNLAUNCHED)) shared.table.wake(row.file);
      void this.dispatcher.admit();
    });
    // Sessions that ended while no daemon ran get their exit recorded; running ones are followed.
    for (const { dir, state } of unended)
      if (isOpen(state.status)) void shared.track(this.follower.exitWhenSeen(dir));
    this.scheduleReap();
    // Last: its write (3.5 MB at 50,000 files) comes after ready.
    void shared.track(this.saveNoWork());
  }

  /**
   * One tick of the same machine: read every file, reap, admit what is ready now (within the
   * caps), and return once those launches are made, without waiting for agents.
   */
  async runOnce(): Promise<void> {
    this.shared.adopting = false;
    const unended = await this.shared.sessions.load();
    await this.reader.readAll((read) => this.dispatcher.see(read.file, read));
    await settleDone(this.ctx, unended);
    await this.reaper.reap();
    await this.dispatcher.start(false);
    await this.dispatcher.launched();
  }

  /**
   * Every item waiting, in the order the daemon claims them (the item table's order), each with
   * what it waits for, if anything; changes nothing.
   */
  async plan(): Promise<Array<PlannedItem & { aged: boolean }>> {
    await this.reader.readAll((read) => this.dispatcher.see(read.file, read, false));
    return this.dispatcher.order();
  }

  /** Stops watching and lets a claim or spawn in progress finish; agents keep running. */
  async stop(): Promise<void> {
    this.shared.stopping = true;
    this.ctx.claims?.stopping?.();
    if (this.reapTimer) this.ctx.timers.clearTimeout(this.reapTimer);
    this.governor.stop();
    this.dispatcher.stop();
    this.shared.signals.close();
    await this.watcher.close();
    await this.ctx.routes.close();
    await this.shared.settled();
    if (this.started) await this.ctx.recordEvent({ event: 'daemon-stopped', pid: process.pid });
  }

  /** Whether the watch has reported every change so far (RequestWatcher.eventsComplete). */
  get eventsComplete(): boolean {
    return this.watcher.eventsComplete;
  }

  /** Checks every claim no task follows: adopts live ones, requeues dead ones. */
  async reap(): Promise<void> {
    await this.reaper.reap();
  }

  /** The first pass's no-work record, for the next daemon's first pass (no-work-record.ts). */
  private async saveNoWork(): Promise<void> {
    try {
      const counts = await this.reader.endFirstPass();
      if (counts)
        this.ctx.log('debug', `no-work record: ${counts.kept} files (${counts.unread} not read)`);
    } catch (error) {
      this.ctx.log('warn', `no-work record not written: ${String(error)}`);
    }
  }

  /** The first pass's look at a file; true for one not yet quiet: it settles like a change. */
  private async inspectAtStart(path: string): Promise<boolean> {
    const read = await this.reader.readFile(path);
    // A file with no work and no claim (nearly every file) tells the first pass nothing: no row
    // comes from it, and admission is closed. Skipped, it costs no realpath (6 of 9.8 s of
    // start-up CPU at 50,000 files).
    if (!read) return false;
    await this.dispatcher.see(path, read);
    return read.items.some((item) => item.wait?.kind === 'quiet');
  }

  /** The read stage: reads one settled file; the item table decides what its items do. */
  private async evaluate(path: string): Promise<void> {
    if (this.shared.stopping) return;
    await this.dispatcher.see(path, await this.reader.readFile(path));
  }

  private scheduleReap(): void {
    if (this.shared.stopping) return;
    this.reapTimer = this.ctx.timers.setTimeout(() => {
      // A dependency outside the watched paths changes unseen: blocked items are read again here.
      this.dispatcher.wakeBlocked();
      void this.shared
        .track(this.reap())
        .catch((error: unknown) => this.ctx.log('error', `reap: ${String(error)}`))
        .finally(() => this.scheduleReap());
    }, this.ctx.options.reapIntervalMs);
  }
}
