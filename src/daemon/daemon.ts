/**
 * The dispatch daemon, wired as a pipeline of stages:
 *
 *   event (watch/) → settle (RequestWatcher) → read → work items (RequestReader)
 *     → queue (here: the slots, in dispatch order, capped) → launch (Launcher) → follow (SessionFollower)
 *     → reap (Reaper, on a timer)
 *
 * It keeps no state the files do not hold: killed at any point and restarted, it reads
 * everything back from request files and `.state.json`.
 */
import { hostname } from 'node:os';
import PQueue from 'p-queue';
import { dispatchOrder } from '../dispatch/work-order.js';
import { isOpen } from '../sessions/session-status.js';
import { RequestWatcher } from '../watch/request-watcher.js';
import type { DaemonContext } from './daemon-context.js';
import { DaemonShared } from './daemon-shared.js';
import { SessionFollower } from './follow-session.js';
import { Governor } from './governor.js';
import { Launcher } from './launch.js';
import { NounSlots, type ReleaseSlot } from './noun-slots.js';
import { Reaper } from './reaper.js';
import { RequestReader, type PlannedItem } from './read-requests.js';
import { settleDone } from './record-done.js';

export class Daemon {
  private readonly ctx: DaemonContext;
  private readonly shared: DaemonShared;
  private readonly queue: PQueue;
  private readonly watcher: RequestWatcher;
  private readonly reader: RequestReader;
  private readonly launcher: Launcher;
  private readonly follower: SessionFollower;
  private readonly reaper: Reaper;
  private readonly governor: Governor;
  /** The slots of running agents: --max-agents and the Max column's caps (see NounSlots). */
  private readonly slots: NounSlots;
  private reapTimer: NodeJS.Timeout | null = null;
  /** Whether start() ran: --dry-run and --once record no start or stop. */
  private started = false;

  constructor(ctx: DaemonContext) {
    this.ctx = ctx;
    this.shared = new DaemonShared(ctx);
    // Runs the tasks the slots admit (the slots keep the order and the caps). Started by start()
    // after the first reap, so that agents adopted there take their slots before any new item does.
    this.queue = new PQueue({ concurrency: Number.POSITIVE_INFINITY, autoStart: false });
    this.watcher = new RequestWatcher({
      paths: ctx.options.paths,
      debounceMs: ctx.options.debounceMs,
      rescanIntervalMs: ctx.options.rescanIntervalMs,
      watch: ctx.options.watch,
      watcher: ctx.options.watcher,
      onSettled: (path) => this.shared.track(this.evaluate(path)),
      onError: (error) => ctx.log('warn', `watcher: ${error.message}`),
      onRestored: (message) => ctx.log('info', `watcher: ${message}`),
    });
    this.slots = new NounSlots(
      (noun) => ctx.routes.cap(noun),
      ctx.options.maxAgents || Number.POSITIVE_INFINITY,
    );
    this.reader = new RequestReader(this.shared);
    this.launcher = new Launcher(this.shared, this.reader);
    this.follower = new SessionFollower(this.shared, () => this.watcher.reconcile());
    this.governor = new Governor(
      this.shared,
      (file) => void this.shared.track(this.evaluate(file)),
    );
    this.reaper = new Reaper(this.shared, this.follower, (file, noun, follow) =>
      this.holdSlot(file, noun, follow),
    );
  }

  /** Reaps, then watches. Resolves once the first pass over the tree has been made. */
  async start(): Promise<void> {
    const { shared } = this;
    const unended = await shared.sessions.load();
    this.started = true;
    await this.ctx.recordEvent({ event: 'daemon-started', pid: process.pid, host: hostname() });
    await this.watcher.start((path) => this.inspectAtStart(path));
    // The items finished while no daemon ran: after the first pass, which remembered the claims
    // of those still running (so a done after it is the reap's), before anything can record one.
    await settleDone(this.ctx, unended);
    await this.reap();
    this.slots.start();
    this.queue.start();
    this.governor.start();
    // A new table may route items that waited for their row: those files are read again. It
    // may also raise a Max: items held by their noun's cap are looked at again.
    this.ctx.routes.watch((files) => {
      this.slots.wake();
      files.forEach((file) => void shared.track(this.evaluate(file)));
    });
    // Sessions that ended while no daemon ran get their exit recorded; running ones are followed.
    for (const { dir, state } of unended)
      if (isOpen(state.status)) void shared.track(this.follower.exitWhenSeen(dir));
    this.scheduleReap();
  }

  /** One pass: reap, dispatch what is ready now (within the caps), return without waiting for agents. */
  async runOnce(): Promise<void> {
    this.shared.adopting = false;
    const unended = await this.shared.sessions.load();
    const items = await this.plan();
    await settleDone(this.ctx, unended);
    const alive = await this.reaper.reap();
    alive.forEach((noun) => this.slots.hold(noun));
    this.slots.start();
    for (const item of items) {
      if (item.wait) continue;
      // The slot first: an item the caps hold back must not become the probe.
      const release = this.slots.tryTake(item.noun);
      if (!release) continue;
      let admitted = false;
      try {
        admitted = await this.governor.admit(item);
      } finally {
        if (!admitted) release();
      }
      if (!admitted) continue;
      const ref = await this.launcher.launch(item);
      await this.governor.launched(item, ref);
      if (!ref) release();
    }
  }

  /**
   * Every item waiting, in the order the daemon claims them (dispatch/work-order.ts), each with
   * what it waits for, if anything; changes nothing.
   */
  async plan(): Promise<PlannedItem[]> {
    return dispatchOrder(await this.reader.allItems());
  }

  /** Stops watching and lets a claim or spawn in progress finish; agents keep running. */
  async stop(): Promise<void> {
    this.shared.stopping = true;
    if (this.reapTimer) this.ctx.timers.clearTimeout(this.reapTimer);
    this.governor.stop();
    this.queue.pause();
    this.queue.clear();
    this.slots.clear();
    this.shared.signals.close();
    await this.watcher.close();
    await this.ctx.routes.close();
    await this.shared.settled();
    if (this.started) await this.ctx.recordEvent({ event: 'daemon-stopped', pid: process.pid });
  }

  /** Resolves when nothing is queued or running (tests and --once use it). */
  onIdle(): Promise<void> {
    return this.queue.onIdle();
  }

  /** Checks every claim no task watches: adopts live ones, requeues dead ones. */
  async reap(): Promise<void> {
    await this.reaper.reap();
  }

  /**
   * The first pass reads each file once: its claims are remembered for the first reap, and its
   * items ready now are queued then, so that all of them wait in dispatch order before the first
   * is dispatched. True for a file not yet quiet: it settles like a changed file.
   */
  private async inspectAtStart(path: string): Promise<boolean> {
    const items = await this.reader.itemsIn(path);
    if (items.some((item) => item.wait?.kind === 'quiet')) return true;
    await this.queueItems(items);
    return false;
  }

  /** The queue stage: reads one settled file, restores overwritten claims, queues its work. */
  private async evaluate(path: string): Promise<void> {
    if (this.shared.stopping) return;
    await this.queueItems(await this.reader.itemsIn(path));
  }

  private async queueItems(items: PlannedItem[]): Promise<void> {
    const { ledger } = this.shared;
    for (const item of items) {
      const { file, noun } = item;
      // Still watched once restoreClaim is done: the claim is ending, so the file is read again
      // when it has ended. (It may end while restoreClaim reads: then go on as for any item.)
      if (
        ledger.isWatched(file, noun) &&
        !(await this.launcher.restoreClaim(item)) &&
        ledger.isWatched(file, noun)
      ) {
        ledger.hold(file, noun);
        this.ctx.log('debug', `held ${file} #delegated-${noun} until its ending claim has ended`);
        continue;
      }
      if (ledger.isQueued(file, noun) || ledger.isWatched(file, noun)) continue;
      ledger.queue(file, noun);
      let restored: boolean;
      try {
        restored = await this.launcher.restoreClaim(item);
      } catch (error) {
        ledger.unqueue(file, noun);
        throw error;
      }
      if (restored || item.wait) {
        ledger.unqueue(file, noun);
        if (!restored) this.defer(item);
        continue;
      }
      this.ctx.log(
        'debug',
        `queued ${file} #delegated-${noun} (P${item.weight}, priority ${item.tablePriority})`,
      );
      void this.queueWithinCap(item).catch((error: unknown) =>
        this.ctx.log('error', `dispatch ${file}: ${String(error)}`),
      );
    }
  }

  /** An item not ready yet is read again when it may be: at its time, or when its file changes. */
  private defer({ wait, ...item }: PlannedItem): void {
    const what = `${item.file} #delegated-${item.noun}`;
    if (wait?.kind === 'claim') {
      // The claim's end changes the file, which is then read again.
      this.ctx.log('debug', `held ${what}: the file carries ${wait.tag}, one claim at a time`);
    } else if (wait?.kind === 'quiet') {
      // Read before its quiet period ended (a look not made by the settle stage): settled then.
      this.watcher.settleAt(item.file, wait.until);
    } else if (wait) {
      this.governor.hold(item, wait.until, `not before ${new Date(wait.until).toISOString()}`);
    }
  }

  /** Waits for a slot, of its noun (Max) and of all (--max-agents), in dispatch order; then runs. */
  private async queueWithinCap(item: PlannedItem): Promise<void> {
    const { file, noun } = item;
    const release = await this.slots.take(item, (cap) =>
      this.ctx.log('debug', `held ${file} #delegated-${noun}: Max ${cap} of its agents run`),
    );
    if (!release) {
      this.shared.ledger.unqueue(file, noun);
      return;
    }
    await this.queue.add(() => this.dispatch(item, release));
  }

  /** A queue task: launch, then hold the slot until the agent's claim ends. */
  private async dispatch(item: PlannedItem, release: ReleaseSlot): Promise<void> {
    const { ledger } = this.shared;
    ledger.unqueue(item.file, item.noun);
    if (this.shared.stopping) return release();
    // Watched from here on: the reaper must not judge a claim whose launch is still under way, and
    // a look at the same file meanwhile must not queue it twice.
    ledger.watch(item.file, item.noun);
    try {
      // A usage-limit pause, or the item's backoff: it is read again when its time comes.
      if (!(await this.governor.admit(item))) return;
      // A failure is logged by track(); the task ends with it.
      const ref = await this.shared.track(this.launcher.launch(item)).catch(() => null);
      await this.governor.launched(item, ref);
      if (ref) await this.follower.untilEnded(item.file, item.noun, ref);
    } finally {
      release();
      this.unwatch(item.file, item.noun);
    }
  }

  /** An adopted claim's watch, in a slot taken at once, ahead of every waiting item. */
  private holdSlot(file: string, noun: string, follow: () => Promise<unknown>): void {
    const release = this.slots.hold(noun);
    void this.queue
      .add(async () => {
        try {
          await follow();
        } finally {
          release();
          this.unwatch(file, noun);
        }
      })
      .catch(() => undefined);
  }

  /** The claim's watch is over: a file held meanwhile (see ClaimLedger) is read again now. */
  private unwatch(file: string, noun: string): void {
    if (this.shared.ledger.unwatch(file, noun) && !this.shared.stopping) {
      void this.shared.track(this.evaluate(file));
    }
  }

  private scheduleReap(): void {
    if (this.shared.stopping) return;
    this.reapTimer = this.ctx.timers.setTimeout(() => {
      void this.shared
        .track(this.reap())
        .catch((error: unknown) => this.ctx.log('error', `reap: ${String(error)}`))
        .finally(() => this.scheduleReap());
    }, this.ctx.options.reapIntervalMs);
  }
}
