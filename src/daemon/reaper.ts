/**
 * The daemon's reap stage: every known claim that no task of this process watches is judged, at
 * start and every --reap-interval-ms. A live one is adopted (followed, holding a slot), a dead one
 * requeued by the claim check, a finished one recorded.
 */
import { checkClaim, type ClaimVerdict } from './claim-check.js';
import type { DaemonShared } from './daemon-shared.js';
import type { SessionFollower } from './follow-session.js';

export class Reaper {
  constructor(
    private readonly shared: DaemonShared,
    private readonly follower: SessionFollower,
    /** Runs `follow` in an agent's slot of the queue, watching the claim until it ends. */
    private readonly holdSlot: (file: string, noun: string, follow: () => Promise<unknown>) => void,
  ) {}

  /** Judges the claims no task watches. Returns the noun of each claim with a live agent. */
  async reap(): Promise<string[]> {
    const { ctx, ledger } = this.shared;
    const alive = ledger.watchedNouns();
    for (const { file, noun } of ledger.knownClaims()) {
      if (ledger.isWatched(file, noun) || !ledger.hasClaim(file, noun)) continue;
      if (this.shared.stopping) break;
      let verdict: ClaimVerdict;
      try {
        verdict = await checkClaim(ctx, file, noun);
      } catch (error) {
        ctx.log('error', `checking ${file}: ${String(error)}; will look again`);
        continue;
      }
      if (verdict.kind === 'alive') {
        alive.push(noun);
        if (verdict.state) this.adopt(file, noun, verdict.session);
        continue;
      }
      if (verdict.kind === 'unknown') {
        this.shared.warnOnce(
          `unknown:${file}\0${noun}:${verdict.reason}`,
          `cannot judge the claim on ${file} now: ${verdict.reason}`,
        );
        continue;
      }
      ledger.forgetClaim(file, noun);
      await this.follower.recordEnd(file, noun, verdict);
    }
    return alive;
  }

  /** A live agent found at start (or by the reaper) holds a slot until its claim ends. */
  private adopt(file: string, noun: string, session: string): void {
    const { ctx, ledger } = this.shared;
    if (!this.shared.adopting || ledger.isWatched(file, noun)) return;
    ledger.watch(file, noun);
    // A claim followed to a moved request is known under its new path from now on.
    this.shared.sessions.add(file, session);
    ctx.log('info', `adopted running agent for ${file} (${session})`);
    void ctx.recordEvent({ event: 'adopted', file, noun, session }).catch(() => undefined);
    this.holdSlot(file, noun, () => this.follower.untilEnded(file, noun, session));
  }
}
