/**
 * A claim of many hosts is a lease, held in one ref on the shared remote
 * (`refs/engine/claims/<item id>`) whose commit message is the lease record. This module is the
 * pure part: the record's text, and the judgement of a claim another host holds.
 *
 * Expiry is judged on the observer's own monotonic clock, never by comparing clocks across
 * hosts, nor by a wall clock that may step: a claim is expired for me when I have seen its ref
 * stay at the same commit for a whole lease, counting only time covered by fetches that
 * succeeded (the holder's renewals move the ref), AND its record's renewal time, on the holder's
 * clock, is a lease old on mine. That second condition only delays a takeover (a holder whose
 * clock runs ahead), and never by more than another lease: after two leases of observation a
 * claim is expired whatever its record says.
 */
import { randomBytes } from 'node:crypto';

/** Who holds a claim: the host, and this daemon's instance on this boot of it. */
export interface Holder {
  host: string;
  /** Random per daemon start: two daemons of one host never share a claim. */
  instance: string;
  /** The host's boot id: an instance name is never read across a reboot. */
  boot: string;
}

export type LeaseState = 'held' | 'done' | 'released';

/** How a lease no longer this holder's is said: a takeover and a person's release look alike. */
export const LEASE_MOVED_ON = 'moved on (another host took it over, or a person released it)';

export interface LeaseRecord {
  item: string;
  /** The request file's path in the shared branch when the lease was written. */
  file: string;
  noun: string;
  /** The agent's branch (`engine/<noun>/<slug>`), pushed with its done; absent: none (a requeue). */
  branch?: string;
  holder: Holder;
  /** Raised by each takeover: the fencing token every counted write carries. */
  attempt: number;
  /** How long the holder promises to renew within, in ms. */
  leaseMs: number;
  /** The holder's clock when it wrote this record (ms since the epoch). */
  renewedAt: number;
  state: LeaseState;
  /** Random per write: no two writes make the same commit (git skips an "up to date" push's lease). */
  nonce: string;
  /** The record's format; a record of another version is judged by observation only. */
  version: 1;
}

const SUBJECT = 'engine claim';
const ITEM_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** An item id is safe as a ref name part and as an argument: `[a-z0-9-]`, not leading `-`. */
export function isItemId(id: string): boolean {
  return ITEM_ID.test(id);
}

export function claimRefOf(item: string): string {
  if (!isItemId(item)) throw new RangeError(`not an item id: ${JSON.stringify(item)}`);
  return `refs/engine/claims/${item}`;
}

export function sameHolder(a: Holder, b: Holder): boolean {
  return a.host === b.host && a.instance === b.instance && a.boot === b.boot;
}

/** The commit message: a subject a human reading `git log` understands, then the JSON. */
export function encodeLease(record: LeaseRecord): string {
  const { item, attempt, holder, state } = record;
  // The host name is shown on one line; the JSON (which escapes every control character) is
  // the one line after the last blank line, whatever the name holds.
  const host = holder.host.replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, '?');
  return `${SUBJECT} ${item}: ${state}, attempt ${attempt}, by ${host}\n\n${JSON.stringify(record)}\n`;
}

/** The record in a commit message; null when it is not one engine wrote (never trusted). */
export function decodeLease(message: string): LeaseRecord | null {
  if (!message.startsWith(`${SUBJECT} `)) return null;
  const body = message.slice(message.trimEnd().lastIndexOf('\n') + 1).trim();
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  return isLeaseRecord(value) ? value : null;
}

function isLeaseRecord(value: unknown): value is LeaseRecord {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  const holder = r.holder as Record<string, unknown> | null;
  return (
    typeof r.item === 'string' &&
    isItemId(r.item) &&
    typeof r.file === 'string' &&
    typeof r.noun === 'string' &&
    (r.branch === undefined || typeof r.branch === 'string') &&
    typeof holder === 'object' &&
    holder !== null &&
    typeof holder.host === 'string' &&
    typeof holder.instance === 'string' &&
    typeof holder.boot === 'string' &&
    Number.isSafeInteger(r.attempt) &&
    (r.attempt as number) >= 1 &&
    typeof r.leaseMs === 'number' &&
    r.leaseMs > 0 &&
    typeof r.renewedAt === 'number' &&
    (r.state === 'held' || r.state === 'done' || r.state === 'released') &&
    typeof r.nonce === 'string' &&
    r.version === 1
  );
}

/**
 * What this host saw of a claim ref: its commit, and since when, on this host's monotonic clock,
 * counting only time covered by fetches that succeeded.
 */
export interface Observation {
  commit: string;
  seenSince: number;
}

/**
 * - `mine`: this daemon holds it.
 * - `held`: another holder's lease runs (or a record engine cannot read, not yet expired).
 * - `expired`: another holder's lease ran out: it may be taken over.
 * - `free`: released: it may be taken over.
 * - `done`: its work is done; never claimed again.
 */
export type ClaimJudgement = 'mine' | 'held' | 'expired' | 'free' | 'done';

/** The lease assumed for a record engine cannot read (another version's, or none). */
export const UNREAD_LEASE_MS = 10 * 60_000;

/**
 * `monotonicNow` is on the observation's clock; `wallNow` on this host's wall clock, compared
 * only with the record's renewal time.
 */
export function judgeClaim(
  record: LeaseRecord | null,
  observed: Observation,
  clocks: { monotonicNow: number; wallNow: number },
  me: Holder,
): ClaimJudgement {
  const unchangedFor = clocks.monotonicNow - observed.seenSince;
  // A record of another version or none: the ref's stillness alone decides, over a long lease.
  if (record === null) return unchangedFor >= 2 * UNREAD_LEASE_MS ? 'expired' : 'held';
  if (record.state === 'released') return 'free';
  if (record.state === 'done') return 'done';
  if (sameHolder(record.holder, me)) return 'mine';
  if (unchangedFor >= 2 * record.leaseMs) return 'expired';
  const renewalStale = clocks.wallNow - record.renewedAt >= record.leaseMs;
  return unchangedFor >= record.leaseMs && renewalStale ? 'expired' : 'held';
}

/** A random nonce for a record. */
export function newNonce(): string {
  return randomBytes(8).toString('hex');
}

/** The record a takeover writes: this holder, the attempt raised. */
export function takeoverOf(
  previous: LeaseRecord,
  me: Holder,
  now: number,
  claim?: ClaimFields,
): LeaseRecord {
  // A takeover for a new claim names that claim (its file, noun and agent's branch); one for a
  // requeue keeps the file and noun, and no branch (no agent of its runs).
  const rest: LeaseRecord = { ...previous };
  delete rest.branch;
  return {
    ...rest,
    ...claim,
    holder: me,
    attempt: previous.attempt + 1,
    renewedAt: now,
    state: 'held',
    nonce: newNonce(),
  };
}

/** What a claim names: the request's path on the shared branch, its noun, the agent's branch. */
export interface ClaimFields {
  file: string;
  noun: string;
  branch: string;
}
