/**
 * What the stages of one running daemon share besides its context: the item table, the index
 * of sessions by request, the change signals that wake a watch, the warnings already given, the
 * work in flight (waited for at stop), and whether the daemon is stopping.
 */
import { judgeSession, type SessionVerdict } from '../sessions/judge-session.js';
import { startTokenTime } from '../sessions/session-markers.js';
import type { SessionState } from '../sessions/session-state.js';
import { ChangeSignals } from '../watch/change-signals.js';
import type { DaemonContext } from './daemon-context.js';
import { ItemTable } from './item-table.js';
import { SessionIndex } from './session-index.js';

export class DaemonShared {
  /** Every item this daemon knows of, and where it stands (item-table.ts). */
  readonly table: ItemTable;
  readonly sessions: SessionIndex;
  /** Wakes the watch of a claim, or of a session, when one of the files it depends on changes. */
  readonly signals: ChangeSignals;
  stopping = false;
  /** --once does not wait for agents, so it adopts none. */
  adopting = true;
  private readonly warned = new Set<string>();
  private readonly inFlight = new Set<Promise<unknown>>();

  /** `wake`: reads a file again, as a settled change (the daemon's read stage). */
  constructor(
    readonly ctx: DaemonContext,
    wake: (file: string) => void = () => undefined,
  ) {
    this.table = new ItemTable(
      () => ctx.now().getTime(),
      (line) => {
        ctx.log('debug', `item ${line}`);
        ctx.observer?.onItemMove();
      },
      wake,
    );
    this.sessions = new SessionIndex(ctx.options.root);
    this.signals = new ChangeSignals((error) => ctx.log('debug', `${error.message}; polling`));
  }

  warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.ctx.log('warn', message);
  }

  /** Work the daemon waits for when it stops; a failure is logged. */
  track<T>(promise: Promise<T>): Promise<T> {
    this.inFlight.add(promise);
    void promise
      .catch((error: unknown) => this.ctx.log('error', String(error)))
      .finally(() => this.inFlight.delete(promise));
    return promise;
  }

  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Whether the session still works on its item: its wrapper alive, or its agent, which outlives
   * a wrapper killed on its own (so a claim is never restored past, or dispatched again over, a
   * live agent), or still within its grace period to start.
   */
  async judge(dir: string, state: SessionState): Promise<SessionVerdict> {
    const records = { startTokenAt: await startTokenTime(dir) };
    return judgeSession(state, records, this.ctx.now(), this.ctx.options, this.ctx.probe);
  }
}
