/**
 * Keeps this daemon's leases alive: renews each one about three times a lease, with jitter so
 * that hosts started together do not push together, while its agent lives. Every write of a
 * lease (a renewal, a fenced edit, its end) goes through `use`, one at a time per item, so this
 * host never races its own renewal. A renewal that finds the lease moved on reports it lost: the
 * agent's work is then fenced.
 */
import type { ClaimResult, GitClaimStore, HeldLease } from './git-claim-store.js';

export interface LeaseKeeperOptions {
  /** ms between renewals; each wait is this ± a fifth. */
  renewEveryMs: number;
  onLost: (item: string) => void;
  onUnreachable?: (item: string, message: string) => void;
  random?: () => number;
}

interface Kept {
  lease: HeldLease;
  timer: NodeJS.Timeout | null;
  chain: Promise<unknown>;
}

export class LeaseKeeper {
  private readonly kept = new Map<string, Kept>();
  private readonly random: () => number;

  constructor(
    private readonly store: GitClaimStore,
    private readonly options: LeaseKeeperOptions,
  ) {
    this.random = options.random ?? Math.random;
  }

  /** Starts renewing a lease this daemon has just won. */
  hold(lease: HeldLease): void {
    this.kept.set(lease.item, { lease, timer: null, chain: Promise.resolve() });
    this.schedule(lease.item);
  }

  /** The lease as last written, for a fenced write. */
  current(item: string): HeldLease | undefined {
    return this.kept.get(item)?.lease;
  }

  /**
   * Runs a write of the item's lease after any other under way; `write` returns the lease it
   * moved to (or null when it did not move it). The lease is dropped when `write` ends it.
   */
  use<T>(
    item: string,
    write: (lease: HeldLease) => Promise<{ lease: HeldLease | null; value: T }>,
  ): Promise<T | undefined> {
    const kept = this.kept.get(item);
    if (!kept) return Promise.resolve(undefined);
    const next = kept.chain.then(async () => {
      if (this.kept.get(item) !== kept) return undefined;
      const { lease, value } = await write(kept.lease);
      if (lease) kept.lease = lease;
      return value;
    });
    kept.chain = next.catch(() => undefined);
    return next;
  }

  /** Stops renewing (the claim ended or was lost). */
  drop(item: string): void {
    const kept = this.kept.get(item);
    if (kept?.timer) clearTimeout(kept.timer);
    this.kept.delete(item);
  }

  /** Stops every renewal: the leases then expire unless a new daemon adopts them. */
  stop(): void {
    for (const item of [...this.kept.keys()]) this.drop(item);
  }

  private schedule(item: string): void {
    const kept = this.kept.get(item);
    if (!kept) return;
    const { renewEveryMs } = this.options;
    const wait = renewEveryMs * (0.8 + 0.4 * this.random());
    kept.timer = setTimeout(() => void this.renew(item), wait);
  }

  private async renew(item: string): Promise<void> {
    let result: ClaimResult | undefined;
    try {
      result = await this.use(item, async (lease) => {
        const renewed = await this.store.renew(lease);
        return { lease: renewed.won ? renewed.lease : null, value: renewed };
      });
    } catch (error) {
      // git failed locally (a full disk, a removed clone): try again at the next renewal.
      this.options.onUnreachable?.(item, error instanceof Error ? error.message : String(error));
      this.schedule(item);
      return;
    }
    if (result === undefined) return;
    if (!result.won && result.outcome.kind === 'lost') {
      this.drop(item);
      this.options.onLost(item);
      return;
    }
    if (!result.won && result.outcome.kind !== 'not-expired' && 'message' in result.outcome) {
      this.options.onUnreachable?.(item, result.outcome.message);
    }
    this.schedule(item);
  }
}
