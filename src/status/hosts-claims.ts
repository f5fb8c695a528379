/**
 * The claims of every host for `engine status`, when engine.json says `"claims": "git"`: the claim
 * refs as last fetched into the clone (`refs/engine/seen/<remote>/claims/`) and when, never a
 * fetch: status answers with no network on its path. Undefined in local mode, so that the report
 * there is what it always was.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { claimsSetupOf, lastSeenClaims, viewOf, type ClaimView } from '../claims/claims-view.js';
import { messageOf } from '../errors.js';
import { ENGINE_JSON } from '../settings/setting-table.js';

export interface HostsClaims {
  remote: string;
  /** When the claims were last fetched (ISO); null: not known. */
  fetchedAt: string | null;
  claims: ClaimView[];
  /** Why no claims can be shown (none fetched yet, not a clone); else null. */
  error: string | null;
}

export async function hostsClaimsOf(root: string, now: Date): Promise<HostsClaims | undefined> {
  const text = await readFile(join(root, ENGINE_JSON), 'utf8').catch(() => null);
  const { mode, remote } = claimsSetupOf(text);
  if (mode === 'local') return undefined;
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
