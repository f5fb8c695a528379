/**
 * The daemon's follow stage: a launched (or adopted) claim is checked until it ends, done or
 * requeued, whenever one of its files changes and every --poll-ms; a session is followed until
 * its wrapper's exit is recorded; a request that left its path is followed to where it went.
 */
import { existsSync } from 'node:fs';
import { exitResult } from '../agents/print-result.js';
import { resolveSessionRef, sessionDir } from '../sessions/session-dir.js';
import { readSessionState, type SessionState } from '../sessions/session-state.js';
import { isOpen, transitionSession } from '../sessions/session-status.js';
import { checkClaim, type ClaimVerdict } from './claim-check.js';
import { closeFinished } from './close-finished.js';
import { pausepoint } from './failpoint.js';
import type { DaemonShared } from './daemon-shared.js';
import { endLimitedAgent } from './limited-agent.js';
import { recordDone } from './record-done.js';
import { WaitingWatch } from './waiting-for-input.js';

/**
 * The ends a read made while git rewrites a request (a pull, a checkout, the git claims'
 * checkout moving: it deletes the file and writes it again) can show: looked at again before
 * they count, this much later (at most --poll-ms).
 */
const RECHECKED = new Set<ClaimVerdict['kind']>(['gone', 'not-claimed']);
const LOOK_AGAIN_MS = 1000;

export class SessionFollower {
  constructor(
    private readonly shared: DaemonShared,
    /** A reconcile pass over the watched paths, to find a request that moved. */
    private readonly reconcile: () => Promise<void>,
  ) {}

  /**
   * Checks the claim (a condition on files) until the agent is done or its claim was requeued:
   * again whenever the request file or the session's `.agent` or `.exit` changes, and every
   * `pollMs` in any case (events are hints; a wrapper killed with -9 writes nothing). A request
   * gone from its path, or no longer showing its claim, is looked at once more, a moment later,
   * before that counts (RECHECKED); null when the daemon stops meanwhile.
   */
  async untilEnded(file: string, noun: string, session: string): Promise<ClaimVerdict | null> {
    const dir = resolveSessionRef(this.shared.ctx.options.root, session);
    const changes = this.shared.signals.subscribe(
      dir
        ? [file, sessionDir(dir).agent, sessionDir(dir).exit, sessionDir(dir).agentState]
        : [file],
    );
    const waiting = dir ? new WaitingWatch(this.shared.ctx, dir, { file, noun, session }) : null;
    let recorded = false;
    let lookedAgain = false;
    try {
      for (;;) {
        let verdict: ClaimVerdict | null = null;
        try {
          verdict = await checkClaim(this.shared.ctx, file, noun);
        } catch (error) {
          this.shared.ctx.log('error', `checking ${file}: ${String(error)}; will look again`);
        }
        if (verdict && RECHECKED.has(verdict.kind) && !lookedAgain && !this.shared.stopping) {
          lookedAgain = true;
          await this.lookAgainAt(file, verdict.kind, changes);
          if (this.shared.stopping) return null;
          continue;
        }
        lookedAgain = false;
        if (verdict && verdict.kind !== 'alive' && verdict.kind !== 'unknown') {
          await this.recordEnd(file, noun, verdict);
          if (verdict.kind === 'gone' && dir) await this.followGoneRequest(file, session, dir);
          return verdict;
        }
        if (verdict?.kind === 'unknown')
          this.shared.warnOnce(
            `unknown:${file}:${verdict.reason}`,
            `cannot judge the claim on ${file} now: ${verdict.reason}`,
          );
        if (dir && !recorded && verdict?.kind === 'alive' && verdict.state)
          recorded = await this.recordRunning(dir, verdict.state);
        if (verdict?.kind === 'alive') await waiting?.check();
        // An interactive agent stopped by a usage limit waits instead of exiting: ended here.
        const lookAt =
          dir && verdict?.kind === 'alive' && verdict.state
            ? await endLimitedAgent(this.shared, dir, verdict.state, { file, noun, session })
            : Number.POSITIVE_INFINITY;
        if (this.shared.stopping) return verdict;
        const untilLook = Math.max(0, lookAt - this.shared.ctx.now().getTime());
        await changes.next(Math.min(this.shared.ctx.options.pollMs, untilLook));
      }
    } finally {
      changes.close();
    }
  }

  /**
   * Waits for the time a second look is due; a request that was gone, until it is back at its
   * path. Other changes (the session's files) wake the wait early: it waits on to its time.
   */
  private async lookAgainAt(
    file: string,
    kind: ClaimVerdict['kind'],
    changes: { next(ms: number): Promise<unknown> },
  ): Promise<void> {
    const { ctx } = this.shared;
    const wait = Math.min(ctx.options.pollMs, LOOK_AGAIN_MS);
    const what = kind === 'gone' ? 'is gone from its path' : 'no longer shows its claim';
    ctx.log('debug', `${file} ${what}: looked at again in ${wait} ms`);
    await pausepoint('before-look-again');
    const back = () => kind === 'gone' && existsSync(file);
    const until = ctx.now().getTime() + wait;
    for (let left = wait; left > 0 && !back() && !this.shared.stopping;) {
      await changes.next(left);
      left = until - ctx.now().getTime();
    }
  }

  /**
   * The request file is gone from its path (moved, or deleted) while its agent may still run. The
   * agent is never killed for it. Followed until the file is back at this path or the session
   * follows it to a new one (the claim check then judges it there, see followMovedRequest), or
   * until the agent ends: its session is then abandoned with the reason. Holds the agent's slot.
   */
  private async followGoneRequest(file: string, session: string, dir: string): Promise<void> {
    this.shared.ctx.log(
      'warn',
      `${file} was moved or deleted while ${session} may still run; the agent is left running, and its session is followed to the request's new path under the watched paths, or ends when the agent exits`,
    );
    await this.shared.ctx.recordEvent({ event: 'request-gone', file, session });
    // Moved, it is found under its new name by the watcher; a lost event would leave it to the
    // next reconcile pass, so look over the tree now.
    void this.shared.track(this.reconcile());
    const changes = this.shared.signals.subscribe([file, sessionDir(dir).exit]);
    try {
      while (!this.shared.stopping) {
        if (existsSync(file)) return;
        const read = await readSessionState(dir);
        if (!('state' in read) || read.state.requestFile !== file) return;
        const { state } = read;
        if (isOpen(state.status) && (await this.shared.judge(dir, state)).alive) {
          await changes.next(this.shared.ctx.options.pollMs);
          continue;
        }
        const reason = `the request file ${file} was deleted, or moved outside the watched paths, while the agent ran`;
        const ended = await transitionSession(
          dir,
          ['starting', 'running', 'exited'],
          'abandoned',
          { ...state, reason, endedAt: state.endedAt ?? this.shared.ctx.now().toISOString() },
          {
            events: this.shared.ctx.recordEvent,
            event: { event: 'exited', exitCode: state.exitCode, reason },
            requestFile: file,
          },
        );
        if (ended) this.shared.ctx.log('warn', `${session} ended: ${reason}`);
        return;
      }
    } finally {
      changes.close();
    }
  }

  /**
   * Copies the wrapper's and the agent's identities into `.state.json` (`running`) once both are
   * recorded, for readers of the record. True once done, or when there is nothing to copy.
   */
  private async recordRunning(dir: string, state: SessionState): Promise<boolean> {
    if (state.status !== 'running') return state.status !== 'starting';
    if (state.agentPid === null) return false;
    await transitionSession(dir, 'starting', 'running', state, {
      events: this.shared.ctx.recordEvent,
    });
    return true;
  }

  /**
   * Follows a session until its wrapper exits (a finished item's agent usually exits right after
   * marking it done): once its `.exit` is there, copies the exit into `.state.json` (`exited`,
   * exit code, identities) and records `exited`. Gives up when the wrapper is gone without one
   * (killed, or never started within the grace period), and when the daemon stops. Meanwhile, a
   * finished interactive agent is closed after --close-after-done (close-finished.ts).
   */
  async exitWhenSeen(dir: string): Promise<void> {
    const changes = this.shared.signals.subscribe([sessionDir(dir).exit]);
    try {
      let wrapperGone = false;
      while (!this.shared.stopping) {
        const read = await readSessionState(dir);
        if (!('state' in read)) return;
        if (read.state.status === 'exited') return await this.recordExited(dir, read.state);
        // The wrapper writes `.exit` before it exits: once it is gone (an agent left alive
        // without it writes none), one more look decides.
        if (!isOpen(read.state.status) || wrapperGone) return;
        const verdict = await this.shared.judge(dir, read.state);
        wrapperGone = !verdict.alive || verdict.by === 'agent';
        if (wrapperGone) continue;
        const closeAt = await closeFinished(this.shared, dir, read.state);
        const untilClose = Math.max(0, closeAt - this.shared.ctx.now().getTime());
        await changes.next(Math.min(this.shared.ctx.options.pollMs, untilClose));
      }
    } finally {
      changes.close();
    }
  }

  /**
   * Copies the wrapper's exit, and a print run's result, into `.state.json`, once (the record says
   * `exited` from then on).
   */
  private async recordExited(dir: string, state: SessionState): Promise<void> {
    const patch = { ...state, ...(await exitResult(dir, state)) };
    await transitionSession(dir, ['starting', 'running'], 'exited', patch, {
      events: this.shared.ctx.recordEvent,
      event: { event: 'exited', exitCode: state.exitCode },
    });
  }

  /** A claim ended with `verdict`: a done recorded once, by whichever stage saw it first. */
  async recordEnd(file: string, noun: string, verdict: ClaimVerdict): Promise<void> {
    if (verdict.kind === 'foreign') {
      this.shared.warnOnce(`foreign:${file}\0${noun}`, `${file}: ${verdict.reason}; left alone`);
    }
    if (verdict.kind !== 'done') return;
    if (!verdict.session) {
      // Not the daemon's claim (a human's, or the next skill's): no session of its own finished.
      this.shared.ctx.log(
        'debug',
        `${file} shows #done-${noun} without a Session line: no done event`,
      );
      return;
    }
    const recorded = await recordDone(this.shared.ctx, { file, noun, session: verdict.session });
    // The session is finished, even if its agent stays open: its exit is still recorded.
    const dir = resolveSessionRef(this.shared.ctx.options.root, verdict.session);
    if (recorded && dir && this.shared.adopting) void this.shared.track(this.exitWhenSeen(dir));
  }
}
