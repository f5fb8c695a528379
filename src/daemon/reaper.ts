/**
 * The daemon's reap stage: every claim the item table holds as `claimed` (a claim the files
 * carry that this daemon does not follow) is judged, at start and every --reap-interval-ms. A
 * live one is adopted (a `running` row, followed, holding its slot), a dead one requeued by the
 * claim check, a finished one recorded.
 */
import { checkClaim, type ClaimVerdict } from './claim-check.js';
import type { DaemonShared } from './daemon-shared.js';
import type { SessionFollower } from './follow-session.js';

export class Reaper {
  constructor(
    private readonly shared: DaemonShared,
    private readonly follower: SessionFollower,
    /** Makes the claim a `running` row holding its slot, followed until it ends while adopting. */
    private readonly adopt: (file: string, noun: string, session: string) => void,
  ) {}

  /** Judges the claims no task follows. */
  async reap(): Promise<void> {
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
      if (claimed && (verdict.state || !this.shared.adopting))
        this.adopt(file, noun, verdict.session);
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
