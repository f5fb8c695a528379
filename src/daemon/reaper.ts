/**
 * The daemon's reap stage: every claim the item table holds as `claimed` (a claim the files
 * carry that this daemon does not follow) is judged, at start and every --reap-interval-ms. A
 * live one is adopted (a `running` row, followed, holding its slot), a dead one requeued by the
 * claim check, a finished one recorded. The sessions open at start that no claim names any more
 * are looked at too: one whose item another lease holds now (git claims) is closed.
 */
import { messageOf } from '../errors.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import { markSuperseded } from '../sessions/session-markers.js';
import { readSessionState } from '../sessions/session-state.js';
import { isOpen } from '../sessions/session-status.js';
import { checkClaim, claimedBy, type ClaimVerdict } from './claim-check.js';
import { claimStoreOf } from './claim-store.js';
import type { DaemonShared } from './daemon-shared.js';
import type { SessionFollower } from './follow-session.js';
import type { UnendedSession } from './session-index.js';

export class Reaper {
  /** The directories of the sessions open at start that may be superseded (`closeSuperseded`). */
  private readonly started = new Set<string>();
  /** Those found superseded at the last reap: closed when the next one finds them so again. */
  private readonly suspected = new Set<string>();

  constructor(
    private readonly shared: DaemonShared,
    private readonly follower: SessionFollower,
    /** Makes the claim a `running` row holding its slot, followed until it ends while adopting. */
    private readonly adopt: (file: string, noun: string, session: string) => void,
  ) {}

  /** The sessions open when the daemon started: each reap looks whether one was superseded. */
  watchStarted(sessions: UnendedSession[]): void {
    for (const { dir, state } of sessions) if (isOpen(state.status)) this.started.add(dir);
  }

  /** Judges the claims no task follows, then the sessions open at start. */
  async reap(): Promise<void> {
    await this.reapClaims();
    await this.closeSuperseded();
  }

  private async reapClaims(): Promise<void> {
    const { ctx, table } = this.shared;
    for (const { file, noun } of table.list('claimed', 'elsewhere')) {
      if (this.shared.stopping) break;
      const kind = table.get(file, noun)?.state.kind;
      if (kind !== 'claimed' && kind !== 'elsewhere') continue;
      let verdict: ClaimVerdict;
      try {
        verdict = await checkClaim(ctx, file, noun);
      } catch (error) {
        ctx.log('error', `checking ${file}: ${String(error)}; will look again`);
        continue;
      }
      await this.decide(file, noun, verdict);
    }
  }

  private async decide(file: string, noun: string, verdict: ClaimVerdict): Promise<void> {
    const { table } = this.shared;
    const kind = table.get(file, noun)?.state.kind;
    const claimed = kind === 'claimed' || kind === 'elsewhere';
    if (verdict.kind === 'elsewhere') {
      if (claimed) table.move(file, noun, verdict, `its lease is held on ${verdict.host}`);
      return;
    }
    if (verdict.kind === 'alive') {
      // --once follows nothing, yet a live agent holds its slot there too.
      if (claimed && (verdict.state || !this.shared.adopting)) {
        this.adopt(file, noun, verdict.session);
        this.followed(verdict.session);
      }
      return;
    }
    if (verdict.kind === 'unknown') {
      this.shared.warnOnce(
        `unknown:${file}\0${noun}:${verdict.reason}`,
        `cannot judge the claim on ${file} now: ${verdict.reason}`,
      );
      return;
    }
    if (kind === 'elsewhere' && verdict.kind === 'not-claimed')
      return this.retryElsewhere(file, noun);
    if (claimed) table.move(file, noun, null, `its claim ended (${verdict.kind})`);
    await this.follower.recordEnd(file, noun, verdict);
  }

  /** A session open at start is followed now: its end is its follower's (a lost lease's too). */
  private followed(session: string): void {
    const dir = resolveSessionRef(this.shared.ctx.options.root, session);
    if (dir === null) return;
    this.started.delete(dir);
    this.suspected.delete(dir);
  }

  /**
   * A session left running while no daemon ran here, whose item another lease holds now (git:
   * another host took it over, or finished it): its work can no longer count, and no claim names
   * it, so nothing else would ever close it. Found so at two reaps in a row (a read while git
   * rewrites its request shows no claim for a moment), it is marked superseded, and its follower
   * (exitWhenSeen) closes its agent; its worktree and branch stay for a person to look at.
   */
  private async closeSuperseded(): Promise<void> {
    const { ctx } = this.shared;
    const store = claimStoreOf(ctx);
    if (!store.movedOn) return;
    for (const dir of this.started) {
      if (this.shared.stopping) break;
      const read = await readSessionState(dir);
      if (!('state' in read) || !isOpen(read.state.status)) {
        this.started.delete(dir);
        this.suspected.delete(dir);
        continue;
      }
      const { state } = read;
      const why = await this.supersededWhy(dir, state);
      if (why === null || !this.suspected.has(dir)) {
        if (why === null) this.suspected.delete(dir);
        else this.suspected.add(dir);
        continue;
      }
      try {
        await markSuperseded(dir);
      } catch (error) {
        ctx.log('error', `${state.sessionRef}: cannot mark it superseded: ${messageOf(error)}`);
        continue;
      }
      this.started.delete(dir);
      this.suspected.delete(dir);
      ctx.log(
        'warn',
        `${state.sessionRef}: ${why}, so its work cannot count: its agent is closed (its worktree and branch stay)`,
      );
    }
  }

  /**
   * Why the session is superseded, or null while it is not (or that cannot be told now). Never
   * while its request still carries its claim: the claim check judges that one (a lapsed lease
   * of a host that died before its requeue is taken over for it, and its work counts).
   */
  private async supersededWhy(dir: string, state: UnendedSession['state']): Promise<string | null> {
    const { ctx } = this.shared;
    const item = { file: state.requestFile, noun: state.noun, session: state.sessionRef };
    try {
      // Not while the request names it, nor while that cannot be read (git rewriting it).
      const named = await claimedBy(ctx, item.file, item.noun);
      if (named === undefined) return null;
      if (named !== null && resolveSessionRef(ctx.options.root, named) === dir) return null;
      return (await claimStoreOf(ctx).movedOn?.(item)) ?? null;
    } catch (error) {
      ctx.log(
        'error',
        `${state.sessionRef}: cannot tell whether it was superseded: ${messageOf(error)}`,
      );
      return null;
    }
  }

  /**
   * Held elsewhere while its file still reads approved: the holder's claim is not written
   * there yet, or its host died before writing it. Read again after a lease, so that the claim
   * is tried again once it may have run out.
   */
  private retryElsewhere(file: string, noun: string): void {
    const { ctx, table } = this.shared;
    const row = table.get(file, noun);
    if (!row || ctx.now().getTime() - row.since < ctx.options.claimsLeaseMs) return;
    table.move(file, noun, null, 'its claim elsewhere is looked at again');
    table.wake(file);
  }
}
