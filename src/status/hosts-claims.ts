/**
 * The claims of every host for `engine status`, with `"claims": "git"` in the settings: the claim
 * refs as last fetched into the clone (`refs/engine/seen/<remote>/claims/`) and when, never a
 * fetch: status answers with no network on its path. Undefined in local mode, so that the report
 * there is what it always was.
 */
import { lastSeenClaims, viewOf, type ClaimView } from '../claims/claims-view.js';
import { messageOf } from '../errors.js';

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
