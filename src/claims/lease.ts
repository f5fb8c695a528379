/**
 * A claim of many hosts is a lease, held in one ref on the shared remote
 * (`refs/engine/claims/<item id>`) whose commit message is the lease record. This module is the
 * pure part: the record's text, and the judgement of a claim another host holds.
 *
 * Expiry is judged on the observer's own clock, never by comparing clocks across hosts: a
 * claim is expired for me only when I have seen its ref stay at the same commit for a whole
 * lease (the holder's renewals move the ref), AND its record's own renewal time, on the holder's
 * clock, is older than a lease on mine. A holder whose clock runs ahead only delays a takeover;
 * one whose clock runs behind is still protected by my own observation.
 */

/** Who holds a claim: the host, and this daemon's instance on this boot of it. */
export interface Holder {
  host: string;
  /** Random per daemon start: two daemons of one host never share a claim. */
  instance: string;
  /** The host's boot id: an instance name is never read across a reboot. */
  boot: string;
}

export type LeaseState = 'held' | 'done' | 'released';

export interface LeaseRecord {
  item: string;
  /** The request file's path in the shared branch when the lease was written. */
  file: string;
  noun: string;
  holder: Holder;
  /** Raised by each takeover: the fencing token every counted write carries. */
  attempt: number;
  /** How long the holder promises to renew within, in ms. */
  leaseMs: number;
  /** The holder's clock when it wrote this record (ms since the epoch). */
  renewedAt: number;
  state: LeaseState;
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
    (r.state === 'held' || r.state === 'done' || r.state === 'released')
  );
}

/** What this host saw of a claim ref: its commit, and since when (on this host's clock). */
export interface Observation {
  commit: string;
  seenSince: number;
}

/**
 * - `mine`: this daemon holds it.
 * - `held`: another holder's lease runs.
 * - `expired`: another holder's lease ran out on both counts above: it may be taken over.
 * - `free`: released, or the ref holds no record engine wrote: it may be taken over.
 * - `done`: its work is done; never claimed again.
 */
export type ClaimJudgement = 'mine' | 'held' | 'expired' | 'free' | 'done';

export function judgeClaim(
  record: LeaseRecord | null,
  observed: Observation,
  now: number,
  me: Holder,
): ClaimJudgement {
  if (record === null || record.state === 'released') return 'free';
  if (record.state === 'done') return 'done';
  if (sameHolder(record.holder, me)) return 'mine';
  const unchangedForALease = now - observed.seenSince >= record.leaseMs;
  const renewalStale = now - record.renewedAt >= record.leaseMs;
  return unchangedForALease && renewalStale ? 'expired' : 'held';
}

/** The record a takeover writes: this holder, the attempt raised. */
export function takeoverOf(previous: LeaseRecord, me: Holder, now: number): LeaseRecord {
  return { ...previous, holder: me, attempt: previous.attempt + 1, renewedAt: now, state: 'held' };
}
