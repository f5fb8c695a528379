/**
 * The claims of every host for `engine status`, with `"claims": "git"` in the settings: the claim
 * refs as last fetched into the clone (`refs/engine/seen/<remote>/claims/`) and when, never a
 * fetch: status answers with no network on its path. Undefined in local mode, so that the report
 * there is what it always was.
 */
import { lastSeenClaims, viewOf, type ClaimView } from '../claims/claims-view.js';
import { messageOf } from '../errors.js';
import type { ClaimItem } from './claim-item.js';

export interface HostsClaims {
  remote: string;
  /** When the claims were last fetched (ISO); null: not known. */
  fetchedAt: string | null;
  claims: ClaimView[];
  /** Why no claims can be shown (none fetched yet, not a clone); else null. */
  error: string | null;
}

/** `remote`: the settings' claimsRemote with git claims (load-settings hostsRemoteOf), else null. */
export async function hostsClaimsOf(
  root: string,
  now: Date,
  remote: string | null,
): Promise<HostsClaims | undefined> {
  if (remote === null) return undefined;
  const none = { remote, fetchedAt: null, claims: [] };
  try {
    const seen = await lastSeenClaims({ repo: root, remote });
    if (seen === null)
      return { ...none, error: 'none fetched yet (a daemon, or engine claims list, fetches them)' };
    const claims = seen.claims.map((c) => viewOf(c, now.getTime()));
    return { remote, fetchedAt: seen.fetchedAt, claims, error: null };
  } catch (error) {
    return { ...none, error: messageOf(error) };
  }
}

/**
 * A claim with no session record on this host, judged by the claims of every host: one whose lease
 * a host holds and renews runs there (its agent, its session record and its window are that
 * host's), so it is neither stale nor this host's to count against its caps. `held` names the
 * holder; a claim not so held is returned as it was. Pure.
 */
export function judgedByLease(claim: ClaimItem, hosts: HostsClaims | undefined): ClaimItem {
  if (hosts === undefined || claim.status !== null) return claim;
  const lease = hosts.claims.find(
    (v) =>
      v.state === 'held' &&
      v.noun === claim.noun &&
      v.file !== null &&
      (claim.file === v.file || claim.file.endsWith(`/${v.file}`)),
  );
  if (lease === undefined || lease.holder === null) return claim;
  const { renewedAgoMs, leaseMs } = lease;
  const renewed = renewedAgoMs === null ? '' : `, renewed ${Math.round(renewedAgoMs / 1000)} s ago`;
  const text = `held by ${lease.holder.host} (attempt ${lease.attempt ?? '?'}${renewed}, by the claims last fetched)`;
  if (renewedAgoMs !== null && leaseMs !== null && renewedAgoMs > leaseMs)
    return { ...claim, liveness: `${claim.liveness}; its lease, ${text}, ran out` };
  return {
    ...claim,
    alive: true,
    liveness: `runs on another host: ${text}`,
    held: lease.holder.host,
  };
}
