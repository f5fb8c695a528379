/**
 * Keeps this daemon's leases alive: renews each one every `renewEveryMs` (a third of a lease is
 * the caller's usual choice), with jitter so that hosts started together do not push together,
 * while its agent lives; after a renewal that could not reach the remote it tries again sooner.
 * Every write of a lease (a renewal, a fenced edit, its end) goes through `use`, one at a time
 * per item, so this host never races its own renewal. A renewal that finds the lease moved on
 * reports it lost: the agent's work is then fenced.
 */
import type { ClaimResult, GitClaimStore, HeldLease } from './git-claim-store.js';

export interface LeaseKeeperOptions {
  /** ms between renewals; each wait is this ± a fifth (a quarter of it after a failed one). */
  renewEveryMs: number;
  onLost: (item: string, attempt: number) => void;
  /** A renewal could not reach the remote: said once, until one reaches it again. */
  onUnreachable?: (item: string, message: string) => void;
  /** A renewal reached the remote after `onUnreachable`. */
  onRenewedAgain?: (item: string) => void;
  random?: () => number;
}

interface Kept {
  lease: HeldLease;
  timer: NodeJS.Timeout | null;
  chain: Promise<unknown>;
  /** Renewals have failed since the last that reached the remote. */
  failing: boolean;
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
    const kept: Kept = { lease, timer: null, chain: Promise.resolve(), failing: false };
    this.kept.set(lease.item, kept);
    this.schedule(kept, 1);
  }

  /** The lease as last written, for a fenced write. */
  current(item: string): HeldLease | undefined {
    return this.kept.get(item)?.lease;
  }

  /**
   * Runs a write of the item's lease after any other under way; `write` returns the lease it
   * moved to (or null when it did not move it). A lease written as no longer held is dropped.
   * Undefined when this keeper does not hold the item.
   */
  use<T>(
    item: string,
    write: (lease: HeldLease) => Promise<{ lease: HeldLease | null; value: T }>,
  ): Promise<T | undefined> {
    const kept = this.kept.get(item);
    return kept ? this.useKept(kept, write) : Promise.resolve(undefined);
  }

  /** Stops renewing (the claim ended or was lost); resolves once no write of it is under way. */
  drop(item: string): Promise<void> {
    const kept = this.kept.get(item);
    if (!kept) return Promise.resolve();
    this.forget(kept);
    return kept.chain.then(() => undefined);
  }

  /** Stops every renewal: the leases then expire unless a new daemon adopts them. */
  async stop(): Promise<void> {
    await Promise.all([...this.kept.keys()].map((item) => this.drop(item)));
  }

  private useKept<T>(
    kept: Kept,
    write: (lease: HeldLease) => Promise<{ lease: HeldLease | null; value: T }>,
  ): Promise<T | undefined> {
    const next = kept.chain.then(async () => {
      if (this.kept.get(kept.lease.item) !== kept) return undefined;
      const { lease, value } = await write(kept.lease);
      if (lease) kept.lease = lease;
      if (lease && lease.record.state !== 'held') this.forget(kept);
      return value;
    });
    kept.chain = next.catch(() => undefined);
    return next;
  }

  private forget(kept: Kept): void {
    if (kept.timer) clearTimeout(kept.timer);
    kept.timer = null;
    if (this.kept.get(kept.lease.item) === kept) this.kept.delete(kept.lease.item);
  }

  private schedule(kept: Kept, share: number): void {
    if (this.kept.get(kept.lease.item) !== kept) return;
    const wait = this.options.renewEveryMs * share * (0.8 + 0.4 * this.random());
    kept.timer = setTimeout(() => void this.renew(kept), wait);
  }

  /** One renewal of this hold (never of a newer hold of the same item). */
  private async renew(kept: Kept): Promise<void> {
    kept.timer = null;
    let result: ClaimResult | undefined;
    try {
      result = await this.useKept(kept, async (lease) => {
        const renewed = await this.store.renew(lease);
        return { lease: renewed.won ? renewed.lease : null, value: renewed };
      });
    } catch (error) {
      // git failed here (a full disk, a removed clone): try again soon.
      this.failed(kept, String(error));
      return;
    }
    if (result === undefined || this.kept.get(kept.lease.item) !== kept) return;
    if (result.won) {
      if (kept.failing) this.options.onRenewedAgain?.(kept.lease.item);
      kept.failing = false;
      return this.schedule(kept, 1);
    }
    if (result.outcome.kind === 'lost') {
      this.forget(kept);
      this.options.onLost(kept.lease.item, kept.lease.record.attempt);
      return;
    }
    this.failed(kept, 'message' in result.outcome ? result.outcome.message : result.outcome.kind);
  }

  /** A renewal that could not reach the remote: said once, and tried again sooner. */
  private failed(kept: Kept, message: string): void {
    if (!kept.failing) this.options.onUnreachable?.(kept.lease.item, message);
    kept.failing = true;
    this.schedule(kept, 0.25);
  }
}
