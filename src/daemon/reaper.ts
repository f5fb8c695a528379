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
    if (claimed) table.move(file, noun, null, `its claim ended (${verdict.kind})`);
    // Held elsewhere while its file still reads approved (a claim not yet written there, or
    // whose host died before writing it): read again, so that it is claimed once it may be.
    if (kind === 'elsewhere' && verdict.kind === 'not-claimed') table.wake(file);
    await this.follower.recordEnd(file, noun, verdict);
  }
}
