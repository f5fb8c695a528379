/**
 * The claims of every host as a person reads them (`engine claims list`, `engine status`): what
 * each claim ref's record says, and how old its last renewal is by the record's own clock. One
 * fetch cannot judge expiry (that takes a lease of watching the ref stay still, lease.ts), so a
 * view never says "expired": it says held or done, and the renewal's age, labelled as the
 * record's.
 *
 * The fetch time is kept beside the seen refs (git records none for a fetch that changed no
 * ref), so that `engine status` can say how old its view is without touching the network.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { gitOk } from '../process/run-git.js';
import {
  checkRemote,
  fetchClaims,
  lastFetchedClaims,
  type ClaimRemote,
  type SeenClaim,
} from './claim-refs.js';
import type { Holder, LeaseState } from './lease.js';

export interface ClaimView {
  item: string;
  commit: string;
  /** `unreadable`: a record engine cannot read (another version's); its fields are null. */
  state: LeaseState | 'unreadable';
  file: string | null;
  noun: string | null;
  holder: Holder | null;
  attempt: number | null;
  leaseMs: number | null;
  /** The record's renewal time, on the holder's clock (ISO). */
  renewedAt: string | null;
  /** This host's wall clock minus that time: an age by the record's own clock, no judgement. */
  renewedAgoMs: number | null;
}

/** A seen claim as a person reads it; pure. */
export function viewOf(claim: SeenClaim, wallNow: number): ClaimView {
  const r = claim.record;
  return {
    item: claim.item,
    commit: claim.commit,
    state: r?.state ?? 'unreadable',
    file: r?.file ?? null,
    noun: r?.noun ?? null,
    holder: r?.holder ?? null,
    attempt: r?.attempt ?? null,
    leaseMs: r?.leaseMs ?? null,
    renewedAt: r ? new Date(r.renewedAt).toISOString() : null,
    renewedAgoMs: r ? wallNow - r.renewedAt : null,
  };
}

/**
 * Held, or a record engine cannot read: a claim a person must not take from its holder without
 * saying so (`--force`). Its age is no evidence: the record's renewal time is on the holder's
 * clock, which may run behind ours, and one fetch cannot see a lease run out (lease.ts); pure.
 */
export function needsForce(claim: SeenClaim): boolean {
  return claim.record === null || claim.record.state === 'held';
}

/** What one look at the claims gave: the claims, and when they were fetched (null: unknown). */
export interface ClaimsSeen {
  remote: string;
  fetchedAt: string | null;
  claims: SeenClaim[];
}

/**
 * Fetches the claim refs (claim-refs fetchClaims) and records the fetch's time; null when the
 * remote could not be reached, never an empty list.
 */
export async function fetchClaimsSeen(where: ClaimRemote, now: Date): Promise<ClaimsSeen | null> {
  const claims = await fetchClaims(where);
  if (claims === null) return null;
  await stampFetch(where, now);
  return { remote: where.remote, fetchedAt: now.toISOString(), claims };
}

/** The claims as last fetched into this clone, with no network; null when none were fetched. */
export async function lastSeenClaims(where: ClaimRemote): Promise<ClaimsSeen | null> {
  checkRemote(where.remote);
  const claims = await lastFetchedClaims(where);
  const fetchedAt = await readStamp(where);
  if (fetchedAt === null && claims.length === 0) return null;
  return { remote: where.remote, fetchedAt, claims };
}

/** Each clone's common git directory, asked of git once: a daemon stamps every fetch. */
const commonDirs = new Map<string, string>();

/** The stamp's path: in the clone's common git directory, beside the refs it dates. */
async function stampPath(where: ClaimRemote): Promise<string> {
  let common = commonDirs.get(where.repo);
  if (common === undefined) {
    const dir = (await gitOk(where.repo, ['rev-parse', '--git-common-dir'])).trim();
    common = isAbsolute(dir) ? dir : join(where.repo, dir);
    commonDirs.set(where.repo, common);
  }
  return join(common, 'engine', `claims-fetched-${where.remote}`);
}

/** Writes the fetch's time by rename, so that a reader never sees half of it. */
export async function stampFetch(where: ClaimRemote, at: Date): Promise<void> {
  const path = await stampPath(where);
  await mkdir(join(path, '..'), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${at.toISOString()}\n`);
  await rename(temp, path);
}

async function readStamp(where: ClaimRemote): Promise<string | null> {
  const text = await readFile(await stampPath(where), 'utf8').catch(() => null);
  const at = text?.trim() ?? '';
  return Number.isNaN(Date.parse(at)) ? null : at;
}
