/**
 * The claims of many hosts, over the claim refs of one shared remote: claim, renew, take over
 * an expired lease, and end a claim, each one compare-and-swap on the item's ref. It remembers
 * since when it has seen each ref at its commit, the observation expiry is judged by
 * (lease.ts), on a monotonic clock, counting only time covered by fetches that succeeded.
 */
import { performance } from 'node:perf_hooks';
import {
  fetchClaim,
  fetchClaims,
  leaseCommit,
  swapClaimRef,
  type ClaimRemote,
  type SeenClaim,
  type SwapOutcome,
} from './claim-refs.js';
import {
  judgeClaim,
  newNonce,
  sameHolder,
  takeoverOf,
  type ClaimFields,
  type ClaimJudgement,
  type Holder,
  type LeaseRecord,
  type LeaseState,
  type Observation,
} from './lease.js';
import {
  editOnSharedBranch,
  type BranchEditOutcome,
  type Fence,
  type TextEdit,
} from './shared-branch.js';

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
  /** The wall clock, written in records as their renewal time. */
  now?: () => number;
  /** The clock observations are measured on; never steps. */
  monotonic?: () => number;
}

export interface JudgedClaim extends SeenClaim {
  judgement: ClaimJudgement;
}

export class GitClaimStore {
  private readonly observed = new Map<string, Observation>();
  private readonly now: () => number;
  private readonly monotonic: () => number;
  /** A fetch failed since the last that succeeded: that time is no observation. */
  private blind = false;

  constructor(private readonly options: GitClaimStoreOptions) {
    this.now = options.now ?? Date.now;
    this.monotonic = options.monotonic ?? (() => performance.now());
  }

  /** Every claim on the remote, judged; null when the remote could not be reached. */
  async refresh(): Promise<JudgedClaim[] | null> {
    const claims = await fetchClaims(this.options);
    if (claims === null) {
      this.blind = true;
      return null;
    }
    const clocks = { monotonicNow: this.monotonic(), wallNow: this.now() };
    // A holder could not renew while this host could not look: every observation starts again.
    if (this.blind) this.observed.clear();
    this.blind = false;
    const present = new Set<string>();
    const judged = claims.map((claim) => {
      present.add(claim.item);
      const before = this.observed.get(claim.item);
      const observation =
        before?.commit === claim.commit
          ? before
          : { commit: claim.commit, seenSince: clocks.monotonicNow };
      this.observed.set(claim.item, observation);
      const judgement = judgeClaim(claim.record, observation, clocks, this.options.me);
      return { ...claim, judgement };
    });
    for (const item of this.observed.keys()) if (!present.has(item)) this.observed.delete(item);
    return judged;
  }

  /** Claims an item no host has claimed yet (its ref must not exist). */
  async claim(item: string, file: string, noun: string, branch?: string): Promise<ClaimResult> {
    const record: LeaseRecord = {
      item,
      file,
      noun,
      ...(branch === undefined ? {} : { branch }),
      holder: this.options.me,
      attempt: 1,
      leaseMs: this.options.leaseMs,
      renewedAt: this.now(),
      state: 'held',
      nonce: newNonce(),
      version: 1,
    };
    return this.swap(item, null, record);
  }

  /** Renews a lease this daemon holds; `lost` means the lease moved on: its work is fenced. */
  async renew(lease: HeldLease): Promise<ClaimResult> {
    return this.swap(lease.item, lease.commit, this.rewritten(lease.record, 'held'), true);
  }

  /**
   * Takes over a claim last seen by `refresh` as expired or free, over that same commit, with
   * the attempt raised; refuses one that is not (yet) expired on this host's observation. A
   * `mine` is taken over only as an orphan: a lease of this holder that its caller does not keep.
   */
  async takeOver(seen: JudgedClaim, claim?: ClaimFields): Promise<ClaimResult> {
    if (seen.judgement !== 'expired' && seen.judgement !== 'free' && seen.judgement !== 'mine') {
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
      nonce: '',
      version: 1,
    };
    const record = takeoverOf(previous, this.options.me, this.now(), claim);
    return this.swap(seen.item, seen.commit, record);
  }

  /** Ends a lease this daemon holds: `done` (never claimed again) or `released`. */
  async end(lease: HeldLease, state: Exclude<LeaseState, 'held'>): Promise<ClaimResult> {
    return this.swap(lease.item, lease.commit, this.rewritten(lease.record, state), true);
  }

  /**
   * Edits a request file on the shared branch fenced by this lease: the branch moves only with
   * the lease (renewed, or ended as `done`), in one atomic push; `fenced` when the lease moved
   * on. A `done` whose edit had nothing to write still ends the lease (`released` when the
   * edit no longer applies); the lease returned is the ended one only when its end won. `also`:
   * refs pushed in the same atomic push (the agent's branch with its done), fenced alike.
   */
  async writeFenced(
    lease: HeldLease,
    path: string,
    edit: TextEdit,
    message: string,
    state: 'held' | 'done' = 'held',
    also: Fence['also'] = [],
  ): Promise<{ outcome: BranchEditOutcome; lease: HeldLease }> {
    let current = lease;
    for (let attempt = 0; attempt < LANDED_TRIES; attempt++) {
      // The lease this try's push writes, when it wins.
      const tried: { commit?: string; record?: LeaseRecord } = {};
      const fenceOf = async (): Promise<Fence | 'fenced'> => {
        const kept = await this.keptAlive(current);
        if (kept === null) return 'fenced';
        current = kept;
        const record = this.rewritten(current.record, state);
        const commit = await leaseCommit(this.options.repo, record, current.commit);
        Object.assign(tried, { commit, record });
        return { item: current.item, expected: current.commit, commit, also };
      };
      const outcome = await editOnSharedBranch(this.options, path, edit, message, fenceOf);
      const { commit, record } = tried;
      if (outcome.kind === 'pushed' && commit !== undefined && record !== undefined) {
        this.observed.set(current.item, { commit, seenSince: this.monotonic() });
        return { outcome, lease: { item: current.item, commit, record } };
      }
      if (outcome.kind === 'fenced' || outcome.kind === 'not-applicable') {
        // This attempt's own done, landed by an earlier try whose answer was lost (the branch
        // then shows the done, so the edit no longer applies): it counts.
        const done = state === 'done' ? await this.landedOfMine(current, 'done') : null;
        if (done) return { outcome: { kind: 'unchanged' }, lease: done };
      }
      if (outcome.kind === 'fenced') {
        // A renewal of this lease landed with its answer lost: the lease is still this host's.
        const landed = await this.landedOfMine(current, 'held');
        if (landed) {
          current = landed;
          continue;
        }
        return { outcome, lease: current };
      }
      // A refused push (a hook, a protected branch; the agent's branch refused) keeps the
      // lease: the branch still shows the claim, which a done ref would leave stuck for good.
      if (state === 'done' && outcome.kind !== 'unreachable' && outcome.kind !== 'refused') {
        // A done that no longer applies (a human moved the tag meanwhile) leaves the item free
        // for its next approval; `done` would refuse every later claim.
        const ended = await this.end(
          current,
          outcome.kind === 'not-applicable' ? 'released' : 'done',
        );
        return { outcome, lease: ended.won ? ended.lease : current };
      }
      return { outcome, lease: current };
    }
    // Each try met a write of this lease that had landed unheard: still this host's lease.
    const why = `each of ${LANDED_TRIES} tries met a write of this lease whose answer was lost`;
    return { outcome: { kind: 'unreachable', message: why }, lease: current };
  }

  /**
   * The lease, renewed first when a third of it has passed since this holder last wrote it: a
   * write that keeps losing races to other pushes (each try a fetch, a commit and a push) holds
   * its lease's turn, so no other renewal runs meanwhile, and on a busy remote its tries took
   * longer than a lease, which another host then took over while this one was alive. Null when
   * the lease moved on; a renewal that could not reach the remote goes on with the lease as it is.
   */
  private async keptAlive(lease: HeldLease): Promise<HeldLease | null> {
    if (this.now() - lease.record.renewedAt < lease.record.leaseMs / 3) return lease;
    const renewed = await this.renew(lease);
    // An ended lease (its own done landed unheard) is no fence for another write.
    if (renewed.won) return renewed.lease.record.state === 'held' ? renewed.lease : null;
    return renewed.outcome.kind === 'lost' ? null : lease;
  }

  private rewritten(record: LeaseRecord, state: LeaseState): LeaseRecord {
    return { ...record, renewedAt: this.now(), state, nonce: newNonce() };
  }

  /**
   * One compare-and-swap of the item's ref. `recover`, for a lease already held: an earlier
   * write of it may have landed with its answer lost on the way back; the ref then holds this
   * holder's own record of this attempt, and the lease is still ours: the write is made again
   * over it, once; an end of it that landed ends it, whatever was asked. (A claim or takeover
   * that landed is seen by swapClaimRef itself.)
   */
  private async swap(
    item: string,
    expected: string | null,
    record: LeaseRecord,
    recover = false,
  ): Promise<ClaimResult> {
    const commit = await leaseCommit(this.options.repo, record, expected);
    const outcome = await swapClaimRef(this.options, item, expected, commit);
    if (outcome.kind === 'done') return this.won(item, commit, record);
    if (outcome.kind !== 'lost' || !recover) return { won: false, outcome };
    const seen = await fetchClaim(this.options, item);
    if (seen === null || seen === 'absent') return { won: false, outcome };
    // This lease's own end landed earlier (a done whose answer was lost): the lease has ended,
    // as this holder ended it; a renewal gets that ended lease back, which is then kept no more.
    if (this.isMine(seen, record, 'done') || this.isMine(seen, record, 'released'))
      return this.won(item, seen.commit, seen.record!);
    if (!this.isMine(seen, record)) return { won: false, outcome };
    return this.swap(item, seen.commit, record);
  }

  private won(item: string, commit: string, record: LeaseRecord): ClaimResult {
    this.observed.set(item, { commit, seenSince: this.monotonic() });
    return { won: true, lease: { item, commit, record } };
  }

  /** This lease's own `done`, when it landed (its answer lost): the done counts. */
  doneOfMine(lease: HeldLease): Promise<HeldLease | null> {
    return this.landedOfMine(lease, 'done');
  }

  /**
   * The lease as the remote holds it, when that is a newer write of this holder's own of the
   * same attempt, in `state`.
   */
  private async landedOfMine(lease: HeldLease, state: LeaseState): Promise<HeldLease | null> {
    const seen = await fetchClaim(this.options, lease.item);
    if (seen === null || seen === 'absent' || seen.commit === lease.commit) return null;
    return this.isMine(seen, lease.record, state)
      ? { item: lease.item, commit: seen.commit, record: seen.record! }
      : null;
  }

  private isMine(seen: SeenClaim, record: LeaseRecord, state: LeaseState = 'held'): boolean {
    return (
      seen.record !== null &&
      seen.record.state === state &&
      sameHolder(seen.record.holder, this.options.me) &&
      seen.record.attempt === record.attempt
    );
  }
}

/** A write of a lease meets its own earlier write landed unheard at most this often. */
const LANDED_TRIES = 4;
