/**
 * The claims of many hosts, over the claim refs of one shared remote: claim, renew, take over
 * an expired lease, and end a claim, each one compare-and-swap on the item's ref. It remembers
 * since when it has seen each ref at its commit, the observation expiry is judged by
 * (lease.ts).
 */
import {
  fetchClaims,
  leaseCommit,
  swapClaimRef,
  type ClaimRemote,
  type SeenClaim,
  type SwapOutcome,
} from './claim-refs.js';
import {
  judgeClaim,
  takeoverOf,
  type ClaimJudgement,
  type Holder,
  type LeaseRecord,
  type LeaseState,
  type Observation,
} from './lease.js';
import { editOnSharedBranch, type BranchEditOutcome, type TextEdit } from './shared-branch.js';

/** A lease this daemon holds: the commit its ref is at, and the record in it. */
export interface HeldLease {
  item: string;
  commit: string;
  record: LeaseRecord;
}

export type ClaimResult =
  | { won: true; lease: HeldLease }
  | { won: false; outcome: Exclude<SwapOutcome, { kind: 'done' }> | { kind: 'not-expired' } };

export interface GitClaimStoreOptions extends ClaimRemote {
  /** The shared branch the request files live on. */
  branch: string;
  me: Holder;
  leaseMs: number;
  now?: () => number;
}

export interface JudgedClaim extends SeenClaim {
  judgement: ClaimJudgement;
}

export class GitClaimStore {
  private readonly observed = new Map<string, Observation>();
  private readonly now: () => number;

  constructor(private readonly options: GitClaimStoreOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Every claim on the remote, judged; null when the remote could not be reached. */
  async refresh(): Promise<JudgedClaim[] | null> {
    const claims = await fetchClaims(this.options);
    if (claims === null) return null;
    const now = this.now();
    const present = new Set<string>();
    const judged = claims.map((claim) => {
      present.add(claim.item);
      const before = this.observed.get(claim.item);
      const observation =
        before?.commit === claim.commit ? before : { commit: claim.commit, seenSince: now };
      this.observed.set(claim.item, observation);
      return { ...claim, judgement: judgeClaim(claim.record, observation, now, this.options.me) };
    });
    for (const item of this.observed.keys()) if (!present.has(item)) this.observed.delete(item);
    return judged;
  }

  /** Claims an item no host has claimed yet (its ref must not exist). */
  async claim(item: string, file: string, noun: string): Promise<ClaimResult> {
    const record: LeaseRecord = {
      item,
      file,
      noun,
      holder: this.options.me,
      attempt: 1,
      leaseMs: this.options.leaseMs,
      renewedAt: this.now(),
      state: 'held',
    };
    return this.swap(item, null, record);
  }

  /** Renews a lease this daemon holds; `lost` means the lease moved on: its work is fenced. */
  async renew(lease: HeldLease): Promise<ClaimResult> {
    return this.swap(lease.item, lease.commit, { ...lease.record, renewedAt: this.now() });
  }

  /**
   * Takes over a claim last seen by `refresh` as expired or free, over that same commit, with
   * the attempt raised; refuses one that is not (yet) expired on this host's observation.
   */
  async takeOver(seen: JudgedClaim): Promise<ClaimResult> {
    if (seen.judgement !== 'expired' && seen.judgement !== 'free') {
      return { won: false, outcome: { kind: 'not-expired' } };
    }
    const previous: LeaseRecord = seen.record ?? {
      item: seen.item,
      file: '',
      noun: '',
      holder: this.options.me,
      attempt: 0,
      leaseMs: this.options.leaseMs,
      renewedAt: 0,
      state: 'released',
    };
    return this.swap(seen.item, seen.commit, takeoverOf(previous, this.options.me, this.now()));
  }

  /** Ends a lease this daemon holds: `done` (never claimed again) or `released`. */
  async end(lease: HeldLease, state: Exclude<LeaseState, 'held'>): Promise<ClaimResult> {
    return this.swap(lease.item, lease.commit, { ...lease.record, renewedAt: this.now(), state });
  }

  /**
   * Edits a request file on the shared branch fenced by this lease: the branch moves only with
   * the lease (renewed, or ended as `done`), in one atomic push; `fenced` when the lease moved on.
   */
  async writeFenced(
    lease: HeldLease,
    path: string,
    edit: TextEdit,
    message: string,
    state: 'held' | 'done' = 'held',
  ): Promise<{ outcome: BranchEditOutcome; lease: HeldLease }> {
    const record: LeaseRecord = { ...lease.record, renewedAt: this.now(), state };
    const commit = await leaseCommit(this.options.repo, record, lease.commit);
    const fence = { item: lease.item, expected: lease.commit, commit };
    const outcome = await editOnSharedBranch(this.options, path, edit, message, fence);
    if (outcome.kind !== 'pushed') return { outcome, lease };
    this.observed.set(lease.item, { commit, seenSince: this.now() });
    return { outcome, lease: { item: lease.item, commit, record } };
  }

  private async swap(
    item: string,
    expected: string | null,
    record: LeaseRecord,
  ): Promise<ClaimResult> {
    const commit = await leaseCommit(this.options.repo, record, expected);
    const outcome = await swapClaimRef(this.options, item, expected, commit);
    if (outcome.kind !== 'done') return { won: false, outcome };
    this.observed.set(item, { commit, seenSince: this.now() });
    return { won: true, lease: { item, commit, record } };
  }
}
